//! The anthropic-messages provider component against a fake Anthropic server on loopback:
//! the frames pith writes and the requests the server receives.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn text_answer_and_the_request_pi_would_send() {
    let server = FakeLlm::start(json!([{"text": "Hello from the fake.", "chunks": 3, "usage": {"input": 1200, "output": 12, "cache_read": 5, "cache_write": 7}}])).await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-model")).await;
    pith.call("p", json!({"type": "prompt", "message": "Say hello"}))
        .await;
    let end = pith.until_agent_end().await;
    let answer = &end["messages"][2];
    assert_eq!(
        answer["content"],
        json!([{"type": "text", "text": "Hello from the fake."}])
    );
    assert_eq!(answer["api"], "anthropic-messages");
    assert_eq!(answer["provider"], "fake");
    assert_eq!(answer["stopReason"], "stop");
    assert_eq!(answer["responseId"], "msg_fake_0");
    assert_eq!(answer["usage"]["input"], 1200);
    assert_eq!(answer["usage"]["output"], 12);
    assert_eq!(answer["usage"]["cacheRead"], 5);
    assert_eq!(answer["usage"]["cacheWrite"], 7);
    assert_eq!(answer["usage"]["totalTokens"], 1224);
    let deltas: Vec<&str> = pith
        .frames
        .iter()
        .filter(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .map(|f| f["assistantMessageEvent"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas.concat(), "Hello from the fake.");
    assert_eq!(deltas.len(), 3);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request["path"], "/v1/messages");
    assert_eq!(request["headers"]["x-api-key"], "fake-key");
    assert_eq!(request["headers"]["anthropic-version"], "2023-06-01");
    assert_eq!(
        request["headers"]["anthropic-beta"],
        "interleaved-thinking-2025-05-14"
    );
    let body = &request["body"];
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], true);
    assert!(body.get("thinking").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}]}])
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are a coding assistant running inside pith")
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"bash"), "{tools:?}");
    let bash = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bash")
        .unwrap();
    assert_eq!(bash["eager_input_streaming"], true);
    assert_eq!(bash["input_schema"]["required"], json!(["command"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_answer_with_budget_and_signature() {
    let server = FakeLlm::start(json!([{"thinking": "Keep it short.", "thinking_chunks": 3, "signature": "c2ln", "text": "Hi!", "chunks": 2}])).await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-reasoner")).await;
    pith.call("t", json!({"type": "set_thinking_level", "level": "high"}))
        .await;
    pith.call("p", json!({"type": "prompt", "message": "Greet me"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(
        end["messages"][2]["content"],
        json!([{"type": "thinking", "thinking": "Keep it short.", "thinkingSignature": "c2ln"}, {"type": "text", "text": "Hi!"}])
    );
    let kinds: Vec<&str> = pith
        .frames
        .iter()
        .filter_map(|f| f["assistantMessageEvent"]["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end"
        ]
    );
    let body = &server.requests()[0]["body"];
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 15360, "display": "summarized"})
    );
    assert_eq!(body["max_tokens"], 16384);
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_call_round_trip_carries_the_result_back() {
    let server = FakeLlm::start(json!([
        {"text": "Let me run that.", "tool_calls": [{"id": "toolu_bash_1", "name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "The command printed: hi"}
    ]))
    .await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-model")).await;
    pith.call("p", json!({"type": "prompt", "message": "Run echo hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let roles: Vec<&str> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(end["messages"][2]["stopReason"], "toolUse");
    assert_eq!(
        end["messages"][3]["content"],
        json!([{"type": "text", "text": "hi\n"}])
    );
    let second = &server.requests()[1]["body"]["messages"];
    assert_eq!(
        second[1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Let me run that."}, {"type": "tool_use", "id": "toolu_bash_1", "name": "bash", "input": {"command": "echo hi"}}]})
    );
    assert_eq!(
        second[2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bash_1", "content": "hi\n", "is_error": false, "cache_control": {"type": "ephemeral"}}]})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn http_errors_stream_errors_and_cut_streams_end_the_turn_with_an_error() {
    let server = FakeLlm::start(json!([
        {"error": {"status": 400, "type": "invalid_request_error", "message": "bad request"}},
        {"text": "partial answer", "stream_error": "Overloaded"},
        {"text": "cut", "truncate": true}
    ]))
    .await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"enabled": false}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    let mut errors = Vec::new();
    for id in ["a", "b", "c"] {
        pith.call(id, json!({"type": "prompt", "message": "go"}))
            .await;
        let end = pith.until_agent_end().await;
        let last: &Value = end["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["stopReason"], "error", "{last}");
        errors.push(last["errorMessage"].as_str().unwrap().to_string());
    }
    assert_eq!(
        errors[0],
        r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}"#
    );
    assert_eq!(errors[1], "Overloaded");
    assert_eq!(
        errors[2],
        "The connection closed before the response was complete"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_drops_the_http_request() {
    let server = FakeLlm::start(json!([{"text": "a long and slow answer that will not finish", "chunks": 40, "delay_ms": 100}])).await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-model")).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    pith.call("a", json!({"type": "abort"})).await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert_eq!(
        server.disconnects.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the server saw the disconnect"
    );
}

fn with_fast_retry(mut options: support::rpc::Options) -> support::rpc::Options {
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"baseDelayMs": 50}}).to_string(),
    ));
    options
}

fn overloaded() -> Value {
    json!({"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn two_overloads_then_success_are_retried() {
    let server = FakeLlm::start(json!([overloaded(), overloaded(), {"text": "finally"}])).await;
    let mut pith = Pith::spawn(with_fast_retry(anthropic_fake(&server.url, "fake-model"))).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "auto_retry_end").await;
    assert_eq!(
        end,
        json!({"type": "auto_retry_end", "success": true, "attempt": 2})
    );
    pith.until_agent_end().await;
    let starts: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "auto_retry_start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0]["attempt"], 1);
    assert_eq!(starts[0]["maxAttempts"], 3);
    assert_eq!(starts[0]["delayMs"], 50);
    assert_eq!(starts[1]["delayMs"], 100);
    assert!(
        starts[0]["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("529 ")
    );
    assert_eq!(
        pith.frames
            .iter()
            .filter(|f| f["type"] == "agent_start")
            .count(),
        3
    );
    // The failed answers are out of the context: user + the good answer.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert_eq!(server.requests().len(), 3);
    // pi 1.5's visible retries: each failed run ends (`willRetry`), the retry is announced,
    // then its answer is taken out of the context (`entry_appended`), as pi 1.5.2 orders them
    // (the print-mode golden `json_error_500_retry_fast`); `agent_settled` comes last (it may
    // come after the answer to `get_messages`).
    if !pith.frames.iter().any(|f| f["type"] == "agent_settled") {
        pith.wait_for(|f| f["type"] == "agent_settled").await;
    }
    let sequence: Vec<String> =
        pith.frames
            .iter()
            .filter_map(|f| match f["type"].as_str()? {
                "agent_end" => Some(format!("agent_end:{}", f["willRetry"])),
                kind @ ("entry_appended" | "auto_retry_start" | "auto_retry_end"
                | "agent_settled") => Some(kind.to_string()),
                _ => None,
            })
            .collect();
    assert_eq!(
        sequence,
        [
            "agent_end:true",
            "auto_retry_start",
            "entry_appended",
            "agent_end:true",
            "auto_retry_start",
            "entry_appended",
            "auto_retry_end",
            "agent_end:false",
            "agent_settled"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn exhausted_retries_and_abort_retry() {
    let server = FakeLlm::start(json!([
        overloaded(),
        overloaded(),
        overloaded(),
        overloaded()
    ]))
    .await;
    let mut pith = Pith::spawn(with_fast_retry(anthropic_fake(&server.url, "fake-model"))).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "auto_retry_end").await;
    assert_eq!(end["success"], false);
    assert_eq!(end["attempt"], 3);
    assert!(end["finalError"].as_str().unwrap().contains("Overloaded"));

    let server = FakeLlm::start(json!([overloaded(), {"text": "never asked"}])).await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"baseDelayMs": 5000}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["type"] == "auto_retry_start").await;
    pith.call("ar", json!({"type": "abort_retry"})).await;
    let end = pith.wait_for(|f| f["type"] == "auto_retry_end").await;
    assert_eq!(
        end,
        json!({"type": "auto_retry_end", "success": false, "attempt": 1, "finalError": "Retry cancelled"})
    );
    assert_eq!(server.requests().len(), 1);
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["isStreaming"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_selection_flags_shape_the_request() {
    let tools_of = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    for (flags, expected) in [
        (vec![], vec!["read", "bash", "edit", "write"]),
        (vec!["--tools", "grep,read,ls"], vec!["read", "grep", "ls"]),
        (vec!["--no-tools"], vec![]),
    ] {
        let server = FakeLlm::start(json!([{"text": "ok"}])).await;
        let mut options = anthropic_fake(&server.url, "fake-model");
        options.args.extend(flags.iter().map(|f| f.to_string()));
        let mut pith = Pith::spawn(options).await;
        pith.call("p", json!({"type": "prompt", "message": "hi"}))
            .await;
        pith.until_agent_end().await;
        let body = &server.requests()[0]["body"];
        assert_eq!(tools_of(body), expected, "{flags:?}");
        let system = body["system"][0]["text"].as_str().unwrap();
        for tool in &expected {
            assert!(
                system.contains(&format!("- {tool}: ")),
                "{tool} missing from the system prompt"
            );
        }
    }
}
