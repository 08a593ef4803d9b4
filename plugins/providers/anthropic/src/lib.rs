//! The `anthropic-messages` provider: builds pi's Messages API request (system prompt and the
//! last user message cached, tools with eager input streaming, thinking budgets), streams the
//! SSE response through the host's http import and maps it to stream events.

mod messages;
mod oauth;
mod request;
mod stream;

use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::*;

struct Anthropic;

impl Provider for Anthropic {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["anthropic-messages".into()],
            // The models and the variables of their keys are pi's catalog, held by the runtime.
            models: Vec::new(),
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let body = request::body(&request);
        let key = request.api_key.clone().unwrap_or_default();
        let subscription = oauth::is_oauth(&key);
        let url = format!(
            "{}/v1/messages{}",
            request.model.base_url.trim_end_matches('/'),
            if subscription { "?beta=true" } else { "" }
        );
        let mut http = HttpRequest::post(&url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .header("anthropic-version", "2023-06-01");
        let mut betas: Vec<&str> = Vec::new();
        if subscription {
            betas.push(oauth::BETAS);
        }
        if !request.tools.is_empty() && !request::eager_tool_input(&request.model) {
            betas.push("fine-grained-tool-streaming-2025-05-14");
        }
        if request::adaptive(&request.model).is_none() {
            betas.push("interleaved-thinking-2025-05-14");
        }
        if !betas.is_empty() {
            http = http.header("anthropic-beta", &betas.join(","));
        }
        if subscription {
            http = http
                .header("authorization", &format!("Bearer {key}"))
                .header("user-agent", oauth::USER_AGENT)
                .header("x-app", "cli")
                .header("anthropic-dangerous-direct-browser-access", "true");
        } else if !key.is_empty() {
            http = http.header("x-api-key", &key);
        }
        for header in &request.model.headers {
            http = http.header(&header.name, &header.value);
        }
        let response = http.body(body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(
                subscription.then(|| request.tools.iter().map(|t| t.name.clone()).collect()),
            ),
        )))
    }
}

pith_sdk::export_provider!(Anthropic);
