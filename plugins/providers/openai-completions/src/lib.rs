//! The `openai-completions` provider: OpenAI's chat completions API with SSE streaming, which
//! every OpenAI-compatible server speaks too (Ollama, llama.cpp, vLLM, OpenRouter, Groq…).

mod request;
mod stream;

use pith_sdk::provider::*;

struct OpenAiCompletions;

impl Provider for OpenAiCompletions {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["openai-completions".into()],
            // The models and the variables of their keys are pi's catalog, held by the runtime.
            models: Vec::new(),
            key_env_vars: Vec::new(),
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
