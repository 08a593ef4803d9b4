//! The `openai-completions` provider: OpenAI's chat completions API with SSE streaming, which
//! every OpenAI-compatible server speaks too (Ollama, llama.cpp, vLLM, OpenRouter, Groq…).

mod request;
mod stream;

use pith_sdk::provider::*;

struct OpenAiCompletions;

/// One row of the built-in catalogue.
#[allow(clippy::too_many_arguments)] // a table row: each argument is a column
fn model(
    provider: &str,
    base_url: &str,
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
        api: "openai-completions".into(),
        provider: provider.into(),
        base_url: base_url.into(),
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

impl Provider for OpenAiCompletions {
    fn describe() -> ProviderInfo {
        let groq = "https://api.groq.com/openai/v1";
        let openrouter = "https://openrouter.ai/api/v1";
        let xai = "https://api.x.ai/v1";
        ProviderInfo {
            apis: vec!["openai-completions".into()],
            models: vec![
                model(
                    "groq",
                    groq,
                    "openai/gpt-oss-120b",
                    "GPT OSS 120B (Groq)",
                    true,
                    [0.15, 0.75, 0.0, 0.0],
                    131_072,
                    32_768,
                ),
                model(
                    "groq",
                    groq,
                    "llama-3.3-70b-versatile",
                    "Llama 3.3 70B (Groq)",
                    false,
                    [0.59, 0.79, 0.0, 0.0],
                    131_072,
                    32_768,
                ),
                model(
                    "openrouter",
                    openrouter,
                    "anthropic/claude-sonnet-4.5",
                    "Claude Sonnet 4.5 (OpenRouter)",
                    true,
                    [3.0, 15.0, 0.3, 3.75],
                    1_000_000,
                    64_000,
                ),
                model(
                    "openrouter",
                    openrouter,
                    "openai/gpt-5",
                    "GPT-5 (OpenRouter)",
                    true,
                    [1.25, 10.0, 0.125, 0.0],
                    400_000,
                    128_000,
                ),
                model(
                    "xai",
                    xai,
                    "grok-4",
                    "Grok 4",
                    true,
                    [3.0, 15.0, 0.75, 0.0],
                    256_000,
                    64_000,
                ),
            ],
            key_env_vars: vec![
                ("groq".into(), vec!["GROQ_API_KEY".into()]),
                ("openrouter".into(), vec!["OPENROUTER_API_KEY".into()]),
                ("xai".into(), vec!["XAI_API_KEY".into()]),
                ("cerebras".into(), vec!["CEREBRAS_API_KEY".into()]),
                ("mistral".into(), vec!["MISTRAL_API_KEY".into()]),
            ],
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let body = request::body(&request);
        let url = format!(
            "{}/chat/completions",
            request.model.base_url.trim_end_matches('/')
        );
        let response = bearer_sse_post(&url, &request).json(&body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(),
        )))
    }
}

pith_sdk::export_provider!(OpenAiCompletions);
