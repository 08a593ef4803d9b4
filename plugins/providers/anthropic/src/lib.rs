//! The `anthropic-messages` provider: builds pi's Messages API request (system prompt and the
//! last user message cached, tools with eager input streaming, thinking budgets), streams the
//! SSE response through the host's http import and maps it to stream events.

mod request;
mod stream;

use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::*;

struct Anthropic;

fn model(id: &str, name: &str, reasoning: bool, cost: [f64; 4], max_tokens: u32) -> Model {
    Model {
        id: id.into(),
        name: name.into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: "https://api.anthropic.com".into(),
        reasoning,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: cost[0],
            output: cost[1],
            cache_read: cost[2],
            cache_write: cost[3],
        },
        context_window: 200_000,
        max_tokens,
        headers: Vec::new(),
        compat: None,
    }
}

impl Provider for Anthropic {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["anthropic-messages".into()],
            models: vec![
                model(
                    "claude-opus-4-6",
                    "Claude Opus 4.6",
                    true,
                    [5.0, 25.0, 0.5, 6.25],
                    128_000,
                ),
                model(
                    "claude-sonnet-4-5",
                    "Claude Sonnet 4.5",
                    true,
                    [3.0, 15.0, 0.3, 3.75],
                    64_000,
                ),
                model(
                    "claude-haiku-4-5",
                    "Claude Haiku 4.5",
                    true,
                    [1.0, 5.0, 0.1, 1.25],
                    64_000,
                ),
                model(
                    "claude-opus-4-1",
                    "Claude Opus 4.1",
                    true,
                    [15.0, 75.0, 1.5, 18.75],
                    32_000,
                ),
            ],
            key_env_vars: vec![(
                "anthropic".into(),
                vec!["ANTHROPIC_OAUTH_TOKEN".into(), "ANTHROPIC_API_KEY".into()],
            )],
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let body = request::body(&request);
        let url = format!(
            "{}/v1/messages",
            request.model.base_url.trim_end_matches('/')
        );
        let key = request.api_key.clone().unwrap_or_default();
        let mut http = HttpRequest::post(&url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("anthropic-version", "2023-06-01");
        if request::adaptive(&request.model).is_none() {
            http = http.header("anthropic-beta", "interleaved-thinking-2025-05-14");
        }
        http = if key.starts_with("sk-ant-oat") {
            http.header("authorization", &format!("Bearer {key}"))
        } else {
            http.header("x-api-key", &key)
        };
        for header in &request.model.headers {
            http = http.header(&header.name, &header.value);
        }
        let response = http.json(&body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(),
        )))
    }
}

pith_sdk::export_provider!(Anthropic);
