//! The two APIs pi's catalog needs beyond the first four, against fake servers that speak them:
//! `azure-openai-responses` (the endpoint, API version and deployment from pi's `AZURE_OPENAI_*`
//! variables, the key in `api-key`) and `mistral-conversations` (Mistral's chunks, thinking,
//! tool calls, 9-character ids, errors).

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

fn pith_options(
    model: &str,
    env: Vec<(String, String)>,
    agent_files: Vec<(String, String)>,
) -> Options {
    Options {
        args: vec!["--model".into(), model.into(), "--no-session".into()],
        env,
        env_remove: [
            "AZURE_OPENAI_BASE_URL",
            "AZURE_OPENAI_RESOURCE_NAME",
            "AZURE_OPENAI_API_VERSION",
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "AZURE_OPENAI_API_KEY",
            "MISTRAL_API_KEY",
        ]
        .map(String::from)
        .to_vec(),
        agent_files,
        ..Options::default()
    }
}

fn var(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn azure_openai_responses_from_pi_s_variables() {
    let server = FakeLlm::start(json!([
        {"text": "Reading it.", "tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "It printed hi."},
        {"error": {"status": 404, "type": "DeploymentNotFound", "message": "The API deployment for this resource does not exist."}}
    ]))
    .await;
    let env = vec![
        var("AZURE_OPENAI_BASE_URL", &server.url),
        var("AZURE_OPENAI_API_KEY", "azure-key"),
        var(
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4o=other,gpt-5.4=prod-54",
        ),
    ];
    let mut pith = Pith::spawn(pith_options("azure/gpt-5.4", env, Vec::new())).await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][2]["stopReason"], "toolUse", "{end}");
    assert_eq!(end["messages"][3]["content"][0]["text"], "hi\n");
    assert_eq!(end["messages"][4]["content"][0]["text"], "It printed hi.");
    let requests = server.requests();
    assert_eq!(requests[0]["path"], "/responses?api-version=v1");
    assert_eq!(requests[0]["headers"]["api-key"], "azure-key");
    assert!(requests[0]["headers"].get("authorization").is_none());
    assert_eq!(requests[0]["body"]["model"], "prod-54");
    assert_eq!(
        requests[1]["body"]["input"][4],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "hi\n"})
    );
    // An error answer ends the turn with it.
    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    let end = pith.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "error");
    assert!(
        last["errorMessage"].as_str().unwrap().contains("404"),
        "{last}"
    );

    // No endpoint: pi's error, and no request.
    let mut unset = Pith::spawn(pith_options(
        "azure/gpt-5.4",
        vec![var("AZURE_OPENAI_API_KEY", "azure-key")],
        Vec::new(),
    ))
    .await;
    unset
        .call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = unset.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"),
        "{last}"
    );
}

/// A Mistral chunk of the `mistral-medium-latest` stream.
fn chunk(delta: Value, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut chunk = json!({"id": "cmpl_1", "object": "chat.completion.chunk", "created": 1, "model": "mistral-medium-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    if let Some(usage) = usage {
        chunk["usage"] = usage;
    }
    chunk
}

#[tokio::test(flavor = "multi_thread")]
async fn mistral_conversations_thinking_tool_calls_and_errors() {
    let server = FakeLlm::start(json!([
        {"raw_sse": [
            chunk(json!({"role": "assistant", "content": ""}), None, None),
            chunk(json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me think"}]}]}), None, None),
            chunk(json!({"content": "Running it."}), None, None),
            chunk(json!({"tool_calls": [{"id": "D681PevKs", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": "}, "index": 0}]}), None, None),
            chunk(json!({"tool_calls": [{"id": "null", "function": {"name": "", "arguments": "\"echo hi\"}"}, "index": 0}]}), Some("tool_calls"),
                Some(json!({"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57, "prompt_tokens_details": {"cached_tokens": 10}}))),
            "[DONE]"
        ]},
        {"raw_sse": [
            chunk(json!({"content": "It printed hi."}), Some("stop"), None),
            "[DONE]"
        ]},
        {"error": {"status": 401, "type": "unauthorized", "message": "Unauthorized"}}
    ]))
    .await;
    let models = json!({"providers": {"mistral": {"baseUrl": server.url}}});
    let mut pith = Pith::spawn(pith_options(
        "mistral/mistral-medium-latest",
        vec![var("MISTRAL_API_KEY", "mistral-key")],
        vec![("models.json".into(), models.to_string())],
    ))
    .await;
    pith.call("t", json!({"type": "set_thinking_level", "level": "high"}))
        .await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let first = &end["messages"][2];
    assert_eq!(first["stopReason"], "toolUse", "{end}");
    assert_eq!(first["content"][0]["thinking"], "Let me think");
    assert_eq!(first["content"][1]["text"], "Running it.");
    assert_eq!(
        first["content"][2],
        json!({"type": "toolCall", "id": "D681PevKs", "name": "bash", "arguments": {"command": "echo hi"}})
    );
    assert_eq!(first["usage"]["input"], 40);
    assert_eq!(first["usage"]["cacheRead"], 10);
    assert_eq!(first["responseId"], "cmpl_1");
    assert_eq!(end["messages"][4]["content"][0]["text"], "It printed hi.");

    let requests = server.requests();
    assert_eq!(requests[0]["path"], "/v1/chat/completions");
    let headers = &requests[0]["headers"];
    assert_eq!(headers["authorization"], "Bearer mistral-key");
    assert_eq!(headers["accept"], "text/event-stream");
    assert!(headers["x-affinity"].is_string());
    let body = &requests[0]["body"];
    assert_eq!(body["model"], "mistral-medium-latest");
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Run echo hi"})
    );
    assert_eq!(body["prompt_cache_key"], headers["x-affinity"]);
    assert_eq!(body["tools"][0]["function"]["strict"], false);
    let replay = requests[1]["body"]["messages"].as_array().unwrap().clone();
    assert_eq!(
        replay[2],
        json!({"role": "assistant", "prefix": false,
            "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me think"}]}, {"type": "text", "text": "Running it."}],
            "tool_calls": [{"id": "D681PevKs", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo hi\"}"}, "index": 0}]})
    );
    assert_eq!(
        replay[3],
        json!({"role": "tool", "tool_call_id": "D681PevKs", "name": "bash", "content": [{"type": "text", "text": "hi"}]})
    );

    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    let end = pith.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "error");
    assert!(
        last["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("Mistral API error (401): {"),
        "{last}"
    );
}
