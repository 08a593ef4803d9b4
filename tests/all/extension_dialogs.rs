//! Extension dialogs over the real pipes: every kind answered by the host, timeouts that resolve
//! the default, a dialog opened in `session_start`, and the permission gate's confirm before bash.

use crate::extensions::{is_ui, notified, spawn_with};
use crate::support;
use crate::support::keys;

use crate::support::rpc::{Options, Pith};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn the_host_answers_every_kind_of_dialog() {
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], json!([])).await;
    let status = pith.wait_for(|f| is_ui(f, "setStatus")).await;
    assert_eq!(status["statusKey"], "probe");
    assert_eq!(status["statusText"], "started");

    let answers = [
        (
            "select",
            json!({"value": "green"}),
            "answer: Some(\"green\")",
        ),
        ("confirm", json!({"confirmed": true}), "answer: true"),
        ("input", json!({"value": "Ada"}), "answer: Some(\"Ada\")"),
        ("editor", json!({"cancelled": true}), "answer: None"),
    ];
    for (method, answer, expected) in answers {
        // The command's answer comes once it has returned, so after its dialog (as pi's).
        pith.send(json!({"id": method, "type": "prompt", "message": format!("/ask {method}")}))
            .await;
        let request = pith.wait_for(|f| is_ui(f, method)).await;
        let expected_keys: &[&str] = match method {
            "select" => &["type", "id", "method", "title", "options"],
            "confirm" => &["type", "id", "method", "title", "message"],
            "input" => &["type", "id", "method", "title", "placeholder"],
            _ => &["type", "id", "method", "title", "prefill"],
        };
        assert_eq!(keys(&request), expected_keys, "{request}");
        // An answer to an unknown id, or of the wrong type, is an error that says why; the
        // dialog stays open.
        let unknown = pith
            .call(
                "nobody",
                json!({"type": "extension_ui_response", "value": "x"}),
            )
            .await;
        assert_eq!(
            unknown,
            json!({"id": "nobody", "type": "response", "command": "extension_ui_response", "success": false,
                "error": "No open dialog with id \"nobody\": it was answered, cancelled or timed out"})
        );
        if method == "confirm" {
            let id = request["id"].as_str().unwrap();
            let wrong = pith
                .call(
                    id,
                    json!({"type": "extension_ui_response", "confirmed": "yes"}),
                )
                .await;
            assert_eq!(
                wrong["error"],
                "Field \"confirmed\" must be true or false, got \"yes\" (the dialog stays open)"
            );
        }
        let mut reply = answer.clone();
        reply["type"] = json!("extension_ui_response");
        reply["id"] = request["id"].clone();
        pith.send(reply).await;
        let response = pith.response(method).await;
        assert_eq!(response["success"], true, "{response}");
        assert_eq!(notified(&mut pith, "answer:").await, expected);
    }
    // The good answers got no response (as in pi): only the bad ones did.
    assert_eq!(
        pith.frames
            .iter()
            .filter(|f| f["type"] == "response" && f["command"] == "extension_ui_response")
            .count(),
        5,
        "{:#?}",
        pith.frames
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_timeout_resolves_the_default_and_tells_the_host() {
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], json!([])).await;
    pith.send(json!({"id": "c", "type": "prompt", "message": "/ask confirm 200"}))
        .await;
    let request = pith.wait_for(|f| is_ui(f, "confirm")).await;
    assert_eq!(request["timeout"], 200);
    let cancel = pith.wait_for(|f| is_ui(f, "cancel")).await;
    assert_eq!(keys(&cancel), ["type", "id", "method", "targetId"]);
    assert_eq!(cancel["targetId"], request["id"]);
    assert_ne!(cancel["id"], request["id"]);
    assert_eq!(notified(&mut pith, "answer:").await, "answer: false");
    // A late answer is ignored and the process keeps serving.
    pith.send(json!({"type": "extension_ui_response", "id": request["id"], "confirmed": true}))
        .await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true);

    pith.call(
        "s2",
        json!({"type": "prompt", "message": "/ask select 100"}),
    )
    .await;
    pith.since_sent(|f| is_ui(f, "cancel")).await;
    assert_eq!(notified(&mut pith, "answer:").await, "answer: None");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_opened_in_session_start_is_answered() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let settings = json!({"plugins": {"ext-probe": {"grant": {"config": ["start-dialog"]}, "config": {"start-dialog": "yes"}}}});
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        agent_files: vec![("settings.json".into(), settings.to_string())],
        ..Options::default()
    })
    .await;
    let request = pith.wait_for(|f| is_ui(f, "input")).await;
    // Commands are served while the dialog waits.
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true);
    pith.send(json!({"type": "extension_ui_response", "id": request["id"], "value": "Ada"}))
        .await;
    assert_eq!(
        notified(&mut pith, "answer:").await,
        "answer: Some(\"Ada\")"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_permission_gate_blocks_bash_unless_the_user_allows_it() {
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo one"}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": "echo two"}}]},
        {"text": "done"}
    ]);
    let (mut pith, _plugins) = spawn_with(&["examples/permission-gate"], script).await;
    pith.call("p", json!({"type": "prompt", "message": "run"}))
        .await;
    let ask = pith.wait_for(|f| is_ui(f, "confirm")).await;
    assert_eq!(ask["title"], "Allow bash?");
    assert_eq!(ask["message"], "echo one");
    assert_eq!(ask["timeout"], 60000);
    pith.send(json!({"type": "extension_ui_response", "id": ask["id"], "confirmed": false}))
        .await;
    let ask = pith.wait_for(|f| is_ui(f, "confirm")).await;
    assert_eq!(ask["message"], "echo two");
    pith.send(json!({"type": "extension_ui_response", "id": ask["id"], "confirmed": true}))
        .await;
    let end = pith.until_agent_end().await;
    let results = support::rpc::tool_results(&end);
    assert_eq!(results[0]["isError"], true);
    assert_eq!(
        results[0]["content"][0]["text"],
        "The user did not allow: echo one"
    );
    assert_eq!(results[1]["isError"], false);
    assert_eq!(results[1]["content"][0]["text"], "two\n");
    // The blocked call still has its start and end events, in pi's order.
    let starts = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_start")
        .count();
    let ends = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .count();
    assert_eq!((starts, ends), (2, 2));
}
