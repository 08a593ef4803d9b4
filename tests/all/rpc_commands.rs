//! Each RPC command over the real pipes: its success shape and its failure shape.

use crate::support;

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

fn slow_script() -> Value {
    json!({"turns": [{"text": "a slow answer that takes a while to stream", "chunks": 20, "delay_ms": 50}, {"text": "second"}, {"text": "third"}]})
}

fn assert_error(frame: &Value, command: &str, id: &str, error: &str) {
    assert_eq!(
        frame,
        &json!({"id": id, "type": "response", "command": command, "success": false, "error": error})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn prompt_success_and_failures() {
    let mut pith = Pith::spawn(Options::faux(slow_script())).await;
    let missing = pith.call("p0", json!({"type": "prompt"})).await;
    assert_error(
        &missing,
        "prompt",
        "p0",
        "Missing required field \"message\"",
    );
    let wrong = pith
        .call("p0b", json!({"type": "prompt", "message": 5}))
        .await;
    assert_error(
        &wrong,
        "prompt",
        "p0b",
        "Field \"message\" must be a string, got a number",
    );
    let bad_images = pith
        .call(
            "p0c",
            json!({"type": "prompt", "message": "x", "images": [{"type": "image"}]}),
        )
        .await;
    assert_error(
        &bad_images,
        "prompt",
        "p0c",
        "Field \"images[0]\" must be {\"type\":\"image\",\"data\":<base64>,\"mimeType\":<string>}",
    );

    let ok = pith.call("p1", json!({"type": "prompt", "message": "hello", "images": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]})).await;
    assert_eq!(
        ok,
        json!({"id": "p1", "type": "response", "command": "prompt", "success": true, "data": {"disposition": "started"}})
    );
    let user = pith
        .wait_for(|f| f["type"] == "message_start" && f["message"]["role"] == "user")
        .await;
    assert_eq!(
        user["message"]["content"],
        json!([{"type": "text", "text": "hello"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}])
    );
    let busy = pith
        .call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    assert_error(
        &busy,
        "prompt",
        "p2",
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
    );
    pith.until_agent_end().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prompt_without_a_model_says_how_to_configure_one() {
    let mut pith = Pith::spawn(Options {
        args: vec!["--no-session".into()],
        ..Options::default()
    })
    .await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"], Value::Null);
    let frame = pith
        .call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    assert_eq!(frame["success"], false);
    assert!(
        frame["error"]
            .as_str()
            .unwrap()
            .starts_with("No model available. Set an API key"),
        "{frame}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn steer_and_follow_up_queue_and_report() {
    let mut pith = Pith::spawn(Options::faux(slow_script())).await;
    let queued = pith
        .call("s1", json!({"type": "steer", "message": "while idle"}))
        .await;
    assert_eq!(
        queued,
        json!({"id": "s1", "type": "response", "command": "steer", "success": true, "data": {"disposition": "queued"}})
    );
    assert_eq!(
        pith.frames[pith.frames.len() - 2],
        json!({"type": "queue_update", "steering": ["while idle"], "followUp": []})
    );
    let follow = pith
        .call("f1", json!({"type": "follow_up", "message": "later"}))
        .await;
    assert_eq!(follow["success"], true);
    let state = pith.call("st", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["pendingMessageCount"], 2);
    assert_error(
        &pith.call("s2", json!({"type": "steer"})).await,
        "steer",
        "s2",
        "Missing required field \"message\"",
    );
    assert_error(
        &pith
            .call("f2", json!({"type": "follow_up", "message": []}))
            .await,
        "follow_up",
        "f2",
        "Field \"message\" must be a string, got an array",
    );

    // The steering queued while idle is delivered right after the prompt, the follow-up at the end.
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.until_agent_end().await;
    let texts: Vec<String> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"][0]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, vec!["go", "while idle", "later"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_when_idle_and_abort_and_prompt() {
    let mut pith = Pith::spawn(Options::faux(slow_script())).await;
    assert_eq!(
        pith.call("a0", json!({"type": "abort"})).await,
        json!({"id": "a0", "type": "response", "command": "abort", "success": true})
    );
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    let replaced = pith
        .call(
            "ap",
            json!({"type": "abort_and_prompt", "message": "instead"}),
        )
        .await;
    assert_eq!(
        replaced,
        json!({"id": "ap", "type": "response", "command": "abort_and_prompt", "success": true, "data": {"disposition": "started"}})
    );
    let aborted = pith
        .frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["stopReason"] == "aborted")
        .cloned();
    assert_eq!(
        aborted.unwrap()["message"]["errorMessage"],
        "This operation was aborted"
    );
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][0]["content"][0]["text"], "instead");
    assert_error(
        &pith.call("ap2", json!({"type": "abort_and_prompt"})).await,
        "abort_and_prompt",
        "ap2",
        "Missing required field \"message\"",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn state_messages_stats_and_last_text() {
    let mut pith = Pith::spawn(Options::faux(json!([{"text": "  the answer  ", "usage": {"input": 10, "output": 5, "cache_read": 2, "cache_write": 1}}]))).await;
    let empty = pith
        .call("l0", json!({"type": "get_last_assistant_text"}))
        .await;
    assert_eq!(empty["data"], json!({}));
    pith.call("p", json!({"type": "prompt", "message": "q"}))
        .await;
    pith.until_agent_end().await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let keys: Vec<&str> = state["data"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "thinkingLevel",
            "isStreaming",
            "isCompacting",
            "steeringMode",
            "followUpMode",
            "interruptMode",
            "sessionId",
            "autoCompactionEnabled",
            "messageCount",
            "pendingMessageCount",
            "queuedMessageCount",
            "todoPhases",
            "queueMode",
            "sandbox",
            "project"
        ]
    );
    // pi 1.5 counts the system message.
    assert_eq!(state["data"]["messageCount"], 3);
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    assert_eq!(messages["data"]["messages"].as_array().unwrap().len(), 3);
    let stats = pith.call("st", json!({"type": "get_session_stats"})).await;
    assert_eq!(
        stats["data"]["tokens"],
        json!({"input": 10, "output": 5, "cacheRead": 2, "cacheWrite": 1, "total": 18})
    );
    assert_eq!(stats["data"]["userMessages"], 1);
    assert_eq!(stats["data"]["assistantMessages"], 1);
    let last = pith
        .call("l", json!({"type": "get_last_assistant_text"}))
        .await;
    assert_eq!(last["data"], json!({"text": "the answer"}));
    let forks = pith.call("fm", json!({"type": "get_fork_messages"})).await;
    let entries = forks["data"]["messages"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["text"], "q");
    assert_eq!(entries[0]["entryId"].as_str().unwrap().len(), 8);
    let branch = pith
        .call("bm", json!({"type": "get_branch_messages"}))
        .await;
    // The fork's alias; each item also has pi 0.16's `entryIndex`.
    let mut expected = forks["data"].clone();
    expected["messages"][0]["entryIndex"] = json!(1);
    assert_eq!(branch["data"], expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn model_commands() {
    // With a script, both faux models are available.
    let mut pith = Pith::spawn(Options::faux(json!([]))).await;
    let models = pith
        .call("am", json!({"type": "get_available_models"}))
        .await;
    let ids: Vec<&str> = models["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["faux-model", "faux-reasoner"]);
    assert_error(
        &pith
            .call(
                "bad",
                json!({"type": "set_model", "provider": "nope", "modelId": "x"}),
            )
            .await,
        "set_model",
        "bad",
        "Model not found: nope/x",
    );
    assert_error(
        &pith
            .call("bad2", json!({"type": "set_model", "provider": "faux"}))
            .await,
        "set_model",
        "bad2",
        "Missing required field \"modelId\"",
    );
    let set = pith
        .call(
            "ok",
            json!({"type": "set_model", "provider": "faux", "modelId": "faux-reasoner"}),
        )
        .await;
    assert_eq!(set["data"]["id"], "faux-reasoner");
    // set_model keeps the level (clamped): it was off for the non-reasoning model.
    assert_eq!(
        pith.call("s0", json!({"type": "get_state"})).await["data"]["thinkingLevel"],
        "off"
    );
    let cycled = pith
        .call("cy", json!({"type": "cycle_thinking_level"}))
        .await;
    assert_eq!(cycled["data"], json!({"level": "minimal"}));
    assert_eq!(
        pith.frames[pith.frames.len() - 2],
        json!({"type": "thinking_level_changed", "level": "minimal"})
    );
    pith.call(
        "tl",
        json!({"type": "set_thinking_level", "level": "xhigh"}),
    )
    .await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["thinkingLevel"], "high");
    assert_error(
        &pith
            .call("tl2", json!({"type": "set_thinking_level"}))
            .await,
        "set_thinking_level",
        "tl2",
        "Missing required field \"level\"",
    );
    let next = pith.call("cm", json!({"type": "cycle_model"})).await;
    assert_eq!(next["data"]["model"]["id"], "faux-model");
    assert_eq!(next["data"]["thinkingLevel"], "off");
    assert_eq!(next["data"]["isScoped"], false);
    let none = pith
        .call("ct", json!({"type": "cycle_thinking_level"}))
        .await;
    assert_eq!(none["data"], Value::Null);

    // Without a script faux needs explicit selection and is the only model: cycling gives null.
    let mut pith = Pith::spawn(Options::default()).await;
    let cycled = pith.call("cm", json!({"type": "cycle_model"})).await;
    assert_eq!(
        cycled,
        json!({"id": "cm", "type": "response", "command": "cycle_model", "success": true, "data": null})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn modes_and_switches() {
    let mut pith = Pith::spawn(Options::default()).await;
    for (command, field, good, bad) in [
        (
            "set_steering_mode",
            "mode",
            json!("all"),
            json!("sometimes"),
        ),
        (
            "set_follow_up_mode",
            "mode",
            json!("one-at-a-time"),
            json!(3),
        ),
        ("set_interrupt_mode", "mode", json!("wait"), json!("later")),
        ("set_auto_compaction", "enabled", json!(false), json!("no")),
        ("set_auto_retry", "enabled", json!(true), json!(null)),
    ] {
        let ok = pith.call("ok", json!({"type": command, field: good})).await;
        assert_eq!(
            ok,
            json!({"id": "ok", "type": "response", "command": command, "success": true})
        );
        let err = pith.call("bad", json!({"type": command, field: bad})).await;
        assert_eq!(err["success"], false, "{command}");
        assert!(
            err["error"]
                .as_str()
                .unwrap()
                .contains(&format!("\"{field}\"")),
            "{err}"
        );
    }
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["steeringMode"], "all");
    assert_eq!(state["data"]["interruptMode"], "wait");
    assert_eq!(state["data"]["autoCompactionEnabled"], false);
    assert_eq!(
        pith.call("ar", json!({"type": "abort_retry"})).await["success"],
        true
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_name_and_new_session() {
    let mut pith = Pith::spawn(Options::faux(json!([{"text": "x"}]))).await;
    let named = pith
        .call(
            "n",
            json!({"type": "set_session_name", "name": "  My work  "}),
        )
        .await;
    assert_eq!(named["success"], true);
    assert_eq!(
        pith.frames[pith.frames.len() - 2],
        json!({"type": "session_info_changed", "name": "My work"})
    );
    assert_eq!(
        pith.call("s", json!({"type": "get_state"})).await["data"]["sessionName"],
        "My work"
    );
    assert_error(
        &pith
            .call("e", json!({"type": "set_session_name", "name": "   "}))
            .await,
        "set_session_name",
        "e",
        "Session name cannot be empty",
    );
    pith.call("p", json!({"type": "prompt", "message": "q"}))
        .await;
    pith.until_agent_end().await;
    let before = pith.call("s1", json!({"type": "get_state"})).await["data"]["sessionId"].clone();
    let fresh = pith.call("ns", json!({"type": "new_session"})).await;
    assert_eq!(
        fresh,
        json!({"id": "ns", "type": "response", "command": "new_session", "success": true, "data": {"cancelled": false}})
    );
    let after = pith.call("s2", json!({"type": "get_state"})).await;
    assert_ne!(after["data"]["sessionId"], before);
    assert_eq!(after["data"]["messageCount"], 0);
    assert_error(
        &pith
            .call("ns2", json!({"type": "new_session", "parentSession": 7}))
            .await,
        "new_session",
        "ns2",
        "Field \"parentSession\" must be a string, got a number",
    );
}

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
    let results: Vec<&Value> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .collect();
    assert_eq!(results.len(), 3);
    // Immediate failures come first, then executed calls in order.
    assert_eq!(results[0]["toolCallId"], "w2");
    assert_eq!(results[0]["content"][0]["text"], "Tool nope not found");
    assert_eq!(results[1]["toolCallId"], "w3");
    assert!(results[1]["content"][0]["text"].as_str().unwrap().starts_with("Validation failed for tool \"word_count\":\n  - root: must have required property 'path'"));
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
async fn event_filter_lean_updates_and_allow_list() {
    let mut pith = Pith::spawn(Options::faux(
        json!([{"text": "abcdef", "chunks": 3}, {"text": "second"}]),
    ))
    .await;
    let bad = pith
        .call(
            "b",
            json!({"type": "set_event_filter", "messageUpdates": "tiny"}),
        )
        .await;
    assert_error(
        &bad,
        "set_event_filter",
        "b",
        "Field \"messageUpdates\" must be one of \"full\", \"delta\", \"usage\", got \"tiny\"",
    );
    let ok = pith
        .call(
            "f",
            json!({"type": "set_event_filter", "events": null, "messageUpdates": "delta"}),
        )
        .await;
    assert_eq!(
        ok["data"],
        json!({"events": null, "messageUpdates": "delta"})
    );
    pith.call("p", json!({"type": "prompt", "message": "q"}))
        .await;
    pith.until_agent_end().await;
    let deltas: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .collect();
    assert_eq!(deltas.len(), 3);
    assert_eq!(
        deltas[0],
        &json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "ab"}, "message": {"role": "assistant"}})
    );

    pith.call(
        "f2",
        json!({"type": "set_event_filter", "events": ["agent_end"]}),
    )
    .await;
    let from = pith.frames.len();
    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    pith.until_agent_end().await;
    let kinds: Vec<&str> = pith
        .since(from)
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["response", "agent_end"]);
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
        output.ends_with("29999\n30000\n"),
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
async fn abort_bash_kills_the_process_tree_within_100_ms() {
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
    assert!(
        aborted.elapsed() < std::time::Duration::from_millis(100),
        "took {:?}",
        aborted.elapsed()
    );
    let result = pith.response("b").await;
    assert_eq!(result["data"]["cancelled"], true);
    assert!(result["data"].get("exitCode").is_none());
}
