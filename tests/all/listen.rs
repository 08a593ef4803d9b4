//! `--listen` over real sockets: clients attach and re-attach to one agent, each gets every
//! event and its own responses, a dialog opened before a reconnect is answered after it, a TCP
//! client without the token is refused before anything it sends is processed, and a client
//! that stops reading is dropped with `lagged` while the run finishes on time.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::support;
use crate::support::rpc::{Options, Pith};

/// One client of the socket.
struct Client {
    lines: tokio::io::Lines<BufReader<Box<dyn AsyncRead + Unpin + Send>>>,
    write: Box<dyn AsyncWrite + Unpin + Send>,
    frames: Vec<Value>,
}

impl Client {
    async fn unix(path: &Path) -> Client {
        let stream = tokio::net::UnixStream::connect(path).await.unwrap();
        let (read, write) = stream.into_split();
        Client::from(Box::new(read), Box::new(write))
    }

    async fn tcp(port: u16) -> Client {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let (read, write) = stream.into_split();
        Client::from(Box::new(read), Box::new(write))
    }

    fn from(
        read: Box<dyn AsyncRead + Unpin + Send>,
        write: Box<dyn AsyncWrite + Unpin + Send>,
    ) -> Client {
        Client {
            lines: BufReader::new(read).lines(),
            write,
            frames: Vec::new(),
        }
    }

    async fn send(&mut self, frame: Value) {
        let mut line = frame.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next frame, `None` at the end of the stream.
    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("a frame within 20 s")
            .ok()??;
        let frame: Value = serde_json::from_str(&line).unwrap();
        self.frames.push(frame.clone());
        Some(frame)
    }

    async fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.next().await.expect("the stream goes on");
            if pred(&frame) {
                return frame;
            }
        }
    }

    async fn call(&mut self, id: &str, mut command: Value) -> Value {
        command["id"] = json!(id);
        self.send(command).await;
        self.wait_for(|f| f["type"] == "response" && f["id"] == id)
            .await
    }
}

/// Waits for the socket file pith creates.
async fn socket_at(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(Instant::now() < deadline, "no socket at {}", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// pith listening on a unix socket in its working directory's `run/` (created `0700`).
async fn listening(mut options: Options) -> (Pith, PathBuf) {
    let socket = tempfile::tempdir().unwrap().keep().join("run/pith.sock");
    options
        .args
        .extend(["--listen".into(), socket.display().to_string()]);
    let pith = Pith::spawn(options).await;
    socket_at(&socket).await;
    (pith, socket)
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_attach_mid_stream_and_one_leaving_does_not_stop_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let script = json!([{"text": "a long answer in many parts", "chunks": 60, "delay_ms": 20}]);
    let (_pith, socket) = listening(Options::faux(script)).await;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600, "only this user may connect");
    assert_eq!(mode(socket.parent().unwrap()), 0o700);

    let mut first = Client::unix(&socket).await;
    let attached = first.next().await.unwrap();
    assert_eq!(attached["type"], "attached", "{attached}");
    assert_eq!(attached["state"]["isStreaming"], false);
    first
        .call("1", json!({"type": "prompt", "message": "go"}))
        .await;
    first
        .wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;

    // A second client mid-stream: the snapshot says a run is on, then the stream goes on.
    let mut second = Client::unix(&socket).await;
    let attached = second.next().await.unwrap();
    assert_eq!(attached["type"], "attached");
    assert_eq!(attached["state"]["isStreaming"], true, "{attached}");
    assert_ne!(attached["clientId"], first.frames[0]["clientId"]);
    // The same command id from both: each gets its own answer.
    let mine = second.call("1", json!({"type": "get_state"})).await;
    assert_eq!(mine["command"], "get_state");
    assert!(
        !first
            .frames
            .iter()
            .any(|f| f["type"] == "response" && f["command"] == "get_state"),
        "another client's response is not sent to the first"
    );
    // The first leaves; the run goes on to its end for the second.
    drop(first);
    let end = second.wait_for(|f| f["type"] == "agent_end").await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "a long answer in many parts");
    second.wait_for(|f| f["type"] == "agent_settled").await;
    let entries = second.call("e", json!({"type": "get_entries"})).await;
    assert!(entries["data"]["entries"].as_array().unwrap().len() >= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_opened_before_a_reconnect_is_answered_after_it_once() {
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo allowed"}}]},
        {"text": "done"}
    ]);
    let plugins = support::plugins_dir_with(&["examples/permission-gate"]);
    let mut options = Options::faux(script);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let (_pith, socket) = listening(options).await;
    let mut first = Client::unix(&socket).await;
    first.next().await;
    first
        .call("p", json!({"type": "prompt", "message": "run it"}))
        .await;
    let asked = first
        .wait_for(|f| f["type"] == "extension_ui_request" && f["method"] == "confirm")
        .await;
    drop(first);

    let mut second = Client::unix(&socket).await;
    let attached = second.next().await.unwrap();
    assert_eq!(
        attached["pendingUiRequests"][0]["id"], asked["id"],
        "{attached}"
    );
    let resent = second.next().await.unwrap();
    assert_eq!(resent["type"], "extension_ui_request");
    assert_eq!(resent["id"], asked["id"], "re-sent with its original id");
    // A third client watches: it hears that the dialog was answered elsewhere.
    let mut third = Client::unix(&socket).await;
    third.next().await;
    second
        .send(json!({"type": "extension_ui_response", "id": asked["id"], "confirmed": true}))
        .await;
    let cancel = third
        .wait_for(|f| f["method"] == "cancel" && f["targetId"] == asked["id"])
        .await;
    assert_eq!(cancel["type"], "extension_ui_request");
    let end = second.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert_eq!(end["result"]["content"][0]["text"], "allowed\n", "{end}");
    // A late second answer is refused, to the one who sent it.
    third
        .send(json!({"type": "extension_ui_response", "id": asked["id"], "confirmed": false}))
        .await;
    let late = third
        .wait_for(|f| f["type"] == "response" && f["command"] == "extension_ui_response")
        .await;
    assert_eq!(late["success"], false, "{late}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tcp_clients_need_the_token_before_anything_is_processed() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-token\n").unwrap();
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut options = Options::faux(json!([{"text": "hi"}]));
    options.args.extend([
        "--listen".into(),
        format!("tcp:127.0.0.1:{port}"),
        "--rpc-token-file".into(),
        token_file.display().to_string(),
    ]);
    let _pith = Pith::spawn(options).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A command first: refused, not run.
    let mut rude = Client::tcp(port).await;
    rude.send(json!({"id": "x", "type": "prompt", "message": "sneak in"}))
        .await;
    let refused = rude.next().await.unwrap();
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"].as_str().unwrap().contains("hello"),
        "{refused}"
    );
    assert!(rude.next().await.is_none(), "then disconnected");
    // A wrong token: refused.
    let mut wrong = Client::tcp(port).await;
    wrong
        .send(json!({"type": "hello", "token": "s3cret-tokem"}))
        .await;
    let refused = wrong.next().await.unwrap();
    assert_eq!(refused["error"], "Wrong token (see --rpc-token-file)");
    assert!(wrong.next().await.is_none());
    // The right one: attached, and nothing the others sent ran.
    let mut client = Client::tcp(port).await;
    client
        .send(json!({"type": "hello", "token": "s3cret-token"}))
        .await;
    let attached = client.next().await.unwrap();
    assert_eq!(attached["type"], "attached", "{attached}");
    assert_eq!(attached["state"]["messageCount"], 0, "{attached}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_stops_reading_is_dropped_and_the_run_finishes() {
    // About 30 MB of deltas, paced so that a reading client keeps up: past the 16 MB a client
    // may leave unread.
    let script = json!([{"repeat": {"text": "x".repeat(50_000), "count": 600}, "delay_ms": 5}]);
    let (_pith, socket) = listening(Options::faux(script)).await;
    let mut reader = Client::unix(&socket).await;
    reader.next().await;
    // Attached, then never reads until the run is over.
    let stalled = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let started = Instant::now();
    reader
        .call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    reader.wait_for(|f| f["type"] == "agent_end").await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "the run took {took:?}");
    // Now it reads: what was queued before it fell behind, then `lagged`, then the end.
    let mut lines = BufReader::new(stalled).lines();
    let mut last = None;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        last = Some(line);
    }
    let last: Value = serde_json::from_str(&last.expect("some frames")).unwrap();
    assert_eq!(last["type"], "lagged", "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_tool_call_waiting_at_a_reconnect_is_answered_after_it() {
    let script = json!([
        {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"key": "k"}}]},
        {"text": "found it"}
    ]);
    let (_pith, socket) = listening(Options::faux(script)).await;
    let mut first = Client::unix(&socket).await;
    first.next().await;
    first
        .call(
            "t",
            json!({"type": "set_host_tools", "tools": [
                {"name": "lookup", "description": "Looks a key up", "parameters": {"type": "object"}}
            ]}),
        )
        .await;
    first
        .call("p", json!({"type": "prompt", "message": "look it up"}))
        .await;
    let call = first.wait_for(|f| f["type"] == "host_tool_call").await;
    drop(first);

    let mut second = Client::unix(&socket).await;
    let attached = second.next().await.unwrap();
    assert_eq!(
        attached["pendingHostToolCalls"][0]["id"], call["id"],
        "{attached}"
    );
    let resent = second.next().await.unwrap();
    assert_eq!(resent["type"], "host_tool_call");
    assert_eq!(resent["toolName"], "lookup");
    second
        .send(json!({"type": "host_tool_result", "id": call["id"],
            "result": {"content": [{"type": "text", "text": "value"}]}}))
        .await;
    let end = second.wait_for(|f| f["type"] == "agent_end").await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "found it");
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_ends_a_listening_pith_and_removes_its_socket() {
    let (mut pith, socket) = listening(Options::faux(json!([]))).await;
    let mut client = Client::unix(&socket).await;
    client.next().await;
    // A command without an id is answered to its sender only, without an id.
    let mut other = Client::unix(&socket).await;
    other.next().await;
    client.send(json!({"type": "get_state"})).await;
    let answer = client.wait_for(|f| f["type"] == "response").await;
    assert!(answer.get("id").is_none(), "{answer}");
    // An id that looks like pith's routing tag is refused.
    client
        .send(json!({"id": "\u{1}9\u{1}\"x\"", "type": "get_state"}))
        .await;
    let refused = client.wait_for(|f| f["type"] == "response").await;
    assert_eq!(refused["success"], false, "{refused}");
    let answer = client.call("s", json!({"type": "shutdown"})).await;
    assert_eq!(answer["success"], true);
    assert_eq!(pith.exit_code().await, Some(0));
    assert!(!socket.exists(), "the socket file is removed");
    assert!(
        !other.frames.iter().any(|f| f["type"] == "response"),
        "{:?}",
        other.frames
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_not_a_socket_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "keep me").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "--mode",
            "rpc",
            "--provider",
            "faux",
            "--model",
            "faux-model",
            "--no-session",
        ])
        .arg("--listen")
        .arg(&notes)
        .env("PITH_AGENT_DIR", dir.path().join("agent"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a socket"),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_whose_client_leaves_is_parked_after_its_grace_and_resumes() {
    let script = json!([{"text": "first"}, {"text": "second"}]);
    let (pith, socket) = listening(support::rpc::persistent(script, &[])).await;
    let work = pith.work_dir().canonicalize().unwrap();
    let mut first = Client::unix(&socket).await;
    first.next().await.unwrap();
    let opened = first
        .call(
            "o",
            json!({"type": "open_session", "sessionId": "kept", "cwd": work,
                   "parkOnDisconnectMs": 300}),
        )
        .await;
    assert_eq!(opened["success"], true, "{opened}");
    // Another session without the field stays open whoever leaves.
    first
        .call("o2", json!({"type": "open_session", "sessionId": "stays"}))
        .await;
    let answer = first
        .call(
            "p",
            json!({"type": "prompt", "sessionId": "kept", "message": "hi"}),
        )
        .await;
    assert_eq!(answer["sessionId"], "kept", "{answer}");
    first
        .wait_for(|f| f["type"] == "agent_end" && f["sessionId"] == "kept")
        .await;
    drop(first);

    let mut second = Client::unix(&socket).await;
    let attached = second.next().await.unwrap();
    assert_eq!(
        attached["openSessions"],
        json!(["kept", "stays"]),
        "{attached}"
    );
    let state_of = |listed: &Value, id: &str| {
        listed["data"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == id)
            .map(|s| s["state"].clone())
    };
    let listed = second
        .call("l1", json!({"type": "list_sessions", "scope": "host"}))
        .await;
    assert_eq!(
        state_of(&listed, "kept"),
        Some(json!("idle")),
        "within the grace: {listed}"
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    let listed = second
        .call("l2", json!({"type": "list_sessions", "scope": "host"}))
        .await;
    assert_eq!(state_of(&listed, "kept"), Some(json!("parked")), "{listed}");
    assert_eq!(state_of(&listed, "stays"), Some(json!("idle")), "{listed}");
    // Naming it resumes it, with its conversation (the scripted model answers by the number
    // of answers before: "second").
    second
        .call(
            "p2",
            json!({"type": "prompt", "sessionId": "kept", "message": "again"}),
        )
        .await;
    let end = second
        .wait_for(|f| f["type"] == "agent_end" && f["sessionId"] == "kept")
        .await;
    let texts: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["again", "second"], "{end}");
}
