//! The `openai-responses` provider: OpenAI's Responses API with SSE streaming, reasoning
//! summaries and encrypted reasoning replayed on later turns; and the same API on Azure
//! OpenAI (`azure-openai-responses`).

mod azure;
mod request;
mod stream;

use pith_sdk::provider::*;

struct OpenAiResponses;

impl Provider for OpenAiResponses {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["openai-responses".into(), azure::API.into()],
            // The models and the variables of their keys are pi's catalog, held by the runtime.
            models: Vec::new(),
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let grammar = pith_sdk::grammar_tools::grammar_tools(&request)?;
        let mut body = request::body(&request, &grammar)?;
        let http = if request.model.api == azure::API {
            azure::post(&request, &mut body)?
        } else {
            let url = format!("{}/responses", request.model.base_url.trim_end_matches('/'));
            bearer_sse_post(&url, &request)
        };
        let response = http.json(&body).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(grammar),
        )))
    }
}

pith_sdk::export_provider!(OpenAiResponses);
