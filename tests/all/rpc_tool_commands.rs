//! The RPC commands around tools over the real pipes: host tools' round trip, updates, cancels
//! and timeouts, plugin tool calls, steering that skips an answer's tool calls, and
//! `bash`/`abort_bash`.

use crate::rpc_commands::assert_error;
use crate::support;

use crate::support::rpc::{Options, Pith};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn host_tools_round_trip_update_cancel_and_timeout() {
    let script = json!([
        {"tool_calls": [{"id": "call_1", "name": "echo_host", "arguments": {"message": "hello"}}]},
        {"text": "done"},
        {"tool_calls": [{"id": "call_2", "name": "slow_host", "arguments": {}}]},
        {"text": "after timeout"}
    ]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let bad = pith.call("bad", json!({"type": "set_host_tools", "tools": [{"name": "x", "description": "", "parameters": {}}]})).await;
    assert_error(
        &bad,
        "set_host_tools",
        "bad",
        "Host tool \"x\" must provide a non-empty description",
    );
    let registered = pith
        .call(
            "r",
            json!({"type": "set_host_tools", "tools": [
                {"name": "echo_host", "description": "Echo", "parameters": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
                {"name": "slow_host", "description": "Never answers", "parameters": {"type": "object"}, "timeoutMs": 300}
            ]}),
        )
        .await;
    assert_eq!(
        registered["data"],
        json!({"toolNames": ["echo_host", "slow_host"]})
    );

    pith.call(
        "p",
        json!({"type": "prompt", "message": "use the host tool"}),
    )
    .await;
    let call = pith.wait_for(|f| f["type"] == "host_tool_call").await;
    assert_eq!(
        call,
        json!({"type": "host_tool_call", "id": "host_1", "toolCallId": "call_1", "toolName": "echo_host", "arguments": {"message": "hello"}})
    );
    pith.send(json!({"type": "host_tool_update", "id": "host_1", "partialResult": {"content": [{"type": "text", "text": "working"}]}})).await;
    let update = pith
        .wait_for(|f| f["type"] == "tool_execution_update")
        .await;
    assert_eq!(
        update["partialResult"],
        json!({"content": [{"type": "text", "text": "working"}]})
    );
    pith.send(json!({"type": "host_tool_result", "id": "host_1", "result": {"content": [{"type": "text", "text": "hello back"}]}})).await;
    let mut end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert!(end["durationMs"].as_u64().is_some(), "{end}");
    end["durationMs"] = json!(0);
    assert_eq!(
        end,
        json!({"type": "tool_execution_end", "toolCallId": "call_1", "toolName": "echo_host", "result": {"content": [{"type": "text", "text": "hello back"}]}, "isError": false, "durationMs": 0})
    );
    pith.until_agent_end().await;
    // A late or unknown result is ignored, with no frame.
    pith.send(json!({"type": "host_tool_result", "id": "host_1", "result": {"content": []}}))
        .await;
    pith.send(json!({"type": "host_tool_result", "id": "nope", "result": {"content": []}}))
        .await;

    // A silent host times out into a tool error and a cancel frame.
    pith.call("p2", json!({"type": "prompt", "message": "slow"}))
        .await;
    let call = pith.wait_for(|f| f["type"] == "host_tool_call").await;
    assert_eq!(call["id"], "host_2");
    let cancel = pith.wait_for(|f| f["type"] == "host_tool_cancel").await;
    assert_eq!(
        cancel,
        json!({"type": "host_tool_cancel", "id": "host_cancel_1", "targetId": "host_2"})
    );
    let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert_eq!(end["isError"], true);
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Host tool \"slow_host\" timed out after 300 ms"
    );
    pith.until_agent_end().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_cancels_a_host_tool_and_eof_fails_pending_calls() {
    let script = json!([{"tool_calls": [{"id": "c1", "name": "wait_host", "arguments": {}}]}, {"text": "x"}]);
    let mut pith = Pith::spawn(Options::faux(script.clone())).await;
    pith.call("r", json!({"type": "set_host_tools", "tools": [{"name": "wait_host", "description": "Waits", "parameters": {"type": "object"}}]})).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["type"] == "host_tool_call").await;
    pith.send(json!({"id": "a", "type": "abort"})).await;
    let cancel = pith.wait_for(|f| f["type"] == "host_tool_cancel").await;
    assert_eq!(cancel["targetId"], "host_1");
    let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Host tool \"wait_host\" was aborted"
    );
    pith.response("a").await;
    let last = pith
        .frames
        .iter()
        .rev()
        .find(|f| f["type"] == "message_end")
        .unwrap();
    assert_eq!(last["message"]["stopReason"], "aborted");

    let mut pith = Pith::spawn(Options::faux(script)).await;
    pith.call("r", json!({"type": "set_host_tools", "tools": [{"name": "wait_host", "description": "Waits", "parameters": {"type": "object"}}]})).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["type"] == "host_tool_call").await;
    pith.close_stdin();
    let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    assert_eq!(
        end["result"]["content"][0]["text"],
        "Host tool \"wait_host\" failed: the host closed its input"
    );
    pith.until_agent_end().await;
    assert_eq!(pith.exit_code().await, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn plugin_tool_calls_with_immediate_failures_first() {
    let plugins = tempfile::tempdir().unwrap();
    let crate_dir = support::repo_root().join("plugins/examples/word-count");
    std::fs::copy(
        support::built_component("word-count"),
        plugins.path().join("word_count.wasm"),
    )
    .unwrap();
    std::fs::copy(
        crate_dir.join("pith.toml"),
        plugins.path().join("word_count.toml"),
    )
    .unwrap();
    let script = json!([
        {"tool_calls": [{"id": "w1", "name": "word_count", "arguments": {"path": "notes.txt"}}, {"id": "w2", "name": "nope", "arguments": {}}, {"id": "w3", "name": "word_count", "arguments": {}}]},
        {"text": "counted"}
    ]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(script)
    })
    .await;
    std::fs::write(pith.work_dir().join("notes.txt"), "a b c\n").unwrap();
    pith.call("p", json!({"type": "prompt", "message": "count"}))
        .await;
    let end = pith.until_agent_end().await;
    let results = support::rpc::tool_results(&end);
    assert_eq!(results.len(), 3);
    // Immediate failures come first, then executed calls in order.
    assert_eq!(results[0]["toolCallId"], "w2");
    assert_eq!(results[0]["content"][0]["text"], "Tool nope not found");
    assert_eq!(results[1]["toolCallId"], "w3");
    assert!(
        results[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Validation failed for tool \"word_count\":\n  - path: missing")
    );
    assert_eq!(
        results[2]["content"][0]["text"],
        "1 lines, 3 words, 6 bytes"
    );
    assert_eq!(results[2]["isError"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn steering_during_the_answer_skips_its_tool_calls() {
    let script = json!([
        {"text": "working on it", "chunks": 6, "delay_ms": 60, "tool_calls": [{"id": "h1", "name": "echo_host", "arguments": {}}, {"id": "h2", "name": "echo_host", "arguments": {}}]},
        {"text": "steered"}
    ]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    pith.call("r", json!({"type": "set_host_tools", "tools": [{"name": "echo_host", "description": "Echo", "parameters": {"type": "object"}}]})).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    pith.call("s", json!({"type": "steer", "message": "stop that"}))
        .await;
    let end = pith.until_agent_end().await;
    assert!(
        !pith.frames.iter().any(|f| f["type"] == "host_tool_call"),
        "no call reached the host"
    );
    let kinds: Vec<String> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match m["role"].as_str().unwrap() {
            "toolResult" => format!("toolResult:{}", m["content"][0]["text"].as_str().unwrap()),
            "user" => format!("user:{}", m["content"][0]["text"].as_str().unwrap()),
            role => role.to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "system",
            "user:go",
            "assistant",
            "toolResult:Skipped due to queued user message.",
            "toolResult:Skipped due to queued user message.",
            "user:stop that",
            "assistant"
        ]
    );
    let starts = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_start")
        .count();
    assert_eq!(starts, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_command_truncates_strips_ansi_and_spills_to_a_file() {
    let mut pith = Pith::spawn(Options::default()).await;
    assert_error(
        &pith.call("b0", json!({"type": "bash"})).await,
        "bash",
        "b0",
        "Missing required field \"command\"",
    );
    let colored = pith
        .call(
            "b1",
            json!({"type": "bash", "command": "printf '\\033[31mred\\033[0m\\r\\n'"}),
        )
        .await;
    assert_eq!(
        colored["data"],
        json!({"output": "red\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    let big = pith
        .call("b2", json!({"type": "bash", "command": "seq 1 30000"}))
        .await;
    let data = &big["data"];
    assert_eq!(data["truncated"], true);
    assert_eq!(data["exitCode"], 0);
    let output = data["output"].as_str().unwrap();
    assert!(
        // pi's executor cuts with the same `truncateTail`: a final newline is no line of its own.
        output.ends_with("29999\n30000"),
        "{}",
        &output[output.len() - 40..]
    );
    assert!(output.len() <= 50 * 1024);
    let path = data["fullOutputPath"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.starts_with("1\n2\n3\n") && full.ends_with("30000\n"));
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let records = messages["data"]["messages"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["role"], "bashExecution");
    assert_eq!(records[1]["fullOutputPath"], path);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_bash_kills_the_process_tree_at_once() {
    let mut pith = Pith::spawn(Options::default()).await;
    let pids = pith.work_dir().join("pids");
    let command = format!(
        "sleep 30 & echo $! > {p}; echo $$ >> {p}; sleep 30",
        p = pids.display()
    );
    pith.send(json!({"id": "b", "type": "bash", "command": command}))
        .await;
    while std::fs::read_to_string(&pids)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 2
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let list: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let alive = |pid: &i32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    assert!(list.iter().all(alive));
    let aborted = std::time::Instant::now();
    pith.send(json!({"id": "a", "type": "abort_bash"})).await;
    while list.iter().any(alive) && aborted.elapsed() < std::time::Duration::from_secs(2) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // A kill is one signal to the group; the bound leaves room for a loaded CI machine
    // (the time itself is measured in the benches, not here).
    assert!(!list.iter().any(alive), "the tree outlived the abort");
    assert!(
        aborted.elapsed() < std::time::Duration::from_secs(1),
        "took {:?}",
        aborted.elapsed()
    );
    let result = pith.response("b").await;
    assert_eq!(result["data"]["cancelled"], true);
    assert!(result["data"].get("exitCode").is_none());
}
