//! MCP servers over their life, through the real binary: an aborted call (the server told with
//! `notifications/cancelled`), a crash mid-call and the reconnect on the next call, a server
//! that never answers `initialize` (the others unaffected), a changed tool list, an image, the
//! streamable HTTP transport, a legacy SSE server named as one, `tool_search` over deferred
//! tools, and no server process left once pith exits.

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{everything, node, python_server};
use crate::support::rpc::{Options, Pith};

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}]})
}

/// pith with the Python SDK server as `py` (direct, `timeout` seconds) and `extra` servers.
fn with_python(script: Value, timeout: f64, extra: Value) -> Options {
    let (python, server) = python_server();
    let mut servers = json!({"py": {"command": python, "args": [server], "exposure": "direct",
        "timeout": timeout, "env": {"PITH_TEST_MARKS": "."}}});
    if let (Some(all), Some(more)) = (servers.as_object_mut(), extra.as_object()) {
        all.extend(more.clone());
    }
    let mut options = Options::faux(script);
    options.agent_files.push((
        "mcp.json".into(),
        json!({"mcpServers": servers}).to_string(),
    ));
    options
}

fn ends(pith: &Pith) -> Vec<Value> {
    pith.frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .cloned()
        .collect()
}

fn first_text(end: &Value) -> String {
    end["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// `/mcp`'s status text.
async fn status(pith: &mut Pith) -> String {
    let from = pith.frames.len();
    pith.call("status", json!({"type": "prompt", "message": "/mcp"}))
        .await;
    let found = pith
        .since(from)
        .iter()
        .find(|f| f["method"] == "notify")
        .cloned();
    let notice = match found {
        Some(notice) => notice,
        None => pith.wait_for(|f| f["method"] == "notify").await,
    };
    notice["message"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aborted_call_is_cancelled_on_the_server() {
    let mut pith = Pith::spawn(with_python(
        json!([call("c1", "mcp__py__slow", json!({"seconds": 60})), {"text": "after"}]),
        60.0,
        json!({}),
    ))
    .await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let update = pith
        .wait_for(|f| f["type"] == "tool_execution_update")
        .await;
    assert_eq!(update["partialResult"]["content"][0]["text"], "step 1");
    assert_eq!(
        update["partialResult"]["details"],
        json!({"server": "py", "tool": "slow"})
    );
    pith.call("a", json!({"type": "abort"})).await;
    let end = ends(&pith).pop().expect("the call ended");
    assert_eq!(first_text(&end), "MCP request aborted");
    assert_eq!(end["isError"], true);
    // The server heard of it: its tool was cancelled.
    let mark = pith.work_dir().join("cancelled");
    for _ in 0..50 {
        if mark.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(mark.exists(), "the server's call was not cancelled");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_mid_call_then_the_next_call_reconnects() {
    let script = json!([
        call("c1", "mcp__py__crash", json!({})),
        {"text": "it crashed"},
        call("c2", "mcp__py__get_env", json!({"name": "HOME"})),
        {"text": "back"}
    ]);
    let mut pith = Pith::spawn(with_python(script, 20.0, json!({}))).await;
    pith.call("p", json!({"type": "prompt", "message": "crash"}))
        .await;
    pith.until_agent_end().await;
    let crashed = ends(&pith).pop().unwrap();
    assert_eq!(first_text(&crashed), "MCP connection closed");
    assert_eq!(crashed["result"]["details"], json!({}));
    let shown = status(&mut pith).await;
    assert!(
        shown.starts_with(
            "py: disconnected, reconnects on next call (direct)\n    Connection closed\n    crashing on purpose"
        ),
        "{shown}"
    );
    pith.call("q", json!({"type": "prompt", "message": "again"}))
        .await;
    pith.until_agent_end().await;
    let again = ends(&pith).pop().unwrap();
    assert_eq!(again["isError"], false, "{again}");
    assert!(status(&mut pith).await.starts_with("py: connected, "));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_leaves_the_others_working() {
    let extra = json!({"hang": {"command": "sleep", "args": ["600.4242"], "exposure": "direct", "timeout": 2}});
    let script = json!([call("c1", "mcp__py__get_env", json!({"name": "NOPE"})), {"text": "ok"}]);
    let mut pith = Pith::spawn(with_python(script, 20.0, extra)).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(first_text(&ends(&pith)[0]), "(unset)");
    let report = pith
        .frames
        .iter()
        .find(|f| f["method"] == "notify" && f["notifyType"] == "warning")
        .cloned()
        .expect("the startup report");
    assert_eq!(
        report["message"],
        "MCP servers need attention:\n  hang: failed: MCP request timed out after 2000ms\nRun /mcp to fix."
    );
    let shown = status(&mut pith).await;
    assert!(
        shown.contains("hang: failed (direct)\n    MCP request timed out after 2000ms"),
        "{shown}"
    );
    // No server process outlives pith.
    pith.close_stdin();
    assert_eq!(pith.exit_code().await, Some(0));
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 600.4242"])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "left running: {:?}", left);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_list_and_an_image() {
    let script = json!([
        call("c1", "mcp__py__add_tool", json!({})),
        call("c2", "mcp__py__image", json!({})),
        call("c3", "mcp__py__late_tool", json!({})),
        {"text": "done"}
    ]);
    let mut pith = Pith::spawn(with_python(script, 20.0, json!({}))).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    let ends = ends(&pith);
    assert_eq!(first_text(&ends[0]), "added");
    let image = &ends[1]["result"]["content"][0];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    assert_eq!(first_text(&ends[2]), "late", "{}", ends[2]);
    // The new tool was recorded at a turn's start, as pi records it.
    let added: Vec<String> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "system")
        .skip(1)
        .flat_map(|f| {
            f["message"]["toolsAdded"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(added, ["mcp__py__late_tool"]);
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// server-everything over HTTP (`streamableHttp` or the legacy `sse`) on a free port.
async fn everything_over_http(mode: &str) -> (tokio::process::Child, u16) {
    let port = free_port();
    let child = tokio::process::Command::new(node())
        .args([everything(), mode.to_string()])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, port)
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_and_a_legacy_sse_server_named_as_one() {
    let (_http, http_port) = everything_over_http("streamableHttp").await;
    let (_sse, sse_port) = everything_over_http("sse").await;
    let mut options = Options::faux(json!([
        call("c1", "mcp__web__echo", json!({"message": "over http"})),
        {"text": "done"}
    ]));
    options.agent_files.push((
        "mcp.json".into(),
        json!({"mcpServers": {
            "web": {"url": format!("http://127.0.0.1:{http_port}/mcp"), "exposure": "direct",
                    "headers": {"X-From": "${HOME}"}},
            "old": {"url": format!("http://127.0.0.1:{sse_port}/sse"), "exposure": "direct"},
        }})
        .to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(first_text(&ends(&pith)[0]), "Echo: over http");
    let shown = status(&mut pith).await;
    assert!(
        shown.starts_with("web: connected, 14 tools (direct)"),
        "{shown}"
    );
    assert!(
        shown.contains("old: failed (direct)\n    this server uses the legacy SSE transport"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deferred_tools_are_found_and_loaded_with_tool_search() {
    let mut options = Options::faux(json!([
        call("c1", "tool_search", json!({"query": "sum of two numbers", "limit": 1})),
        call("c2", "mcp__everything__get_sum", json!({"a": 2, "b": 3})),
        {"text": "five"}
    ]));
    options.agent_files.push((
        "mcp.json".into(),
        json!({"mcpServers": {"everything": {"command": node(), "args": [everything(), "stdio"],
            "exposure": "deferred"}}})
        .to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "add"}))
        .await;
    pith.until_agent_end().await;
    let ends = ends(&pith);
    assert_eq!(
        first_text(&ends[0]),
        "Loaded 1 tool. They are available from your next call:\n- mcp__everything__get_sum: Returns the sum of two numbers"
    );
    assert_eq!(
        ends[0]["result"]["details"],
        json!({"loaded": ["mcp__everything__get_sum"]})
    );
    assert!(first_text(&ends[1]).contains('5'), "{}", ends[1]);
    // The first system message declared tool_search and no server tool; the next turn's, the
    // loaded tool.
    let systems: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "system")
        .collect();
    let names = |f: &Value| -> Vec<String> {
        f["message"]["toolsAdded"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .filter(|n| n.starts_with("mcp__") || n == "tool_search")
            .collect()
    };
    assert_eq!(names(systems[0]), ["tool_search"]);
    // The model is told which servers' tools it can load (pi's `mcp_servers` section).
    assert_eq!(
        systems[0]["message"]["sections"]["mcp_servers"],
        "<mcp_servers>\nMCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n- mcp__everything (tool_search)\n</mcp_servers>"
    );
    assert_eq!(names(systems[1]), ["mcp__everything__get_sum"]);
}

/// A changed `mcp.json` applies without a restart: the server added to the file is connected
/// and its tools offered on the next prompt; `reload` answers what it found.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_mcp_json_applies_without_a_restart() {
    let mut options = Options::faux(json!([
        call("c1", "mcp__later__echo", json!({"message": "added"})),
        {"text": "done"}
    ]));
    options
        .agent_files
        .push(("mcp.json".into(), json!({"mcpServers": {}}).to_string()));
    let mut pith = Pith::spawn(options).await;
    let file = pith.dir.path().join("agent/mcp.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"later": {"command": node(), "args": [everything(), "stdio"],
            "exposure": "direct"}}})
        .to_string(),
    )
    .unwrap();
    // The watcher picks it up; `reload` then finds nothing more to change.
    let mut shown = String::new();
    for _ in 0..50 {
        shown = status(&mut pith).await;
        if shown.starts_with("later: connected") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        shown.starts_with("later: connected, 14 tools (direct)"),
        "{shown}"
    );
    let reloaded = pith.call("r", json!({"type": "reload"})).await;
    assert_eq!(reloaded["data"]["mcp"]["changed"], false, "{reloaded}");
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(first_text(&ends(&pith)[0]), "Echo: added");
}
