//! The `anthropic-messages` provider: builds pi's Messages API request (system prompt and the
//! last user message cached, tools with eager input streaming, thinking budgets), streams the
//! SSE response through the host's http import and maps it to stream events.

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
