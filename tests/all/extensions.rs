//! Extensions over the real pipes: hooks that cancel switches or block tools, commands while
//! streaming, extensions that trap, their tools, commands and session imports (dialogs:
//! `extension_dialogs.rs`).

use crate::support;
use crate::support::keys;

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// Spawns pith with these plugin crates in a plugins directory.
pub(crate) async fn spawn_with(crates: &[&str], script: Value) -> (Pith, tempfile::TempDir) {
    let plugins = support::plugins_dir_with(crates);
    let pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(script)
    })
    .await;
    (pith, plugins)
}

pub(crate) fn is_ui(frame: &Value, method: &str) -> bool {
    frame["type"] == "extension_ui_request" && frame["method"] == method
}

/// The message of the next `notify` starting with `prefix`, among the frames read since the
/// last one taken (a hook's notification may come before the command's response) or later.
/// pith on the faux model's `script`, with `extra` arguments and the probe extension reporting
/// what its config switch `switch` turns on; the plugins folder must outlive the process.
pub(crate) async fn probe_reporting(
    switch: &str,
    script: Value,
    extra: &[&str],
) -> (Pith, tempfile::TempDir) {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let settings = json!({
        "plugins": {"ext-probe": {"grant": {"config": [switch]}, "config": {switch: "on"}}}
    });
    let mut options = crate::support::rpc::persistent(script, extra);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = vec![("settings.json".into(), settings.to_string())];
    (Pith::spawn(options).await, plugins)
}

pub(crate) async fn notified(pith: &mut Pith, prefix: &str) -> String {
    let matches = |f: &Value| {
        is_ui(f, "notify") && f["message"].as_str().is_some_and(|m| m.starts_with(prefix))
    };
    let taken = |f: &Value| f["taken"] == true;
    if let Some(frame) = pith.frames.iter_mut().find(|f| matches(f) && !taken(f)) {
        frame["taken"] = json!(true);
        return frame["message"].as_str().unwrap().to_string();
    }
    let frame = pith.wait_for(matches).await;
    if let Some(last) = pith.frames.last_mut() {
        last["taken"] = json!(true);
    }
    frame["message"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn session_switches_and_forks_are_cancelled_while_work_is_unsaved() {
    let script = json!([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "draft\n"}}]},
        {"text": "written"}
    ]);
    let (mut pith, _plugins) = spawn_with(&["examples/switch-guard"], script).await;
    // pi's session, saved in this folder (a switch to another folder's file moves there).
    let other = pith.work_dir().join("other.jsonl");
    let saved = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/pi-sessions/pi-session.jsonl"),
    )
    .unwrap()
    .replace("$SCRATCH/j_session/work", pith.work_dir().to_str().unwrap());
    std::fs::write(&other, saved).unwrap();
    pith.call("p", json!({"type": "prompt", "message": "write it"}))
        .await;
    pith.until_agent_end().await;

    let new = pith.call("n", json!({"type": "new_session"})).await;
    assert_eq!(new["data"], json!({"cancelled": true}), "{new}");
    assert!(
        notified(&mut pith, "Unsaved work in a.txt")
            .await
            .contains("/saved")
    );
    let switch = pith
        .call(
            "w",
            json!({"type": "switch_session", "sessionPath": "other.jsonl"}),
        )
        .await;
    assert_eq!(switch["data"], json!({"cancelled": true}), "{switch}");
    let forks = pith.call("f", json!({"type": "get_fork_messages"})).await;
    let entry = forks["data"]["messages"][0]["entryId"].clone();
    let fork = pith
        .call("k", json!({"type": "fork", "entryId": entry}))
        .await;
    assert_eq!(fork["data"]["cancelled"], true, "{fork}");
    let moved = pith
        .call("t", json!({"type": "navigate_tree", "entryId": entry}))
        .await;
    assert_eq!(moved["data"], json!({"cancelled": true}), "{moved}");
    // The conversation is still there.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    assert_eq!(
        messages["data"]["messages"].as_array().unwrap().len(),
        5,
        "system, two prompts and answers"
    );

    pith.call("saved", json!({"type": "prompt", "message": "/saved"}))
        .await;
    assert_eq!(
        notified(&mut pith, "1 file(s)").await,
        "1 file(s) marked saved"
    );
    let switch = pith
        .call(
            "w2",
            json!({"type": "switch_session", "sessionPath": "other.jsonl"}),
        )
        .await;
    assert_eq!(switch["data"], json!({"cancelled": false}), "{switch}");
    let new = pith.call("n2", json!({"type": "new_session"})).await;
    assert_eq!(new["data"], json!({"cancelled": false}));
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_commands_run_while_the_agent_streams() {
    let script = json!([{"text": "a long answer to stream", "chunks": 20, "delay_ms": 40}]);
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], script).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    let response = pith
        .call("c", json!({"type": "prompt", "message": "/count"}))
        .await;
    assert_eq!(response["success"], true, "{response}");
    notified(&mut pith, "agent_end seen 0").await;
    assert!(
        !pith.frames.iter().any(|f| f["type"] == "agent_end"),
        "the command ran before the run ended"
    );
    pith.until_agent_end().await;
    pith.call("c2", json!({"type": "prompt", "message": "/count"}))
        .await;
    notified(&mut pith, "agent_end seen 1").await;
    // The command's text never reached the conversation.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let roles: Vec<&Value> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["role"])
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trapping_extension_is_reported_and_the_run_completes() {
    let script = json!([{"text": "still answered"}]);
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], script).await;
    pith.call("p", json!({"type": "prompt", "message": "TRAP please"}))
        .await;
    let error = pith.wait_for(|f| f["type"] == "extension_error").await;
    assert_eq!(keys(&error), ["type", "extensionPath", "event", "error"]);
    assert!(
        error["extensionPath"]
            .as_str()
            .unwrap()
            .ends_with("ext-probe.toml"),
        "{error}"
    );
    assert_eq!(error["event"], "before_agent_start");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("probe trapped on purpose"),
        "{error}"
    );
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][2]["content"][0]["text"], "still answered");

    pith.call("t", json!({"type": "prompt", "message": "/trap"}))
        .await;
    let error = pith.since_sent(|f| f["type"] == "extension_error").await;
    assert_eq!(error["extensionPath"], "command:trap");
    assert_eq!(error["event"], "command");

    // A runaway command hits the guest-time deadline.
    pith.call("s", json!({"type": "prompt", "message": "/spin"}))
        .await;
    let error = pith.since_sent(|f| f["type"] == "extension_error").await;
    assert!(
        error["error"].as_str().unwrap().contains("deadline"),
        "{error}"
    );

    // A fresh instance serves the next call.
    pith.call("c", json!({"type": "prompt", "message": "/count"}))
        .await;
    notified(&mut pith, "agent_end seen").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn input_agent_start_tool_and_compaction_hooks_apply() {
    let script = json!([
        {"text": "upper seen"},
        {"text": "injected seen"},
        {"tool_calls": [{"id": "l1", "name": "ls", "arguments": {}}, {"id": "b1", "name": "bash", "arguments": {"command": "echo BLOCKME"}}]},
        {"text": "tools done"}
    ]);
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        args: vec![
            "--provider".into(),
            "faux".into(),
            "--model".into(),
            "faux-model".into(),
            "--no-session".into(),
            "--tools".into(),
            "ls,bash".into(),
        ],
        // A small kept tail, so that the short session has something to compact.
        agent_files: vec![(
            "settings.json".into(),
            json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
        )],
        ..Options::faux(script)
    })
    .await;
    pith.call("u", json!({"type": "prompt", "message": "upper:hello"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][1]["content"][0]["text"], "HELLO");

    let handled = pith
        .call("h", json!({"type": "prompt", "message": "handled:x"}))
        .await;
    assert_eq!(handled["success"], true);
    notified(&mut pith, "input handled").await;

    pith.call("i", json!({"type": "prompt", "message": "INJECT"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][1]["role"], "custom");
    assert_eq!(end["messages"][1]["customType"], "probe-note");
    // One text is a string, as pi's extensions send it.
    assert_eq!(end["messages"][1]["content"], "injected by the probe");

    pith.call("t", json!({"type": "prompt", "message": "tools"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = |id: &str| {
        end["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["toolCallId"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(result("l1")["content"][0]["text"], "patched by probe");
    assert_eq!(result("b1")["content"][0]["text"], "probe blocked");
    assert_eq!(result("b1")["isError"], true);

    let cancelled = pith
        .call(
            "c1",
            json!({"type": "compact", "customInstructions": "probe-cancel"}),
        )
        .await;
    assert_eq!(cancelled["success"], false);
    assert_eq!(cancelled["error"], "Compaction cancelled");
    let end = pith
        .frames
        .iter()
        .rev()
        .find(|f| f["type"] == "compaction_end")
        .unwrap();
    assert_eq!(
        *end,
        json!({"type": "compaction_end", "reason": "manual", "aborted": true, "willRetry": false})
    );
    let compacted = pith
        .call(
            "c2",
            json!({"type": "compact", "customInstructions": "probe-summary"}),
        )
        .await;
    assert_eq!(compacted["success"], true, "{compacted}");
    assert_eq!(compacted["data"]["summary"], "probe summary");
    assert_eq!(compacted["data"]["details"], json!({"by": "probe"}));
    // The summary request's usage, as the extension reported it (priced at the faux model's
    // rates, which are zero).
    let usage = &compacted["data"]["usage"];
    assert_eq!(
        (&usage["input"], &usage["output"], &usage["totalTokens"]),
        (&json!(10), &json!(5), &json!(15)),
        "{compacted}"
    );
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    // The system message stays in front of the summary.
    assert_eq!(messages["data"]["messages"][0]["role"], "system");
    assert_eq!(messages["data"]["messages"][1]["role"], "compactionSummary");
    assert_eq!(messages["data"]["messages"][1]["summary"], "probe summary");
}

#[tokio::test(flavor = "multi_thread")]
async fn get_commands_lists_extension_commands() {
    let (mut pith, _plugins) = spawn_with(&["examples/switch-guard"], json!([])).await;
    let commands = pith.call("c", json!({"type": "get_commands"})).await;
    let list: Vec<&Value> = commands["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["sourceInfo"]["source"] != "builtin")
        .collect();
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_eq!(list[0]["name"], "saved");
    assert_eq!(list[0]["source"], "extension");
    assert!(
        list[0]["sourceInfo"]["path"]
            .as_str()
            .unwrap()
            .ends_with("switch-guard.toml")
    );
    let plugins = pith.call("p", json!({"type": "get_plugins"})).await;
    assert!(
        plugins["data"]["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "switch-guard")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_tools_and_session_imports_work() {
    let script = json!([
        {"tool_calls": [{"id": "e1", "name": "probe_echo", "arguments": {"text": "hi"}}]},
        {"text": "echoed"}
    ]);
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], script).await;
    pith.call("p", json!({"type": "prompt", "message": "use the tool"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = &end["messages"][3];
    assert_eq!(result["toolName"], "probe_echo");
    assert_eq!(result["content"][0]["text"], "echo: hi (3 messages)");

    pith.call(
        "n",
        json!({"type": "prompt", "message": "/note remember this"}),
    )
    .await;
    let custom = pith
        .since_sent(|f| f["type"] == "message_end" && f["message"]["role"] == "custom")
        .await;
    assert_eq!(custom["message"]["customType"], "probe-note");
    assert_eq!(custom["message"]["content"], "remember this");
    assert_eq!(custom["message"]["details"], json!({"from": "note"}));

    pith.call(
        "m",
        json!({"type": "prompt", "message": "/name probe session"}),
    )
    .await;
    assert_eq!(
        notified(&mut pith, "named").await,
        "named Some(\"probe session\"), idle true"
    );
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionName"], "probe session");

    pith.call("y", json!({"type": "prompt", "message": "/say again"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][0]["content"][0]["text"], "again");
    let messages = pith.call("g", json!({"type": "get_messages"})).await;
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "custom",
            "user",
            "assistant"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn plugins_named_with_e_load_and_no_extensions_keeps_only_them() {
    let named = support::plugins_dir_with(&["examples/switch-guard"]);
    let discovered = support::plugins_dir_with(&["testing/ext-probe"]);
    let commands = |pith_frames: &Value| -> Vec<String> {
        pith_frames["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["sourceInfo"]["source"] != "builtin")
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let wasm = named.path().join("switch-guard.wasm");
    let mut options = Options {
        plugins_dir: Some(discovered.path().to_path_buf()),
        ..Options::default()
    };
    options
        .args
        .extend(["-e".to_string(), wasm.display().to_string()]);
    let mut pith = Pith::spawn(options).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    assert_eq!(
        commands(&listed),
        [
            "ask",
            "trap",
            "spin",
            "count",
            "virtual",
            "discoveries",
            "note",
            "say",
            "name",
            "title",
            "session",
            "ask-model",
            "entries",
            "add-tool",
            "listen",
            "move",
            "emit",
            "front",
            "provider",
            "wake",
            "saved"
        ]
    );

    let mut options = Options {
        plugins_dir: Some(discovered.path().to_path_buf()),
        ..Options::default()
    };
    options.args.extend([
        "--no-extensions".to_string(),
        "--extension".to_string(),
        named.path().join("switch-guard.toml").display().to_string(),
    ]);
    let mut pith = Pith::spawn(options).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    assert_eq!(commands(&listed), ["saved"]);
    let plugins = pith.call("p", json!({"type": "get_plugins"})).await;
    let guard = plugins["data"]["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "switch-guard")
        .unwrap()
        .clone();
    assert_eq!(guard["origin"], "explicit");
}
