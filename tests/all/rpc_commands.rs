//! Each RPC command over the real pipes: its success shape and its failure shape (the commands
//! around tools: `rpc_tool_commands.rs`).

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

fn slow_script() -> Value {
    json!({"turns": [{"text": "a slow answer that takes a while to stream", "chunks": 20, "delay_ms": 50}, {"text": "second"}, {"text": "third"}]})
}

pub(crate) fn assert_error(frame: &Value, command: &str, id: &str, error: &str) {
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

    // A 1×1 PNG (an image that does not decode is dropped with pi's note, as pi drops it).
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let ok = pith.call("p1", json!({"type": "prompt", "message": "hello", "images": [{"type": "image", "data": png, "mimeType": "image/png"}]})).await;
    assert_eq!(
        ok,
        json!({"id": "p1", "type": "response", "command": "prompt", "success": true, "data": {"disposition": "started"}})
    );
    let user = pith
        .wait_for(|f| f["type"] == "message_start" && f["message"]["role"] == "user")
        .await;
    assert_eq!(
        user["message"]["content"],
        json!([{"type": "text", "text": "hello"}, {"type": "image", "data": png, "mimeType": "image/png"}])
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
