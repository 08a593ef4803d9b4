//! The `openai-responses` provider: OpenAI's Responses API with SSE streaming, reasoning
//! summaries and encrypted reasoning replayed on later turns.

mod request;
mod stream;

use pith_sdk::provider::*;

struct OpenAiResponses;

fn model(
    id: &str,
    name: &str,
    reasoning: bool,
    cost: [f64; 4],
    window: u32,
    max_tokens: u32,
) -> Model {
    Model {
        id: id.into(),
        name: name.into(),
        api: "openai-responses".into(),
        provider: "openai".into(),
        base_url: "https://api.openai.com/v1".into(),
        reasoning,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: cost[0],
            output: cost[1],
            cache_read: cost[2],
            cache_write: cost[3],
        },
        context_window: window,
        max_tokens,
        headers: Vec::new(),
        compat: None,
    }
}

impl Provider for OpenAiResponses {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["openai-responses".into()],
            models: vec![
                model(
                    "gpt-5.4",
                    "GPT-5.4",
                    true,
                    [2.5, 15.0, 0.25, 0.0],
                    400_000,
                    128_000,
                ),
                model(
                    "gpt-5",
                    "GPT-5",
                    true,
                    [1.25, 10.0, 0.125, 0.0],
                    400_000,
                    128_000,
                ),
                model(
                    "gpt-5-mini",
                    "GPT-5 mini",
                    true,
                    [0.25, 2.0, 0.025, 0.0],
                    400_000,
                    128_000,
                ),
                model(
                    "gpt-4.1",
                    "GPT-4.1",
                    false,
                    [2.0, 8.0, 0.5, 0.0],
                    1_047_576,
                    32_768,
                ),
            ],
            key_env_vars: vec![("openai".into(), vec!["OPENAI_API_KEY".into()])],
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let body = request::body(&request);
        let url = format!("{}/responses", request.model.base_url.trim_end_matches('/'));
        let response = bearer_sse_post(&url, &request).json(&body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(),
        )))
    }
}

pith_sdk::export_provider!(OpenAiResponses);
