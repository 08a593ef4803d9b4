//! models.json's `compat` and `samplingParams` on the openai-completions API, each checked in
//! the request body the fake server received, against pi 1.5.2's rules (its `getCompat`,
//! `buildParams` and `convertMessages`): the defaults, each switch, pi's detection from the
//! provider's name, the thinking formats, the sampling parameters, merging, and the checks of
//! the file.

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

/// The bodies the fake server received for a run of `turns` against the model `model` (a
/// models.json entry) of the provider `provider` (with `provider_extra` keys), at thinking
/// level `thinking`.
async fn bodies(
    provider: &str,
    provider_extra: Value,
    model: Value,
    thinking: &str,
    turns: Value,
) -> (Vec<Value>, Value) {
    let server = FakeLlm::start(turns).await;
    let mut entry = json!({"baseUrl": format!("{}/v1", server.url), "api": "openai-completions",
        "apiKey": "fake-key", "models": [model.clone()]});
    for (key, value) in provider_extra.as_object().into_iter().flatten() {
        entry[key] = value.clone();
    }
    let models = json!({"providers": {provider: entry}});
    let options = Options {
        args: vec![
            "--model".into(),
            format!("{provider}/{}", model["id"].as_str().unwrap()),
            "--thinking".into(),
            thinking.into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let bodies = server
        .requests()
        .iter()
        .map(|r| r["body"].clone())
        .collect();
    (bodies, end)
}

async fn one_body(model: Value, thinking: &str) -> Value {
    bodies("local", json!({}), model, thinking, json!([{"text": "ok"}]))
        .await
        .0
        .remove(0)
}

fn tool<'a>(body: &'a Value, name: &str) -> &'a Value {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == name)
        .unwrap()
}

/// With no `compat`: pi's defaults for an unknown host (store, usage, max_completion_tokens,
/// no `strict` on tools, the system role for a model that does not reason).
#[tokio::test(flavor = "multi_thread")]
async fn the_defaults_are_pis() {
    let body = one_body(json!({"id": "m", "maxTokens": 512}), "off").await;
    assert_eq!(body["store"], false);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_completion_tokens"], 512);
    assert!(body.get("max_tokens").is_none());
    assert!(
        tool(&body, "bash")["function"].get("strict").is_none(),
        "{body}"
    );
    assert_eq!(body["messages"][0]["role"], "system");
    // A reasoning model's instructions go as `developer`, and it is asked to reason.
    let body = one_body(json!({"id": "r", "reasoning": true}), "medium").await;
    assert_eq!(body["messages"][0]["role"], "developer");
    assert_eq!(body["reasoning_effort"], "medium");
}

/// llama.cpp's and other servers' switches: the max-tokens field, store, usage, the
/// developer role, strict tools, reasoning effort.
#[tokio::test(flavor = "multi_thread")]
async fn each_switch_changes_the_body() {
    let compat = json!({"maxTokensField": "max_tokens", "supportsStore": false,
        "supportsUsageInStreaming": false, "supportsDeveloperRole": false,
        "supportsStrictMode": true, "supportsReasoningEffort": false, "vllmPriority": -5});
    let body = one_body(
        json!({"id": "m", "reasoning": true, "maxTokens": 256, "compat": compat}),
        "high",
    )
    .await;
    assert_eq!(body["max_tokens"], 256);
    assert!(body.get("max_completion_tokens").is_none());
    assert!(body.get("store").is_none());
    assert!(body.get("stream_options").is_none());
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(tool(&body, "bash")["function"]["strict"], false);
    assert!(body.get("reasoning_effort").is_none(), "{body}");
    assert_eq!(body["priority"], -5);
}

/// Tool history: the tool's name on its result, `""` for an assistant message without text,
/// and `reasoning_content` on every replayed answer of a reasoning model.
#[tokio::test(flavor = "multi_thread")]
async fn tool_history_switches() {
    let compat = json!({"requiresToolResultName": true, "requiresNonNullAssistantContent": true,
        "requiresReasoningContentOnAssistantMessages": true});
    let (bodies, _) = bodies(
        "local",
        json!({}),
        json!({"id": "m", "reasoning": true, "compat": compat}),
        "off",
        json!([
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let messages = &bodies[1]["messages"];
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "", "reasoning_content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"echo hi\"}"}}]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": "hi\n", "tool_call_id": "c1", "name": "bash"})
    );
}

/// pi's thinking formats, on and off.
#[tokio::test(flavor = "multi_thread")]
async fn thinking_formats_are_pis() {
    let cases = [
        (
            "qwen-chat-template",
            "medium",
            json!({"chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}}),
        ),
        (
            "qwen-chat-template",
            "off",
            json!({"chat_template_kwargs": {"enable_thinking": false, "preserve_thinking": true}}),
        ),
        (
            "zai",
            "medium",
            json!({"thinking": {"type": "enabled", "clear_thinking": false}, "reasoning_effort": "medium"}),
        ),
        ("zai", "off", json!({"thinking": {"type": "disabled"}})),
        (
            "deepseek",
            "low",
            json!({"thinking": {"type": "enabled"}, "reasoning_effort": "low"}),
        ),
        ("deepseek", "off", json!({"thinking": {"type": "disabled"}})),
        (
            "openrouter",
            "high",
            json!({"reasoning": {"effort": "high"}}),
        ),
        (
            "openrouter",
            "off",
            json!({"reasoning": {"effort": "none"}}),
        ),
        (
            "together",
            "medium",
            json!({"reasoning": {"enabled": true}, "reasoning_effort": "medium"}),
        ),
        ("qwen", "off", json!({"enable_thinking": false})),
        ("string-thinking", "medium", json!({"thinking": "medium"})),
    ];
    let watched = [
        "chat_template_kwargs",
        "thinking",
        "reasoning_effort",
        "reasoning",
        "enable_thinking",
    ];
    for (format, level, expected) in cases {
        let body = one_body(
            json!({"id": "m", "reasoning": true, "compat": {"thinkingFormat": format}}),
            level,
        )
        .await;
        let seen: serde_json::Map<String, Value> = watched
            .iter()
            .filter_map(|k| body.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        assert_eq!(Value::Object(seen), expected, "{format} {level}");
    }
}

/// `chat-template` with `chatTemplateKwargs`: literals, `$var`s, `omitWhenOff`, and the
/// thinking budget in the field `thinkingTokenBudgetField` names.
#[tokio::test(flavor = "multi_thread")]
async fn chat_template_arguments_and_the_budget() {
    let compat = json!({"thinkingFormat": "chat-template", "thinkingTokenBudgetField": "thinking_budget_tokens",
        "chatTemplateKwargs": {"enable_thinking": {"$var": "thinking.enabled"},
            "effort": {"$var": "thinking.effort", "omitWhenOff": true},
            "budget": {"$var": "thinking.budget"}, "fixed": 1, "n": null}});
    let model = json!({"id": "m", "reasoning": true, "maxTokens": 2000, "compat": compat});
    let body = one_body(model.clone(), "low").await;
    assert_eq!(
        body["chat_template_kwargs"],
        json!({"enable_thinking": true, "effort": "low", "budget": 976, "fixed": 1, "n": null})
    );
    assert_eq!(body["thinking_budget_tokens"], 976);
    let body = one_body(model, "off").await;
    assert_eq!(
        body["chat_template_kwargs"],
        json!({"enable_thinking": false, "fixed": 1, "n": null})
    );
    assert!(body.get("thinking_budget_tokens").is_none());
}

/// `samplingParams`, then the thinking level's, go last and win over what pi set.
#[tokio::test(flavor = "multi_thread")]
async fn sampling_params_go_last() {
    let body = one_body(
        json!({"id": "m", "reasoning": true, "maxTokens": 100,
            "samplingParams": {"temperature": 1, "top_p": 0.95, "max_completion_tokens": 5},
            "samplingParamsByThinkingLevel": {"high": {"top_k": 20}, "low": {"top_k": 99}}}),
        "high",
    )
    .await;
    assert_eq!(body["temperature"], 1);
    assert_eq!(body["top_p"], 0.95);
    assert_eq!(body["top_k"], 20);
    assert_eq!(body["max_completion_tokens"], 5);
}

/// The provider's `compat` under the model's, field by field; pi's detection from the
/// provider's name (DeepSeek) where neither says.
#[tokio::test(flavor = "multi_thread")]
async fn provider_compat_merges_and_names_are_detected() {
    let (bodies, _) = bodies(
        "local",
        json!({"compat": {"maxTokensField": "max_tokens", "supportsStore": false}}),
        json!({"id": "m", "compat": {"supportsStore": true}}),
        "off",
        json!([{"text": "ok"}]),
    )
    .await;
    assert!(bodies[0].get("max_tokens").is_some(), "{}", bodies[0]);
    assert_eq!(bodies[0]["store"], false);
    let (bodies, _) = bodies_of_deepseek().await;
    let body = &bodies[0];
    assert!(
        body.get("max_tokens").is_some() && body.get("store").is_none(),
        "{body}"
    );
    assert_eq!(body["thinking"], json!({"type": "enabled"}));
    assert_eq!(body["messages"][0]["role"], "system");
}

async fn bodies_of_deepseek() -> (Vec<Value>, Value) {
    bodies(
        "deepseek",
        json!({}),
        json!({"id": "deepseek-reasoner-test", "reasoning": true}),
        "medium",
        json!([{"text": "ok"}]),
    )
    .await
}

/// A wrong type leaves out its model with a message naming the field and the model; a field
/// pi does not define is named and ignored; the other models load.
#[tokio::test(flavor = "multi_thread")]
async fn bad_compat_is_named_and_the_rest_loads() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let models = json!({"providers": {"local": {"baseUrl": format!("{}/v1", server.url),
        "api": "openai-completions", "apiKey": "k", "models": [
            {"id": "bad", "compat": {"supportsStore": "yes"}},
            {"id": "odd", "compat": {"fooBar": 1}},
            {"id": "good"}]}}});
    let options = Options {
        args: vec!["--model".into(), "local/odd".into(), "--no-session".into()],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    let listed = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    let ids: Vec<&str> = listed["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "local")
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["odd", "good"]);
    let reload = pith.call("r", json!({"type": "reload"})).await;
    let text = reload.to_string();
    assert!(
        text.contains("model \\\"local/bad\\\": compat.supportsStore must be true or false"),
        "{text}"
    );
    assert!(
        text.contains("model \\\"local/odd\\\": compat.fooBar is not a field pi defines"),
        "{text}"
    );
}

/// A server that never sends `finish_reason`: by default the answer fails as pi's ("Stream
/// ended without finish_reason"); with `supportsFinishReason: false` it stops, with `toolUse`
/// after a tool call.
#[tokio::test(flavor = "multi_thread")]
async fn a_stream_without_finish_reason() {
    let chunk = |delta: Value| json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    let text_only = json!({"raw_sse": [chunk(json!({"content": "hello"})), "[DONE]"]});
    let (_, end) = bodies(
        "local",
        json!({}),
        json!({"id": "m"}),
        "off",
        json!([text_only.clone()]),
    )
    .await;
    let answer = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert_eq!(answer["stopReason"], "error", "{answer}");
    assert_eq!(answer["errorMessage"], "Stream ended without finish_reason");
    let call = json!({"raw_sse": [
        chunk(json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"true\"}"}}]})),
        "[DONE]"]});
    let (bodies, end) = bodies(
        "local",
        json!({}),
        json!({"id": "m", "compat": {"supportsFinishReason": false}}),
        "off",
        json!([call, text_only]),
    )
    .await;
    assert_eq!(bodies.len(), 2, "the call ran and the loop went on");
    let answers: Vec<&Value> = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(answers[0]["stopReason"], "toolUse", "{}", answers[0]);
    assert_eq!(answers[1]["stopReason"], "stop", "{}", answers[1]);
}

/// The Responses API as pi 1.5.2 sends it: no `strict` unless the model says so, the session's
/// cache key, a reasoning model asked for no reasoning when thinking is off, and the sampling
/// parameters last.
#[tokio::test(flavor = "multi_thread")]
async fn the_responses_api_reads_its_switches() {
    let (first, _) = bodies(
        "local",
        json!({"api": "openai-responses"}),
        json!({"id": "m", "reasoning": true, "samplingParams": {"top_p": 0.5, "max_output_tokens": 7}}),
        "off",
        json!([{"text": "ok"}]),
    )
    .await;
    let body = &first[0];
    let bash = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bash")
        .unwrap();
    assert!(bash.get("strict").is_none(), "{bash}");
    assert!(body["prompt_cache_key"].is_string(), "{body}");
    assert_eq!(body["reasoning"], json!({"effort": "none"}));
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["max_output_tokens"], 7);
    assert_eq!(body["input"][0]["role"], "developer");
    let (second, _) = bodies(
        "local",
        json!({"api": "openai-responses"}),
        json!({"id": "m", "reasoning": true, "compat": {"supportsStrictMode": true,
            "supportsDeveloperRole": false, "supportsMaxOutputTokens": false,
            "promptCacheKeyMode": "disabled"}}),
        "high",
        json!([{"text": "ok"}]),
    )
    .await;
    let body = &second[0];
    assert_eq!(body["tools"][0]["strict"], false, "{body}");
    assert_eq!(body["input"][0]["role"], "system");
    assert!(body.get("max_output_tokens").is_none() && body.get("prompt_cache_key").is_none());
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
}

/// The Messages API's switches: no eager tool input (then the fine-grained streaming beta),
/// no cache mark on tools, no temperature, adaptive thinking forced, no long retention.
#[tokio::test(flavor = "multi_thread")]
async fn the_messages_api_reads_its_switches() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let models = json!({"providers": {"gateway": {"baseUrl": server.url, "api": "anthropic-messages",
        "apiKey": "k", "models": [{"id": "claude-like", "reasoning": true, "compat": {
            "supportsEagerToolInputStreaming": false, "supportsCacheControlOnTools": false,
            "supportsTemperature": false, "forceAdaptiveThinking": true,
            "supportsLongCacheRetention": false}}]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            "gateway/claude-like".into(),
            "--thinking".into(),
            "medium".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        env: vec![("PI_CACHE_RETENTION".into(), "long".into())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    let request = &server.requests()[0];
    let body = &request["body"];
    let tools = body["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .all(|t| t.get("eager_input_streaming").is_none())
    );
    assert!(
        tools.iter().all(|t| t.get("cache_control").is_none()),
        "{body}"
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "medium"}));
    assert!(body.get("temperature").is_none());
    assert!(!body.to_string().contains("\"ttl\""), "{body}");
    let betas = request["headers"]["anthropic-beta"].as_str().unwrap_or("");
    assert_eq!(betas, "fine-grained-tool-streaming-2025-05-14");
}

/// The remaining switches in one request: z.ai's tool streaming, Anthropic-style cache marks
/// with long retention, the prompt cache key, session affinity headers, the gateways' routing,
/// and Baseten's chat-template arguments.
#[tokio::test(flavor = "multi_thread")]
async fn caching_routing_and_gateway_switches() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let compat = json!({"zaiToolStream": true, "cacheControlFormat": "anthropic",
        "promptCacheKeyMode": "enabled", "sendSessionAffinityHeaders": true,
        "sessionAffinityFormat": "openrouter", "openRouterRouting": {"only": ["a"]},
        "vercelGatewayRouting": {"order": ["b"], "other": 1},
        "thinkingFormat": "baseten", "chatTemplateArgs": {"thinking": {"$var": "thinking.enabled"}}});
    let models = json!({"providers": {"local": {"baseUrl": format!("{}/v1", server.url),
        "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "m", "reasoning": true, "compat": compat}]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            "local/m".into(),
            "--thinking".into(),
            "high".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        env: vec![("PI_CACHE_RETENTION".into(), "long".into())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let session = state["data"]["sessionId"].as_str().unwrap().to_string();
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    let request = &server.requests()[0];
    let body = &request["body"];
    assert_eq!(body["tool_stream"], true);
    let mark = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], mark);
    assert_eq!(body["messages"][1]["content"][0]["cache_control"], mark);
    assert_eq!(
        body["tools"].as_array().unwrap().last().unwrap()["cache_control"],
        mark
    );
    assert_eq!(body["prompt_cache_key"], session.as_str());
    assert_eq!(body["prompt_cache_retention"], "24h");
    assert_eq!(request["headers"]["x-session-id"], session.as_str());
    assert_eq!(body["provider"], json!({"only": ["a"]}));
    assert_eq!(
        body["providerOptions"],
        json!({"gateway": {"order": ["b"]}})
    );
    assert_eq!(body["chat_template_args"], json!({"thinking": true}));
    assert_eq!(body["reasoning_effort"], "high");
}

/// Thinking replayed as text, and a reasoning field replayed where it came from.
#[tokio::test(flavor = "multi_thread")]
async fn thinking_is_replayed_as_text_when_asked() {
    let turns = json!([
        {"thinking": "Let me run it.", "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "true"}}]},
        {"text": "done"}
    ]);
    let (bodies, _) = bodies(
        "local",
        json!({}),
        json!({"id": "m", "reasoning": true, "compat": {"requiresThinkingAsText": true}}),
        "medium",
        turns,
    )
    .await;
    let replayed = &bodies[1]["messages"][2];
    assert_eq!(
        replayed["content"],
        json!([{"type": "text", "text": "Let me run it."}]),
        "{replayed}"
    );
    assert!(replayed.get("reasoning_content").is_none(), "{replayed}");
}

/// pi's `thinkingBudgets` setting: the budget of a level, here in the field
/// `thinkingTokenBudgetField` names.
#[tokio::test(flavor = "multi_thread")]
async fn thinking_budgets_from_the_settings() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let models = json!({"providers": {"local": {"baseUrl": format!("{}/v1", server.url),
        "api": "openai-completions", "apiKey": "k", "models": [{"id": "m", "reasoning": true,
        "maxTokens": 16384, "compat": {"thinkingTokenBudgetField": "thinking_budget"}}]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            "local/m".into(),
            "--thinking".into(),
            "low".into(),
            "--no-session".into(),
        ],
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            (
                "settings.json".into(),
                json!({"thinkingBudgets": {"low": 3000}}).to_string(),
            ),
        ],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(server.requests()[0]["body"]["thinking_budget"], 3000);
}
