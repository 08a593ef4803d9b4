//! The `mistral-conversations` provider, as pi 1.5.2 speaks it: Mistral's chat completions
//! (`{baseUrl}/v1/chat/completions`) with `prefix: false` assistant turns, thinking replayed
//! as typed chunks, tool results that carry the tool's name, tool call ids of other models cut
//! to Mistral's 9 characters, `reasoning_effort` from the catalog's thinking-level map, and
//! `x-affinity` for the prompt cache.

mod ids;
mod request;
mod stream;

use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::*;

struct Mistral;

impl Provider for Mistral {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["mistral-conversations".into()],
            // The models and the variables of their keys are pi's catalog, held by the runtime.
            models: Vec::new(),
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let key = request
            .api_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .ok_or("No API key for provider: mistral")?;
        let body = request::body(&request);
        let url = format!(
            "{}/v1/chat/completions",
            request.model.base_url.trim_end_matches('/')
        );
        let mut http = HttpRequest::post(&url)
            .header("accept", "text/event-stream")
            .header("authorization", &format!("Bearer {key}"))
            .header("content-type", "application/json");
        let mut affinity_set = false;
        for header in &request.model.headers {
            affinity_set |= header.name.eq_ignore_ascii_case("x-affinity");
            http = http.header(&header.name, &header.value);
        }
        if let (Some(session), false, true) = (
            &request.session_id,
            affinity_set,
            request.cache_retention != CacheRetention::None,
        ) {
            http = http.header("x-affinity", session);
        }
        let response = http.json(&body).send().map_err(|err| err.message())?;
        let status = response.status();
        if !(200..300).contains(&status) {
            let text = response.text().unwrap_or_default();
            let text = text.trim();
            return Err(if text.is_empty() {
                format!("Mistral API error ({status}): Request failed with status {status}")
            } else {
                format!("Mistral API error ({status}): {text}")
            });
        }
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::new(),
        )))
    }
}

pith_sdk::export_provider!(Mistral);
