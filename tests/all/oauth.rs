//! OAuth credentials from pi's `/login` over the real binary: an expired Claude subscription
//! token is refreshed against the token endpoint (a fake one on loopback), used with what such
//! tokens require (bearer, Claude Code's client headers, betas, identity line and tool names),
//! and written back to `auth.json` with the other entries kept; a failed refresh is a clear
//! error that says how to log in again, and nothing is sent to the model.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

/// A token endpoint on loopback answering every request with `status` and `body`; the request
/// bodies it received.
struct TokenServer {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl TokenServer {
    async fn start(status: u16, body: Value) -> TokenServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/oauth/token", listener.local_addr().unwrap());
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let seen = bodies.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then a body of content-length bytes.
                let (head_end, length) = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break (buffer.len(), 0);
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                    if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buffer[..at]).to_ascii_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse().ok())
                            .unwrap_or(0);
                        break (at + 4, length);
                    }
                };
                while buffer.len() < head_end + length {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                }
                let received = serde_json::from_slice(&buffer[head_end..]).unwrap_or(Value::Null);
                seen.lock().unwrap().push(received);
                let text = body.to_string();
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            }
        });
        TokenServer { url, bodies }
    }
}

/// pith on `anthropic/claude-sonnet-4-5` (its base URL the fake model's) with `auth` as
/// `auth.json` and the token endpoint at `token_url`.
async fn pith(llm: &FakeLlm, auth: &Value, token_url: &str) -> Pith {
    let models = json!({"providers": {"anthropic": {"baseUrl": llm.url}}});
    Pith::spawn(Options {
        args: ["--model", "anthropic/claude-sonnet-4-5", "--no-session"]
            .map(String::from)
            .to_vec(),
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            ("auth.json".into(), auth.to_string()),
        ],
        env: vec![("PITH_OAUTH_TOKEN_URL_ANTHROPIC".into(), token_url.into())],
        env_remove: vec!["ANTHROPIC_AUTH_TOKEN".into()],
        ..Options::default()
    })
    .await
}

fn expired_login() -> Value {
    json!({
        "anthropic": {"type": "oauth", "access": "sk-ant-oat01-old", "refresh": "refresh-1", "expires": 0},
        "openai": {"type": "api_key", "key": "sk-kept"}
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_subscription_token_is_refreshed_used_and_written_back() {
    let tokens = TokenServer::start(
        200,
        json!({"access_token": "sk-ant-oat01-new", "refresh_token": "refresh-2", "expires_in": 3600}),
    )
    .await;
    let llm = FakeLlm::start(json!([
        {"tool_calls": [{"id": "toolu_1", "name": "Bash", "arguments": {"command": "echo hi"}}]},
        {"text": "It printed hi."},
        {"text": "Again."}
    ]))
    .await;
    let mut pith = pith(&llm, &expired_login(), &tokens.url).await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    // Claude Code's `Bash` is the session's `bash`, and it ran.
    assert_eq!(end["messages"][2]["content"][0]["name"], "bash", "{end}");
    assert_eq!(end["messages"][3]["content"][0]["text"], "hi\n");

    let refreshes = tokens.bodies.lock().unwrap().clone();
    assert_eq!(
        refreshes,
        [
            json!({"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "refresh_token": "refresh-1"})
        ]
    );
    let requests = llm.requests();
    let first = &requests[0];
    assert_eq!(first["path"], "/v1/messages?beta=true");
    let headers = &first["headers"];
    assert_eq!(headers["authorization"], "Bearer sk-ant-oat01-new");
    assert!(headers.get("x-api-key").is_none());
    assert_eq!(headers["user-agent"], "claude-cli/2.1.322");
    assert_eq!(headers["x-app"], "cli");
    assert!(
        headers["anthropic-beta"]
            .as_str()
            .unwrap()
            .starts_with("claude-code-20250219,oauth-2025-04-20"),
        "{headers}"
    );
    let body = &first["body"];
    assert_eq!(
        body["system"][0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"Bash") && names.contains(&"Read"),
        "{names:?}"
    );
    // The history names the call as Claude Code does too.
    assert_eq!(
        requests[1]["body"]["messages"][1]["content"][0]["name"],
        "Bash"
    );

    // Written back, the other entries kept.
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(pith.dir.path().join("agent/auth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stored["anthropic"]["access"], "sk-ant-oat01-new");
    assert_eq!(stored["anthropic"]["refresh"], "refresh-2");
    assert!(stored["anthropic"]["expires"].as_i64().unwrap() > 0);
    assert_eq!(
        stored["openai"],
        json!({"type": "api_key", "key": "sk-kept"})
    );
    assert!(!pith.dir.path().join("agent/auth.json.lock").exists());

    // A fresh token is not refreshed again.
    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(tokens.bodies.lock().unwrap().len(), 1);
    assert_eq!(
        llm.requests()[2]["headers"]["authorization"],
        "Bearer sk-ant-oat01-new"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_refresh_says_how_to_log_in_again_and_sends_nothing() {
    let tokens = TokenServer::start(400, json!({"error": "invalid_grant"})).await;
    let llm = FakeLlm::start(json!([{"text": "never"}])).await;
    let mut pith = pith(&llm, &expired_login(), &tokens.url).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "error");
    let message = last["errorMessage"].as_str().unwrap();
    assert!(
        message.starts_with("OAuth refresh failed for anthropic: HTTP 400")
            && message.contains("invalid_grant")
            && message.ends_with("(log in again with pi's /login anthropic)"),
        "{message}"
    );
    assert!(llm.requests().is_empty(), "nothing reaches the model");
    let stored: Value = serde_json::from_str(
        &std::fs::read_to_string(pith.dir.path().join("agent/auth.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stored, expired_login(), "auth.json is left as it was");
}
