//! Liveness for hosts: `ping` answers at once with the uptime and whether a run is active, and
//! `shutdown` ends the run, answers, flushes and exits 0 without stdin closing (hosts such as
//! Erlang ports cannot close it).

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::rpc::{Options, Pith};

#[tokio::test(flavor = "multi_thread")]
async fn ping_and_shutdown() {
    let script = json!([{"text": "a long answer", "chunks": 200, "delay_ms": 20}]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let idle = pith.call("p0", json!({"type": "ping"})).await;
    assert_eq!(idle["data"]["pong"], true, "{idle}");
    assert_eq!(idle["data"]["runActive"], false);
    assert!(idle["data"]["uptimeMs"].as_u64().is_some());
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    let busy = pith.call("p1", json!({"type": "ping"})).await;
    assert_eq!(busy["data"]["runActive"], true, "{busy}");
    // stdin stays open (held here): shutdown alone ends the process.
    let mut stdin = pith.take_stdin();
    stdin
        .write_all(b"{\"id\":\"s\",\"type\":\"shutdown\"}\n")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let done = pith.response("s").await;
    assert_eq!(done["success"], true, "{done}");
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "agent_end")
        .cloned()
        .expect("the run ended before the answer");
    assert_eq!(
        end["messages"].as_array().unwrap().last().unwrap()["stopReason"],
        "aborted"
    );
    while pith.next_frame().await.is_some() {}
    assert_eq!(pith.exit_code().await, Some(0));
    drop(stdin);
}

/// `tools.byName.<tool>.timeoutMs` (and `tools.timeoutMs` for every tool) stops a hung tool:
/// the call ends as an error that keeps what the tool printed and names the setting, its
/// processes are killed, and the run goes on to its end.
#[tokio::test(flavor = "multi_thread")]
async fn a_hung_tool_ends_at_its_timeout() {
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo started; sleep 30; echo never"}}]},
        {"text": "went on"}
    ]);
    let mut options = Options::faux(script);
    options.agent_files.push((
        "settings.json".into(),
        json!({"tools": {"timeoutMs": 60000, "byName": {"bash": {"timeoutMs": 700}}}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    let started = std::time::Instant::now();
    pith.call("p", json!({"type": "prompt", "message": "hang"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "stopped long before the command's 30 s"
    );
    assert_eq!(end["isError"], true, "{end}");
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("started"), "{text}");
    assert!(
        text.ends_with("Tool bash timed out after 0.7 s and was stopped (settings tools.byName.bash.timeoutMs)."),
        "{text}"
    );
    assert_eq!(end["result"]["details"]["timedOut"], true);
    let done = pith.until_agent_end().await;
    let last = done["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "went on");
}
