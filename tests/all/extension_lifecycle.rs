//! pi's session lifecycle for extensions, over the real binary: `session_start` on every new
//! session with a fresh instance (no state carried over), `session_shutdown` (awaited) before
//! a replacement and at the end, and `model_select`, `user_bash` and `session_compact` with pi's
//! payloads — for an extension built for version 0.2 (typed events) and for one built for 0.1
//! (a committed component, `tests/fixtures/plugins-0.1.0/`, which gets them as `observe`). An
//! event pith does not know (`provider_stream_event`) loads with a warning. Version 0.2's imports
//! read and steer the session.

use crate::extensions::is_ui;
use crate::extensions::notified;
use crate::support;
use crate::support::rpc::{Options, Pith, persistent, tool_results};
use serde_json::{Value, json};

/// The next `lifecycle` status starting with `prefix` not looked at yet.
async fn lifecycle(pith: &mut Pith, prefix: &str) -> String {
    let matches = |f: &Value| {
        is_ui(f, "setStatus")
            && f["statusKey"] == "lifecycle"
            && f["statusText"]
                .as_str()
                .is_some_and(|t| t.starts_with(prefix))
    };
    if let Some(frame) = pith
        .frames
        .iter_mut()
        .find(|f| matches(f) && f["taken"] != true)
    {
        frame["taken"] = json!(true);
        return frame["statusText"].as_str().unwrap().to_string();
    }
    let frame = pith.wait_for(matches).await;
    if let Some(last) = pith.frames.last_mut() {
        last["taken"] = json!(true);
    }
    frame["statusText"].as_str().unwrap().to_string()
}

/// The JSON after the event's name in a `lifecycle` status.
fn payload(status: &str) -> Value {
    let (_, json) = status.split_once(' ').unwrap();
    serde_json::from_str(json).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn extensions_follow_pis_session_lifecycle() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    lifecycle_of(plugins.path()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_built_for_0_1_follows_it_unchanged() {
    let plugins = tempfile::tempdir().unwrap();
    let fixture = support::repo_root().join("tests/fixtures/plugins-0.1.0");
    for file in ["ext-probe.wasm", "ext-probe.toml"] {
        std::fs::copy(fixture.join(file), plugins.path().join(file)).unwrap();
    }
    lifecycle_of(plugins.path()).await;
}

/// The lifecycle of a session with the probe of `plugins`.
async fn lifecycle_of(plugins: &std::path::Path) {
    let settings = json!({
        "plugins": {"ext-probe": {"grant": {"config": ["lifecycle"]}, "config": {"lifecycle": "on"}}},
        "compaction": {"keepRecentTokens": 10}
    });
    let mut options = persistent(
        json!([{"text": "hi"}, {"text": "more"}, {"text": "the summary"}]),
        &[],
    );
    options.plugins_dir = Some(plugins.to_path_buf());
    options.agent_files = vec![("settings.json".into(), settings.to_string())];
    let mut pith = Pith::spawn(options).await;
    assert_eq!(
        lifecycle(&mut pith, "session_start").await,
        "session_start #1"
    );

    // Two turns long enough that the first is compacted.
    for (id, text) in [("p", "hello "), ("q", "and more ")] {
        pith.call(id, json!({"type": "prompt", "message": text.repeat(40)}))
            .await;
        pith.until_agent_end().await;
    }
    pith.call(
        "m",
        json!({"type": "set_model", "provider": "faux", "modelId": "faux-reasoner"}),
    )
    .await;
    let selected = payload(&lifecycle(&mut pith, "model_select").await);
    assert_eq!(selected["source"], "set");
    assert_eq!(selected["model"]["id"], "faux-reasoner");
    assert_eq!(selected["previousModel"]["id"], "faux-model");

    pith.call("b", json!({"type": "bash", "command": "echo hi"}))
        .await;
    let bash = payload(&lifecycle(&mut pith, "user_bash").await);
    assert_eq!(bash["command"], "echo hi");
    assert_eq!(bash["excludeFromContext"], false);
    assert_eq!(bash["cwd"], json!(pith.work_dir()));

    let compacted = pith.call("c", json!({"type": "compact"})).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    let compact = payload(&lifecycle(&mut pith, "session_compact").await);
    assert_eq!(compact["reason"], "manual");
    assert_eq!(compact["fromExtension"], false);
    assert_eq!(compact["willRetry"], false);
    assert_eq!(compact["compactionEntry"]["type"], "compaction");
    assert_eq!(
        compact["compactionEntry"]["summary"],
        compacted["data"]["summary"]
    );

    // A new session: the old instance hears `session_shutdown` (with the new file), a fresh one
    // `session_start` — it has seen nothing of the session before.
    pith.call("n", json!({"type": "new_session"})).await;
    let shutdown = payload(&lifecycle(&mut pith, "session_shutdown").await);
    assert_eq!(shutdown["reason"], "new");
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(shutdown["targetSessionFile"], state["data"]["sessionFile"]);
    assert_eq!(
        lifecycle(&mut pith, "session_start").await,
        "session_start #1"
    );
    pith.call("k", json!({"type": "prompt", "message": "/count"}))
        .await;
    assert_eq!(
        notified(&mut pith, "agent_end seen").await,
        "agent_end seen 0"
    );

    // The end of the input: `session_shutdown` with `quit`, awaited before the process exits.
    pith.close_stdin();
    let quit = payload(&lifecycle(&mut pith, "session_shutdown").await);
    assert_eq!(quit, json!({"type": "session_shutdown", "reason": "quit"}));
    assert_eq!(pith.exit_code().await, Some(0));
}

#[test]
fn plugin_check_lists_an_extensions_tools_and_events_and_names_unknown_ones() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    support::install_plugin(&plugins, "testing/ext-probe");
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["plugin", "check", "plugins/ext-probe.toml"])
        .current_dir(root.path())
        .env("PITH_AGENT_DIR", root.path().join("agent"))
        .env("PITH_CACHE_DIR", support::shared_cache())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&checked.stdout).to_string()
        + &String::from_utf8_lossy(&checked.stderr);
    // It loads: the unknown event is a warning, not a refusal.
    assert!(checked.status.success(), "{out}");
    assert!(out.contains("tool probe_echo"), "{out}");
    assert!(out.contains("command /count"), "{out}");
    assert!(
        out.contains("events: session_start, input, before_agent_start"),
        "{out}"
    );
    assert!(
        out.contains("! the event provider_stream_event is not one pith knows"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_reads_and_steers_its_session() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = persistent(json!([{"text": "hi"}]), &[]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    pith.call("s", json!({"type": "prompt", "message": "/session"}))
        .await;
    let seen = notified(&mut pith, "session:").await;
    assert_eq!(
        seen,
        "session: id true file true cwd true leaf true label Ok(()) Some(\"probe-label\") \
         model Some(\"faux/faux-model\") found true auth true set Err(SetModelError::UnknownModel) \
         tools Err([\"nope\"]) Ok(()) active [\"read\"] all true window Some(200000) thinking ThinkingLevel::Off"
    );
    let state = pith.call("g", json!({"type": "get_state"})).await;
    assert_eq!(
        notified(&mut pith, "session more:").await,
        format!(
            "session more: prompt-names-pith true pending false trusted {}",
            state["data"]["project"]["trusted"]
        )
    );
    // The changes are the session's: the label is in the tree, the tools are the active ones.
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    let active: Vec<&str> = tools["data"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["active"] == true)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(active, ["read"]);
    let tree = pith.call("r", json!({"type": "get_tree"})).await;
    assert!(tree.to_string().contains("probe-label"), "{tree}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_asks_a_model_through_the_host_once_granted() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    // Not granted: a third-party extension may not spend on models.
    let mut options = persistent(json!([]), &[]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options.clone()).await;
    pith.call("a", json!({"type": "prompt", "message": "/ask-model hi"}))
        .await;
    let denied = notified(&mut pith, "model error").await;
    assert!(
        denied.contains("Denied") && denied.contains("\\\"models\\\": true"),
        "{denied}"
    );
    drop(pith);

    // Granted: the host asks the model with its own key; the spending is the extension's.
    let settings = json!({"plugins": {"ext-probe": {"grant": {"models": true}}}});
    options.agent_files = vec![("settings.json".into(), settings.to_string())];
    options.faux_script = Some(json!([{"text": "a short answer"}]));
    let mut pith = Pith::spawn(options).await;
    pith.call("a", json!({"type": "prompt", "message": "/ask-model hi"}))
        .await;
    let said = notified(&mut pith, "model said").await;
    assert!(
        said.starts_with("model said: a short answer (StopReason::Stop, "),
        "{said}"
    );
    let stats = pith.call("s", json!({"type": "get_session_stats"})).await;
    let spent = &stats["data"]["extensionUsage"]["ext-probe"];
    assert!(spent["output"].as_u64().unwrap() > 0, "{stats}");
    // The conversation is untouched: the call was the extension's, not the session's.
    assert_eq!(stats["data"]["totalMessages"], 0, "{stats}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_reads_the_entries_typed() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = persistent(json!([{"text": "the answer"}]), &[]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    pith.call("e", json!({"type": "prompt", "message": "/entries"}))
        .await;
    assert_eq!(
        notified(&mut pith, "entries:").await,
        "entries: all 5 branch [\"model\", \"thinking\", \"system\", \"user\", \"assistant\"] \
         answer Some(\"the answer\") first-is-root true"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_registered_at_run_time_run_and_one_can_end_the_run() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let script = json!([
        {"tool_calls": [{"id": "d", "name": "dyn_echo", "arguments": {"text": "x"}}]},
        {"text": "echoed"},
        {"tool_calls": [{"id": "f", "name": "finish", "arguments": {}}]},
        {"text": "never asked for"}
    ]);
    let mut options = Options::faux(script);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    for tool in ["dyn_echo", "finish"] {
        pith.call(
            tool,
            json!({"type": "prompt", "message": format!("/add-tool {tool}")}),
        )
        .await;
        notified(&mut pith, &format!("registered {tool}")).await;
    }
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    for tool in ["dyn_echo", "finish"] {
        assert!(
            tools["data"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == tool && t["active"] == true),
            "{tools}"
        );
    }
    pith.call("p", json!({"type": "prompt", "message": "echo"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(
        tool_results(&end)[0]["content"][0]["text"],
        "dyn: x",
        "{end}"
    );
    // `finish` asks the run to end: its result is the run's last message.
    pith.call("q", json!({"type": "prompt", "message": "finish"}))
        .await;
    let end = pith.until_agent_end().await;
    let messages = end["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "toolResult", "{end}");
    assert_eq!(messages.last().unwrap()["content"][0]["text"], "finished");
}

#[tokio::test(flavor = "multi_thread")]
async fn extensions_talk_over_the_events_bus() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    // Not heard before subscribing.
    pith.call("e0", json!({"type": "prompt", "message": "/emit news 0"}))
        .await;
    pith.call("l", json!({"type": "prompt", "message": "/listen news"}))
        .await;
    pith.call(
        "e",
        json!({"type": "prompt", "message": "/emit news {\"n\":1}"}),
    )
    .await;
    assert_eq!(notified(&mut pith, "bus:").await, "bus: news {\"n\":1}");
    let heard: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["message"].as_str().is_some_and(|m| m.starts_with("bus:")))
        .collect();
    assert_eq!(heard.len(), 1, "{heard:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_requests_moves_that_run_after_its_call() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([{"text": "hi"}, {"text": "more"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = vec![(
        "settings.json".into(),
        json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
    )];
    let mut pith = Pith::spawn(options).await;
    for (id, text) in [("p", "hello "), ("q", "and more ")] {
        pith.call(id, json!({"type": "prompt", "message": text.repeat(40)}))
            .await;
        pith.until_agent_end().await;
    }
    let before = pith.call("s0", json!({"type": "get_state"})).await;
    // The compaction calls the probe's own `session_before_compact` (which supplies the summary):
    // it runs once the command that asked for it has returned.
    pith.call("c", json!({"type": "prompt", "message": "/move compact"}))
        .await;
    // (A move may end before the command's response: frames since the command count.)
    let end = pith.since_sent(|f| f["type"] == "compaction_end").await;
    assert_eq!(end["result"]["summary"], "probe summary", "{end}");
    // A failed move is the host's to see.
    pith.call("f", json!({"type": "prompt", "message": "/move fork nope"}))
        .await;
    let error = pith.since_sent(|f| f["type"] == "extension_error").await;
    assert_eq!(error["event"], "fork", "{error}");
    // A new session: a fresh instance starts (its status set again).
    let starts = |pith: &Pith| {
        pith.frames
            .iter()
            .filter(|f| is_ui(f, "setStatus") && f["statusKey"] == "probe")
            .count()
    };
    let started = starts(&pith);
    pith.call("n", json!({"type": "prompt", "message": "/move new"}))
        .await;
    pith.since_sent(|f| is_ui(f, "setStatus") && f["statusKey"] == "probe")
        .await;
    assert_eq!(starts(&pith), started + 1);
    let after = pith.call("s1", json!({"type": "get_state"})).await;
    assert_ne!(after["data"]["sessionId"], before["data"]["sessionId"]);
    assert_eq!(after["data"]["messageCount"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_bash_answer_replaces_the_users_command() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    // Without the process grant, another command line is refused: the command runs as typed.
    let mut pith = Pith::spawn(options.clone()).await;
    let typed = pith
        .call(
            "w",
            json!({"type": "bash", "command": "probe-wrap echo inner"}),
        )
        .await;
    assert_eq!(typed["data"]["exitCode"], 127, "{typed}");
    let refused = pith.since_sent(|f| f["type"] == "extension_error").await;
    let error = refused["error"].as_str().unwrap();
    assert!(
        error.contains("run-instead needs the process grant"),
        "{error}"
    );

    let grant = json!({"plugins": {"ext-probe": {"grant": {"process": true}}}});
    options.agent_files = vec![("settings.json".into(), grant.to_string())];
    let mut pith = Pith::spawn(options).await;

    // The probe's outcome, recorded as if the command had run (pi's `result`): nothing runs.
    let given = pith
        .call(
            "r",
            json!({"type": "bash", "command": "probe-result; touch ran"}),
        )
        .await;
    assert_eq!(given["success"], true, "{given}");
    assert_eq!(given["data"]["output"], "answered by the probe\n");
    assert_eq!(given["data"]["exitCode"], 3);
    assert!(!pith.work_dir().join("ran").exists());

    // A command line run in its place (pi's `operations`): its output, the user's command
    // recorded.
    let wrapped = pith
        .call(
            "w",
            json!({"type": "bash", "command": "probe-wrap echo inner"}),
        )
        .await;
    assert_eq!(wrapped["data"]["output"], "wrapped\ninner\n", "{wrapped}");
    assert_eq!(wrapped["data"]["exitCode"], 0);
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let commands: Vec<Value> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "bashExecution")
        .map(|m| json!([m["command"], m["output"], m["exitCode"]]))
        .collect();
    assert_eq!(
        commands,
        [
            json!(["probe-result; touch ran", "answered by the probe\n", 3]),
            json!(["probe-wrap echo inner", "wrapped\ninner\n", 0]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_hears_the_runs_events_typed() {
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo typed"}}]},
        {"text": "all done"}
    ]);
    let (mut pith, _plugins) =
        crate::extensions::probe_reporting("agent-events", script, &[]).await;
    pith.call("p", json!({"type": "prompt", "message": "run it"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(
        notified(&mut pith, "tool_execution_end").await,
        "tool_execution_end bash error=false output=\"typed\\n\""
    );
    assert_eq!(
        notified(&mut pith, "turn_end").await,
        "turn_end answer=\"\" results=[\"bash\"]"
    );
    assert_eq!(
        notified(&mut pith, "turn_end").await,
        "turn_end answer=\"all done\" results=[]"
    );
    // The system record, the prompt, the answer with the call, its result, the last answer; the
    // text came in deltas.
    let end = notified(&mut pith, "agent_end").await;
    let deltas: u32 = end
        .strip_prefix("agent_end messages=5 deltas=")
        .unwrap_or_else(|| panic!("{end}"))
        .parse()
        .unwrap();
    assert!(deltas >= 1, "{end}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_asks_the_extensions_for_resources_once() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = persistent(json!([]), &[]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    let discoveries = |id: &'static str| (id, json!({"type": "prompt", "message": "/discoveries"}));

    // `reload` that changes no plugin still asks (pi's `reload` reason).
    let reloaded = pith.call("r", json!({"type": "reload"})).await;
    assert_eq!(reloaded["success"], true, "{reloaded}");
    let (id, ask) = discoveries("d1");
    pith.call(id, ask).await;
    assert_eq!(
        notified(&mut pith, "discoveries:").await,
        "discoveries: startup=1 reload=1"
    );

    // An extension's reload: every extension starts afresh and is asked once, after its start.
    pith.call("m", json!({"type": "prompt", "message": "/move reload"}))
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (id, ask) = discoveries("d2");
        pith.call(id, ask).await;
        let seen = notified(&mut pith, "discoveries:").await;
        // The old instance answers until the reload replaced it; the new one once asked.
        if seen == "discoveries: startup=0 reload=1" || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // And not asked again.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (id, ask) = discoveries("d3");
    pith.call(id, ask).await;
    assert_eq!(
        notified(&mut pith, "discoveries:").await,
        "discoveries: startup=0 reload=1"
    );
}
