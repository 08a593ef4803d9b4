//! The rest of the seeds' surface: seed 001's todos, streamed rules and `get_state` fields,
//! `PI_RPC_EMIT_TITLE`, and pi 0.16's protocol behind `--legacy-events`.

use crate::support;

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// The first frame of `kind` already read, or the next one.
async fn event(pith: &mut Pith, kind: &str) -> Value {
    if let Some(frame) = pith.frames.iter().find(|f| f["type"] == kind) {
        return frame.clone();
    }
    pith.wait_for(|f| f["type"] == kind).await
}

fn with_args(mut options: Options, extra: &[&str]) -> Options {
    options.args.extend(extra.iter().map(|a| a.to_string()));
    options
}

fn fast_clear(mut options: Options) -> Options {
    options.agent_files.push((
        "settings.json".into(),
        json!({"todos": {"clearDelayMs": 100}}).to_string(),
    ));
    options
}

#[tokio::test(flavor = "multi_thread")]
async fn set_todos_normalises_and_get_state_shows_them() {
    let mut pith = Pith::spawn(Options::default()).await;
    let set = pith
        .call(
            "t",
            json!({"type": "set_todos", "phases": [
            {"id": "phase-1", "name": "Evaluation", "tasks": [
                {"id": "task-1", "content": "Map the read tool surface", "status": "in_progress"},
                {"content": " Exercise edit operations ", "status": "pending", "junk": 1}]}]}),
        )
        .await;
    let phases = json!([{"id": "phase-1", "name": "Evaluation", "tasks": [
        {"id": "task-1", "content": "Map the read tool surface", "status": "in_progress"},
        {"id": "task-2", "content": "Exercise edit operations", "status": "pending"}]}]);
    assert_eq!(set["data"], json!({"todoPhases": phases}));
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["todoPhases"], phases);
    for key in [
        "interruptMode",
        "queuedMessageCount",
        "pendingMessageCount",
        "queueMode",
    ] {
        assert!(state["data"].get(key).is_some(), "{key} missing: {state}");
    }
    assert!(state["data"].get("sessionName").is_none(), "no name yet");
    pith.call("n", json!({"type": "set_session_name", "name": "plan"}))
        .await;
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionName"], "plan");

    for (bad, error) in [
        (
            json!({"type": "set_todos"}),
            "Missing required field \"phases\"",
        ),
        (
            json!({"type": "set_todos", "phases": {}}),
            "Field \"phases\" must be an array of phases",
        ),
        (
            json!({"type": "set_todos", "phases": [{"tasks": [{"content": "x", "status": "done"}]}]}),
            "phases[0].tasks[0].status must be one of \"pending\", \"in_progress\", \"completed\", \"abandoned\", \"blocked\", got \"done\"",
        ),
    ] {
        let response = pith.call("bad", bad).await;
        assert_eq!(response["success"], false);
        assert_eq!(response["error"], error);
    }
    // A failed set_todos leaves the list as it was.
    let state = pith.call("s3", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["todoPhases"], phases);
}

#[tokio::test(flavor = "multi_thread")]
async fn incomplete_todos_remind_the_agent_and_the_todo_tool_finishes_them() {
    let script = json!([
        {"text": "I think I am done"},
        {"tool_calls": [{"id": "t1", "name": "todo", "arguments": {"phases": [{"name": "Plan", "tasks": [{"content": "write tests", "status": "completed"}]}]}}]},
        {"text": "all done now"}
    ]);
    let options = fast_clear(with_args(Options::faux(script), &["--tools", "read,todo"]));
    let mut pith = Pith::spawn(options).await;
    pith.call("t", json!({"type": "set_todos", "phases": [{"name": "Plan", "tasks": [{"content": "write tests", "status": "in_progress"}]}]}))
        .await;
    pith.call("p", json!({"type": "prompt", "message": "work"}))
        .await;
    let reminder = pith.wait_for(|f| f["type"] == "todo_reminder").await;
    assert_eq!(
        reminder,
        json!({"type": "todo_reminder", "todos": [{"id": "task-1", "content": "write tests", "status": "in_progress"}], "attempt": 1, "maxAttempts": 3})
    );
    let end = pith.until_agent_end().await;
    let messages = end["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "toolResult",
            "assistant"
        ]
    );
    assert!(
        messages[3]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("- [in_progress] write tests")
    );
    assert_eq!(messages[5]["content"][0]["text"], "Plan\n  [x] write tests");
    assert_eq!(
        pith.frames
            .iter()
            .filter(|f| f["type"] == "todo_reminder")
            .count(),
        1
    );
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(
        state["data"]["todoPhases"][0]["tasks"][0]["status"],
        "completed"
    );
    let cleared = pith.wait_for(|f| f["type"] == "todo_auto_clear").await;
    assert_eq!(cleared, json!({"type": "todo_auto_clear"}));
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["todoPhases"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn reminders_are_bounded() {
    let mut pith = Pith::spawn(Options::faux(json!([]))).await;
    pith.call(
        "t",
        json!({"type": "set_todos", "phases": [{"tasks": [{"content": "never done"}]}]}),
    )
    .await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    let attempts: Vec<Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "todo_reminder")
        .map(|f| f["attempt"].clone())
        .collect();
    assert_eq!(attempts, [json!(1), json!(2), json!(3)]);
    // A todo list that is not finished is never cleared.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(
        state["data"]["todoPhases"][0]["tasks"][0]["content"],
        "never done"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_rule_stops_the_answer_and_is_given_to_the_model() {
    let rule = "---\nname: no-force-delete\ndescription: Never force-delete\nglobs: src/**, *.rs\ntrigger: rm -rf\n---\nDo not delete directories recursively; move them to trash/ instead.\n";
    let script = json!([
        {"text": "I will clean up", "tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "rm -rf build"}}], "json_chunks": 4},
        {"text": "Moving build to trash/ instead."}
    ]);
    let mut options = Options::faux(script);
    options
        .work_files
        .push((".pi/rules/no-force-delete.md".into(), rule.into()));
    options.args.push("--approve".into());
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "clean"}))
        .await;
    let triggered = pith.wait_for(|f| f["type"] == "ttsr_triggered").await;
    let rules = triggered["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["name"], "no-force-delete");
    assert_eq!(rules[0]["ttsrTrigger"], "rm -rf");
    assert_eq!(rules[0]["globs"], json!(["src/**", "*.rs"]));
    assert_eq!(
        rules[0]["content"],
        "Do not delete directories recursively; move them to trash/ instead."
    );
    assert!(
        rules[0]["path"]
            .as_str()
            .unwrap()
            .ends_with(".pi/rules/no-force-delete.md")
    );
    let end = pith.until_agent_end().await;
    let position = |kind: &str| pith.frames.iter().position(|f| f["type"] == kind);
    let (stopped_at, first_tool) = (
        position("ttsr_triggered").unwrap(),
        position("tool_execution_start"),
    );
    assert!(
        first_tool.is_none_or(|tool| tool > stopped_at),
        "the stopped answer's tool call never ran"
    );
    let messages = end["messages"].as_array().unwrap();
    // The stopped answer is not kept; the reminder follows the prompt, and the run goes on
    // (the rule triggers once per session).
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(messages[2]["role"], "user");
    assert!(
        messages[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("move them to trash/")
    );
    assert_eq!(messages[3]["role"], "assistant");
    assert_eq!(
        pith.frames
            .iter()
            .filter(|f| f["type"] == "ttsr_triggered")
            .count(),
        1
    );
    // The stopped answer was closed for the host.
    let stopped = pith
        .frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["stopReason"] == "aborted")
        .expect("the stopped answer ends");
    assert_eq!(
        stopped["message"]["errorMessage"],
        "Stopped by a streamed rule"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_rules_trigger_and_titles_follow_pi_rpc_emit_title() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let script = json!([{"text": "I must not say PROBE-TRIGGER", "chunks": 3}, {"text": "ok"}]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(script.clone())
    })
    .await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let triggered = pith.wait_for(|f| f["type"] == "ttsr_triggered").await;
    assert_eq!(triggered["rules"][0]["name"], "probe-rule");
    assert_eq!(triggered["rules"][0]["path"], "extension:ext-probe");
    pith.until_agent_end().await;
    pith.call("t", json!({"type": "prompt", "message": "/title Build"}))
        .await;
    pith.since_sent(|f| f["method"] == "notify" && f["message"] == "title set")
        .await;
    assert!(
        !pith.frames.iter().any(|f| f["method"] == "setTitle"),
        "setTitle is held back by default"
    );

    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        env: vec![("PI_RPC_EMIT_TITLE".into(), "yes".into())],
        ..Options::faux(script)
    })
    .await;
    pith.call("t", json!({"type": "prompt", "message": "/title Build"}))
        .await;
    let title = pith.since_sent(|f| f["method"] == "setTitle").await;
    assert_eq!(title["title"], "Build");
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// The 0.16-era example client's flow: a prompt with attachments, `queue_message` while it
/// streams, `bash` with `bash_end`, `compact` with `compaction`, `branch` by `entryIndex`,
/// `reset` — and the old `error` event.
#[tokio::test(flavor = "multi_thread")]
async fn the_016_era_client_flow_with_legacy_events() {
    let script = json!([
        {"text": "I see an image and a document", "chunks": 10, "delay_ms": 30},
        {"text": "queued message answered"},
        {"text": "summary of the work"}
    ]);
    // A 0.16-era host is older than pi 0.73: it speaks the 0.73 profile's frames.
    let mut pith = Pith::spawn(with_args(
        Options::faux(script),
        &["--legacy-events", "--pi-protocol", "0.73"],
    ))
    .await;
    let prompt = pith
        .call("p", json!({"type": "prompt", "message": "What is in these?", "attachments": [
            {"id": "a1", "type": "image", "fileName": "dot.png", "mimeType": "image/png", "size": 68, "content": PNG},
            {"id": "a2", "type": "document", "fileName": "notes.pdf", "mimeType": "application/pdf", "size": 10, "content": "JVBERi0=", "extractedText": "Meeting notes"}
        ]}))
        .await;
    assert_eq!(prompt["success"], true);
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    let queued = pith
        .call(
            "q",
            json!({"type": "queue_message", "message": "one more thing"}),
        )
        .await;
    assert_eq!(queued["success"], true);
    let end = pith.until_agent_end().await;
    let user = &end["messages"][0]["content"];
    assert_eq!(
        user[0],
        json!({"type": "text", "text": "What is in these?"})
    );
    assert_eq!(
        user[1],
        json!({"type": "image", "data": PNG, "mimeType": "image/png"})
    );
    assert_eq!(
        user[2],
        json!({"type": "text", "text": "<document name=\"notes.pdf\">\nMeeting notes\n</document>"})
    );
    let roles: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant"],
        "the queued message was delivered"
    );

    let mode = pith
        .call(
            "m",
            json!({"type": "set_queue_mode", "mode": "one-at-a-time"}),
        )
        .await;
    assert_eq!(mode["success"], true);
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["queueMode"], "one-at-a-time");
    assert_eq!(state["data"]["queuedMessageCount"], 0);

    let bash = pith
        .call("b", json!({"type": "bash", "command": "echo legacy"}))
        .await;
    assert_eq!(bash["data"]["output"], "legacy\n");
    let bash_end = event(&mut pith, "bash_end").await;
    assert_eq!(bash_end["message"]["role"], "bashExecution");
    assert_eq!(bash_end["message"]["command"], "echo legacy");
    assert_eq!(bash_end["message"]["output"], "legacy\n");

    let compact = pith.call("c", json!({"type": "compact"})).await;
    assert_eq!(compact["success"], true, "{compact}");
    let compaction = event(&mut pith, "compaction").await;
    assert_eq!(
        compaction.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["type", "summary", "tokensBefore"]
    );
    assert_eq!(compaction["summary"], compact["data"]["summary"]);

    let branches = pith.call("g", json!({"type": "get_branch_messages"})).await;
    let first = &branches["data"]["messages"][0];
    assert!(
        first["text"]
            .as_str()
            .unwrap()
            .starts_with("What is in these?"),
        "{first}"
    );
    let entries = pith.call("gm", json!({"type": "get_messages"})).await;
    let count = entries["data"]["messages"].as_array().unwrap().len();
    let bad = pith
        .call("x", json!({"type": "branch", "entryIndex": count + 5}))
        .await;
    assert_eq!(bad["error"], "Invalid entry index for branching");
    let error = event(&mut pith, "error").await;
    assert_eq!(
        error,
        json!({"type": "error", "error": "Invalid entry index for branching"})
    );
    pith.send_line("{not json").await;
    let error = pith
        .wait_for(|f| f["type"] == "error" && f["error"] != "Invalid entry index for branching")
        .await;
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse command: ")
    );

    let reset = pith.call("r", json!({"type": "reset"})).await;
    assert_eq!(
        reset,
        json!({"id": "r", "type": "response", "command": "reset", "success": true})
    );
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["messageCount"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn branch_by_entry_index_and_the_legacy_events_switch() {
    let mut pith = Pith::spawn(Options::faux(json!([{"text": "one"}, {"text": "two"}]))).await;
    pith.call("p1", json!({"type": "prompt", "message": "first"}))
        .await;
    pith.until_agent_end().await;
    pith.call("p2", json!({"type": "prompt", "message": "second"}))
        .await;
    pith.until_agent_end().await;
    let branches = pith.call("g", json!({"type": "get_branch_messages"})).await;
    let items = branches["data"]["messages"].as_array().unwrap().clone();
    // Indexes into the branch's messages, the system message first.
    assert_eq!(items[0]["entryIndex"], 1);
    assert_eq!(items[1]["entryIndex"], 3);
    let forks = pith.call("f", json!({"type": "get_fork_messages"})).await;
    assert!(
        forks["data"]["messages"][0].get("entryIndex").is_none(),
        "the current protocol's shape is unchanged"
    );
    let branched = pith
        .call("b", json!({"type": "branch", "entryIndex": 3}))
        .await;
    assert_eq!(branched["data"]["text"], "second");
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["messageCount"], 3);

    // Without the switch, none of the old events; with it, they come.
    pith.call("b1", json!({"type": "bash", "command": "true"}))
        .await;
    pith.call("u", json!({"type": "nope"})).await;
    assert!(!pith.frames.iter().any(|f| matches!(
        f["type"].as_str(),
        Some("bash_end" | "error" | "compaction")
    )));
    let on = pith
        .call("on", json!({"type": "set_legacy_events", "enabled": true}))
        .await;
    assert_eq!(on["data"], json!({"enabled": true}));
    pith.call("b2", json!({"type": "bash", "command": "true"}))
        .await;
    event(&mut pith, "bash_end").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_old_commands_reject_bad_input_with_the_field_named() {
    let mut pith = Pith::spawn(Options::default()).await;
    for (command, error) in [
        (
            json!({"type": "queue_message"}),
            "Missing required field \"message\"",
        ),
        (
            json!({"type": "set_queue_mode", "mode": "some"}),
            "Field \"mode\" must be one of \"all\", \"one-at-a-time\", got \"some\"",
        ),
        (
            json!({"type": "set_legacy_events"}),
            "Missing required field \"enabled\"",
        ),
        (
            json!({"type": "branch", "entryIndex": -1}),
            "Field \"entryIndex\" must be a non-negative integer",
        ),
        (
            json!({"type": "prompt", "message": "x", "attachments": {}}),
            "Field \"attachments\" must be an array, got an object",
        ),
        (
            json!({"type": "prompt", "message": "x", "attachments": [{"type": "video"}]}),
            "Field \"attachments[0]\" must be {\"type\":\"image\"|\"document\",\"fileName\",\"mimeType\",\"content\":<base64>,\"extractedText\"?}",
        ),
    ] {
        let kind = command["type"].as_str().unwrap().to_string();
        let response = pith.call("x", command).await;
        assert_eq!(response["command"], kind.as_str());
        assert_eq!(response["success"], false, "{response}");
        assert_eq!(response["error"], error);
    }
    assert!(
        !pith.frames.iter().any(|f| f["type"] == "error"),
        "no legacy events unless asked for"
    );
}
