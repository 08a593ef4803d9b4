//! Drives `pith --mode acp` over its real pipes with raw JSON-RPC 2.0 lines: requests with ids,
//! the `session/update` notifications, and the requests pith sends the client.
#![allow(dead_code)]

use serde_json::{Value, json};

use super::rpc::{Options, Pith};

/// A running `pith --mode acp` and the next request id.
pub struct Acp {
    /// The process and every line read so far.
    pub pith: Pith,
    next_id: u64,
}

impl Acp {
    /// Starts pith in ACP mode and initializes it with the client capabilities `capabilities`.
    pub async fn start(mut options: Options, capabilities: Value) -> Acp {
        options.mode = "acp";
        let mut acp = Acp {
            pith: Pith::spawn(options).await,
            next_id: 0,
        };
        let init = acp
            .request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        acp
    }

    /// Sends a request; returns its response (`result` or `error`), reading what comes before.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id).await
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.pith
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.pith
            .send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Reads until the response to request `id`.
    pub async fn response(&mut self, id: u64) -> Value {
        self.pith
            .wait_for(|f| f["id"] == id && f.get("method").is_none())
            .await
    }

    /// Reads until pith sends the client a request of `method`; returns it.
    pub async fn incoming(&mut self, method: &str) -> Value {
        self.pith
            .wait_for(|f| f["method"] == method && f.get("id").is_some())
            .await
    }

    /// Answers a request pith sent.
    pub async fn reply(&mut self, request: &Value, result: Value) {
        self.pith
            .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
            .await;
    }

    /// Reads until a `session/update` of `kind`; returns its `update`.
    pub async fn update(&mut self, kind: &str) -> Value {
        let frame = self
            .pith
            .wait_for(|f| {
                f["method"] == "session/update" && f["params"]["update"]["sessionUpdate"] == kind
            })
            .await;
        frame["params"]["update"].clone()
    }

    /// The `session/update`s of `kind` read so far.
    pub fn updates(&self, kind: &str) -> Vec<Value> {
        self.pith
            .frames
            .iter()
            .filter(|f| {
                f["method"] == "session/update" && f["params"]["update"]["sessionUpdate"] == kind
            })
            .map(|f| f["params"]["update"].clone())
            .collect()
    }

    /// Opens a session in pith's working directory; returns its id.
    pub async fn new_session(&mut self) -> String {
        let cwd = self.pith.work_dir();
        let created = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        created["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string()
    }

    /// Sends a text prompt and waits for its response.
    pub async fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .await
    }
}
