//! `pith --mode acp` over its real pipes with raw JSON-RPC: compaction, a tool added by hot
//! reload during a session, the todo list as a plan, a `bash` call's output, config options,
//! extension commands and their dialogs (as permission requests, as forms, or cancelled), and
//! notices. The official TypeScript SDK's test is in `acp_client.rs`.

use serde_json::{Value, json};

use crate::support;
use crate::support::acp::Acp;
use crate::support::rpc::Options;

/// The text of a `session/update` content list (text blocks joined).
fn texts(content: &Value) -> String {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["content"]["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_is_reported_and_the_session_goes_on() {
    let long = |word: &str| format!("{word} ").repeat(200);
    let mut options = Options::faux(json!([
        {"text": long("one")},
        {"text": long("two")},
        {"text": "## Summary\nTwo questions."},
        {"text": "answer three"}
    ]));
    options.agent_files.push((
        "settings.json".into(),
        json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
    ));
    let mut acp = Acp::start(options, json!({"session": {"compaction": {}}})).await;
    let session = acp.new_session().await;
    for question in ["question one", "question two"] {
        let done = acp.prompt(&session, question).await;
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    }
    let compacted = acp.prompt(&session, "/compact keep it short").await;
    assert_eq!(compacted["result"]["stopReason"], "end_turn", "{compacted}");
    let updates = acp.updates("compaction_update");
    assert_eq!(updates.len(), 2, "{updates:?}");
    assert_eq!(updates[0]["status"], "in_progress");
    assert_eq!(updates[1]["status"], "completed");
    assert_eq!(updates[0]["compactionId"], updates[1]["compactionId"]);
    assert!(
        !updates[1]["summary"][0]["text"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    // The session goes on after it.
    let next = acp.prompt(&session, "question three").await;
    assert_eq!(next["result"]["stopReason"], "end_turn", "{next}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_by_hot_reload_is_called_in_the_same_session() {
    let plugins = support::plugins_dir_with(&[]);
    let mut options = Options::faux(json!([
        {"tool_calls": [{"id": "c1", "name": "word_count", "arguments": {"path": "notes.txt"}}]},
        {"text": "counted"}
    ]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options
        .work_files
        .push(("notes.txt".into(), "a b c\n".into()));
    let mut acp = Acp::start(options, json!({})).await;
    let session = acp.new_session().await;
    let first = acp.update("available_commands_update").await;
    assert!(
        !first["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "hello")
    );
    support::install_plugin(plugins.path(), "examples/word-count");
    support::install_plugin(plugins.path(), "examples/hello-extension");
    // The reload reaches the session: its commands now hold the extension's.
    let reloaded = acp.update("available_commands_update").await;
    assert!(
        reloaded["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "hello" && c["description"] == "Say hello"),
        "{reloaded}"
    );
    let done = acp.prompt(&session, "count the words").await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let call = &acp.updates("tool_call")[0];
    assert_eq!(call["toolCallId"], "c1");
    assert_eq!(call["title"], "word_count");
    // `other`, the default kind, goes unsaid.
    assert!(call["kind"].is_null() || call["kind"] == "other", "{call}");
    let end = acp.updates("tool_call_update").pop().unwrap();
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(texts(&end["content"]), "1 lines, 3 words, 6 bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn todos_are_a_plan_and_bash_output_is_a_terminal_transcript() {
    let phases = json!([
        {"name": "Look", "tasks": [{"content": "read the notes", "status": "completed"}]},
        {"name": "Write", "tasks": [{"content": "draft", "status": "in_progress"},
                                    {"content": "ship", "status": "pending"}]}
    ]);
    let mut options = Options::faux(json!([
        {"tool_calls": [{"id": "t1", "name": "todo", "arguments": {"phases": phases}}]},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo from-bash"}}]},
        {"text": "done"}
    ]));
    options.args.extend(["--tools".into(), "todo,bash".into()]);
    let mut acp = Acp::start(options, json!({})).await;
    let session = acp.new_session().await;
    let done = acp.prompt(&session, "plan and run").await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let plan = acp.updates("plan").pop().expect("a plan");
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "Look: read the notes", "priority": "medium", "status": "completed"},
            {"content": "Write: draft", "priority": "medium", "status": "in_progress"},
            {"content": "Write: ship", "priority": "medium", "status": "pending"}
        ])
    );
    let calls = acp.updates("tool_call");
    assert_eq!(calls[0]["kind"], "think");
    assert_eq!(calls[1]["kind"], "execute");
    assert_eq!(calls[1]["title"], "`echo from-bash`");
    let bash_end = acp
        .updates("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == "b1" && u["status"] == "completed")
        .expect("the bash call completes");
    assert_eq!(texts(&bash_end["content"]), "```console\nfrom-bash\n```");
}

#[tokio::test(flavor = "multi_thread")]
async fn config_options_set_the_thinking_level_and_refuse_what_is_unknown() {
    let mut acp = Acp::start(Options::faux(json!([])), json!({})).await;
    let session = acp.new_session().await;
    let set = acp
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "model", "value": "faux/faux-model"}),
        )
        .await;
    let options = &set["result"]["configOptions"];
    assert_eq!(options[0]["currentValue"], "faux/faux-model", "{set}");
    assert_eq!(
        options[1]["options"],
        json!([{"value": "off", "name": "off"}])
    );
    let unknown_model = acp
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "model", "value": "faux/none"}),
        )
        .await;
    assert_eq!(unknown_model["error"]["code"], -32602, "{unknown_model}");
    let unknown_option = acp
        .request(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "mode", "value": "fast"}),
        )
        .await;
    assert_eq!(unknown_option["error"]["code"], -32602);
    assert!(
        unknown_option["error"]["message"]
            .as_str()
            .unwrap()
            .contains("model and thinking"),
        "{unknown_option}"
    );
    // A session's folder must be an absolute, existing directory.
    for (cwd, says) in [
        ("relative/dir", "cwd must be an absolute path"),
        ("/no/such/folder", "is not a directory"),
    ] {
        let refused = acp
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"].as_str().unwrap().contains(says),
            "{refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn extension_dialogs_are_forms_or_permission_requests_and_notifications_notices() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe", "examples/hello-extension"]);
    let options = || Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(json!([]))
    };
    // A client with forms and notices.
    let capabilities = json!({"elicitation": {"form": {}}, "session": {"notices": {}}});
    let mut acp = Acp::start(options(), capabilities).await;
    let session = acp.new_session().await;
    let greeting = acp.update("notice").await;
    assert_eq!(greeting["title"], "hello from an extension");
    assert_eq!(greeting["severity"], "info");
    let id = acp
        .send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "/ask select"}]}),
        )
        .await;
    let form = acp.incoming("elicitation/create").await;
    assert_eq!(form["params"]["message"], "Pick one");
    assert_eq!(form["params"]["mode"], "form");
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["value"]["enum"],
        json!(["red", "green"])
    );
    acp.reply(
        &form,
        json!({"action": "accept", "content": {"value": "green"}}),
    )
    .await;
    let answered = acp.update("notice").await;
    assert_eq!(answered["title"], "answer: Some(\"green\")");
    assert_eq!(acp.response(id).await["result"]["stopReason"], "end_turn");
    let commanded = acp.prompt(&session, "/hello world").await;
    assert_eq!(commanded["result"]["stopReason"], "end_turn");
    assert_eq!(
        acp.updates("notice").pop().unwrap()["title"],
        "hello world (#1)"
    );

    // A client with neither: a select is a permission request with one option per choice, an
    // editor is cancelled (the extension is told), notifications are dropped.
    let mut plain = Acp::start(options(), json!({})).await;
    let session = plain.new_session().await;
    let id = plain
        .send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "/ask select"}]}),
        )
        .await;
    let permission = plain.incoming("session/request_permission").await;
    let options = &permission["params"]["options"];
    assert_eq!(options[0]["name"], "red");
    assert_eq!(options[1]["name"], "green");
    let call = permission["params"]["toolCall"]["toolCallId"].clone();
    let shown = plain
        .updates("tool_call")
        .pop()
        .expect("the dialog shown as a call");
    assert_eq!(shown["toolCallId"], call);
    assert_eq!(shown["title"], "Pick one");
    plain
        .reply(
            &permission,
            json!({"outcome": {"outcome": "selected", "optionId": options[1]["optionId"]}}),
        )
        .await;
    assert_eq!(plain.response(id).await["result"]["stopReason"], "end_turn");
    let closed = plain.updates("tool_call_update").pop().unwrap();
    assert_eq!(closed["toolCallId"], call);
    assert_eq!(closed["status"], "completed");
    let editor = plain.prompt(&session, "/ask editor").await;
    assert_eq!(editor["result"]["stopReason"], "end_turn");
    assert!(plain.updates("notice").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_asking_about_a_tool_call_asks_on_that_call() {
    let plugins = support::plugins_dir_with(&["examples/permission-gate"]);
    let options = Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(json!([
            {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo gated"}}]},
            {"text": "told"}
        ]))
    };
    let mut acp = Acp::start(options, json!({})).await;
    let session = acp.new_session().await;
    let id = acp
        .send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]}),
        )
        .await;
    let permission = acp.incoming("session/request_permission").await;
    assert_eq!(permission["params"]["toolCall"]["toolCallId"], "b1");
    assert_eq!(permission["params"]["toolCall"]["kind"], "execute");
    acp.reply(
        &permission,
        json!({"outcome": {"outcome": "selected", "optionId": "reject"}}),
    )
    .await;
    assert_eq!(acp.response(id).await["result"]["stopReason"], "end_turn");
    let end = acp
        .updates("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == "b1")
        .unwrap();
    assert_eq!(end["status"], "failed", "{end}");
    assert!(texts(&end["content"]).contains("did not allow"), "{end}");
    // No dialog of its own was shown.
    assert_eq!(acp.updates("tool_call").len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_open_already_is_replayed_not_opened_twice_and_close_frees_it() {
    // Slow enough for a second prompt to come while it streams.
    let mut options = support::rpc::persistent(
        json!([{"text": "first answer", "chunks": 20, "delay_ms": 25}]),
        &[],
    );
    options.mode = "acp";
    let mut acp = Acp::start(options, json!({})).await;
    let session = acp.new_session().await;
    acp.prompt(&session, "hello").await;
    let before = acp.pith.frames.len();
    let cwd = acp.pith.work_dir();
    let loaded = acp
        .request(
            "session/load",
            json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
        )
        .await;
    assert!(loaded["result"]["configOptions"].is_array(), "{loaded}");
    let replayed: Vec<&Value> = acp.pith.frames[before..]
        .iter()
        .filter(|f| f["method"] == "session/update")
        .collect();
    assert_eq!(
        replayed[0]["params"]["update"]["content"]["text"], "hello",
        "{replayed:?}"
    );
    // Still one session: the next prompt continues the same conversation.
    let again = acp.prompt(&session, "again").await;
    assert_eq!(again["result"]["stopReason"], "end_turn", "{again}");
    let files: Vec<_> = std::fs::read_dir(acp.pith.work_dir().join("sessions"))
        .unwrap()
        .collect();
    assert_eq!(files.len(), 1);
    let closed = acp
        .request("session/close", json!({"sessionId": session}))
        .await;
    assert_eq!(closed["result"], json!({}), "{closed}");
    let gone = acp.prompt(&session, "still there?").await;
    assert_eq!(gone["error"]["code"], -32002, "{gone}");
    // A second prompt while one runs is refused with what to do.
    let session = acp.new_session().await;
    let slow = acp
        .send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "slow"}]}),
        )
        .await;
    let second = acp.prompt(&session, "me too").await;
    assert_eq!(second["error"]["code"], -32600, "{second}");
    assert!(
        second["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session/cancel")
    );
    acp.response(slow).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_servers_are_ignored_when_the_settings_say_so() {
    let mut options = Options::faux(json!([]));
    options.agent_files.push((
        "settings.json".into(),
        json!({"acp": {"mcpServers": "ignore"}}).to_string(),
    ));
    let mut acp = Acp::start(options, json!({})).await;
    let cwd = acp.pith.work_dir();
    let created = acp
        .request(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [
                {"name": "x", "command": "/bin/true", "args": [], "env": []}]}),
        )
        .await;
    assert!(created["result"]["sessionId"].is_string(), "{created}");
}
