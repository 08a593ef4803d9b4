//! The openai-completions provider component against a fake OpenAI-compatible server declared
//! only in models.json: frames, usage, reasoning and the requests the server receives.

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, openai_fake};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn tool_call_with_reasoning_round_trip() {
    let server = FakeLlm::start(json!([
        {"thinking": "Need to run a command.", "thinking_chunks": 2, "text": "Running it.", "chunks": 2,
         "tool_calls": [{"id": "call_bash_1", "name": "bash", "arguments": {"command": "echo hi"}}], "json_chunks": 3,
         "usage": {"input": 1500, "output": 40, "cache_read": 500}},
        {"text": "It printed hi.", "chunks": 3, "usage": {"input": 1600, "output": 10}}
    ]))
    .await;
    let mut pith = Pith::spawn(openai_fake(&server.url, "fake-gpt")).await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let first = &end["messages"][2];
    assert_eq!(
        first["content"],
        json!([
            {"type": "thinking", "thinking": "Need to run a command.", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "Running it."},
            {"type": "toolCall", "id": "call_bash_1", "name": "bash", "arguments": {"command": "echo hi"}}
        ])
    );
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(first["usage"]["input"], 1500);
    assert_eq!(first["usage"]["cacheRead"], 500);
    assert_eq!(first["usage"]["output"], 40);
    assert_eq!(first["responseId"], "chatcmpl-fake0");
    assert_eq!(
        end["messages"][4]["content"],
        json!([{"type": "text", "text": "It printed hi."}])
    );

    let requests = server.requests();
    assert_eq!(requests[0]["path"], "/v1/chat/completions");
    assert_eq!(requests[0]["headers"]["authorization"], "Bearer fake-key");
    let body = &requests[0]["body"];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["store"], false);
    assert_eq!(body["max_completion_tokens"], 4096);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": [{"type": "text", "text": "Run echo hi"}]})
    );
    let bash = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "bash")
        .unwrap();
    assert_eq!(bash["type"], "function");
    // pi 1.5.2 sends no `strict` unless the model's compat says the server takes it.
    assert!(bash["function"].get("strict").is_none(), "{bash}");
    let second = &requests[1]["body"]["messages"];
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": "Running it.", "reasoning_content": "Need to run a command.",
               "tool_calls": [{"id": "call_bash_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo hi\"}"}}]})
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "content": "hi\n", "tool_call_id": "call_bash_1"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_effort_follows_the_thinking_level() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let mut pith = Pith::spawn(openai_fake(&server.url, "fake-o")).await;
    pith.call("t", json!({"type": "set_thinking_level", "level": "low"}))
        .await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(server.requests()[0]["body"]["reasoning_effort"], "low");
    let models = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    let ids: Vec<&str> = models["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"fake-gpt") && ids.contains(&"fake-o"),
        "{ids:?}"
    );
}
