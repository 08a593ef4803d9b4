//! Extensions over a `codemode` script's nested calls: their `tool_call` and `tool_result`
//! hooks run for each call the script makes and learn which call made it (pi's
//! `parentToolCallId`), while the model's own calls have none.

use serde_json::json;

use crate::extensions::notified;

#[tokio::test(flavor = "multi_thread")]
async fn hooks_see_the_script_behind_a_nested_call() {
    let script = json!([
        {"tool_calls": [{"id": "call_1", "name": "codemode",
            "arguments": {"code": "return (await tools.bash({command: 'echo nested'})).output;"}}]},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo direct"}}]},
        {"text": "all done"}
    ]);
    let (mut pith, _plugins) =
        crate::extensions::probe_reporting("tool-parents", script, &["--tools", "+codemode"]).await;
    pith.call("p", json!({"type": "prompt", "message": "run it"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(
        notified(&mut pith, "tool_call call_1 ").await,
        "tool_call call_1 parent=None"
    );
    assert_eq!(
        notified(&mut pith, "tool_call call_1/1 ").await,
        "tool_call call_1/1 parent=Some(\"call_1\")"
    );
    assert_eq!(
        notified(&mut pith, "tool_result call_1/1 ").await,
        "tool_result call_1/1 parent=Some(\"call_1\")"
    );
    assert_eq!(
        notified(&mut pith, "tool_result call_1 ").await,
        "tool_result call_1 parent=None"
    );
    assert_eq!(
        notified(&mut pith, "tool_call b1 ").await,
        "tool_call b1 parent=None"
    );
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == "call_1")
        .unwrap();
    assert_eq!(end["isError"], false, "{end}");
}
