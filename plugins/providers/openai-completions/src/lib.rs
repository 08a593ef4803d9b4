//! The `openai-completions` provider: OpenAI's chat completions API with SSE streaming, which
//! every OpenAI-compatible server speaks too (Ollama, llama.cpp, vLLM, OpenRouter, Groq…).

mod request;
mod stream;
mod thinking;

use pith_sdk::compat::CompletionsCompat;

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
        let compat = CompletionsCompat::of(&request.model);
        let grammar = pith_sdk::grammar_tools::grammar_tools(&request)?;
        let body = request::body(&request, &compat, &grammar)?;
        let url = format!(
            "{}/chat/completions",
            request.model.base_url.trim_end_matches('/')
        );
        let mut http = bearer_sse_post(&url, &request);
        for (name, value) in request::session_headers(&request, &compat) {
            http = http.header(&name, &value);
        }
        let response = http.json(&body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(compat.supports_finish_reason, grammar),
        )))
    }
}

pith_sdk::export_provider!(OpenAiCompletions);
