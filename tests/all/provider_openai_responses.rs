//! The openai-responses provider component against a fake Responses API server.

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};
use serde_json::json;

fn options(url: &str) -> Options {
    let models = json!({"providers": {"fake-responses": {
        "baseUrl": format!("{url}/v1"), "api": "openai-responses", "apiKey": "fake-key",
        "models": [{"id": "fake-5", "name": "Fake 5", "reasoning": true, "contextWindow": 400000, "maxTokens": 32000}]}}});
    Options {
        args: vec![
            "--provider".into(),
            "fake-responses".into(),
            "--model".into(),
            "fake-5".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_text_and_tool_call_round_trip() {
    let server = FakeLlm::start(json!([
        {"thinking": "Plan it.", "text": "Running it.", "tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hi"}}], "usage": {"input": 300, "output": 30, "cache_read": 100}},
        {"text": "It printed hi."}
    ]))
    .await;
    let mut pith = Pith::spawn(options(&server.url)).await;
    pith.call("t", json!({"type": "set_thinking_level", "level": "high"}))
        .await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let first = &end["messages"][2];
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(first["content"][0]["type"], "thinking");
    assert_eq!(first["content"][0]["thinking"], "Plan it.");
    assert_eq!(
        first["content"][1],
        json!({"type": "text", "text": "Running it.", "textSignature": "msg_0"})
    );
    assert_eq!(
        first["content"][2],
        json!({"type": "toolCall", "id": "call_1|fc_0_0", "name": "bash", "arguments": {"command": "echo hi"}})
    );
    assert_eq!(first["usage"]["input"], 300);
    assert_eq!(first["usage"]["cacheRead"], 100);
    assert_eq!(first["responseId"], "resp_fake_0");
    assert_eq!(end["messages"][3]["content"][0]["text"], "hi\n");
    assert_eq!(end["messages"][4]["content"][0]["text"], "It printed hi.");

    let requests = server.requests();
    assert_eq!(requests[0]["path"], "/v1/responses");
    let body = &requests[0]["body"];
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["input"][0]["role"], "developer");
    assert_eq!(
        body["input"][1],
        json!({"role": "user", "content": [{"type": "input_text", "text": "Run echo hi"}]})
    );
    let second = requests[1]["body"]["input"].as_array().unwrap().clone();
    assert_eq!(second[2]["type"], "reasoning");
    assert_eq!(second[2]["encrypted_content"], "enc");
    assert_eq!(second[3]["id"], "msg_0");
    assert_eq!(
        second[4],
        json!({"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"echo hi\"}", "id": "fc_0_0"})
    );
    assert_eq!(
        second[5],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "hi\n"})
    );
}

/// `PI_CACHE_RETENTION=long` keeps the Responses API's cached prefix a day
/// (`prompt_cache_retention: "24h"`, as pi 1.5.2 sends it); without it nothing is sent.
#[tokio::test(flavor = "multi_thread")]
async fn long_cache_retention_is_asked_for() {
    for (value, expected) in [
        (Some("long"), json!("24h")),
        (None, serde_json::Value::Null),
    ] {
        let server = FakeLlm::start(json!([{"text": "ok"}])).await;
        let mut options = options(&server.url);
        options.env_remove.push("PI_CACHE_RETENTION".into());
        if let Some(value) = value {
            options
                .env
                .push(("PI_CACHE_RETENTION".into(), value.into()));
        }
        let mut pith = Pith::spawn(options).await;
        pith.call("p", json!({"type": "prompt", "message": "hello"}))
            .await;
        pith.until_agent_end().await;
        assert_eq!(
            server.requests()[0]["body"]["prompt_cache_retention"],
            expected
        );
    }
}
