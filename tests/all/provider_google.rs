//! The google-generative-ai provider component against a fake Gemini server.

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};
use serde_json::json;

fn options(url: &str) -> Options {
    let models = json!({"providers": {"fake-gemini": {
        "baseUrl": format!("{url}/v1beta"), "api": "google-generative-ai", "apiKey": "fake-key",
        "models": [{"id": "fake-flash", "name": "Fake Flash", "reasoning": true, "contextWindow": 1000000, "maxTokens": 8192}]}}});
    Options {
        args: vec![
            "--provider".into(),
            "fake-gemini".into(),
            "--model".into(),
            "fake-flash".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn thoughts_text_and_function_call_round_trip() {
    let server = FakeLlm::start(json!([
        {"thinking": "Consider.", "text": "Running.", "tool_calls": [{"id": "g1", "name": "bash", "arguments": {"command": "echo hi"}}], "usage": {"input": 50, "output": 9, "cache_read": 10}},
        {"text": "Done: hi"}
    ]))
    .await;
    let mut pith = Pith::spawn(options(&server.url)).await;
    pith.call(
        "t",
        json!({"type": "set_thinking_level", "level": "medium"}),
    )
    .await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let first = &end["messages"][2];
    assert_eq!(first["stopReason"], "toolUse");
    assert_eq!(
        first["content"][0],
        json!({"type": "thinking", "thinking": "Consider."})
    );
    assert_eq!(
        first["content"][1],
        json!({"type": "text", "text": "Running."})
    );
    assert_eq!(
        first["content"][2],
        json!({"type": "toolCall", "id": "g1", "name": "bash", "arguments": {"command": "echo hi"}, "thoughtSignature": "c2ln"})
    );
    assert_eq!(first["usage"]["input"], 50);
    assert_eq!(first["usage"]["cacheRead"], 10);
    assert_eq!(end["messages"][4]["content"][0]["text"], "Done: hi");

    let requests = server.requests();
    assert_eq!(
        requests[0]["path"],
        "/v1beta/models/fake-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(requests[0]["headers"]["x-goog-api-key"], "fake-key");
    let body = &requests[0]["body"];
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 8192, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}})
    );
    assert!(
        body["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are a coding assistant")
    );
    assert!(
        body["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "bash")
    );
    let contents = &requests[1]["body"]["contents"];
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(
        contents[1]["parts"][2],
        json!({"functionCall": {"name": "bash", "args": {"command": "echo hi"}, "id": "g1"}, "thoughtSignature": "c2ln"})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "bash", "id": "g1", "response": {"output": "hi\n"}}}]})
    );
}
