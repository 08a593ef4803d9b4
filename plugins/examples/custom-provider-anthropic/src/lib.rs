//! A port of pi's `custom-provider-anthropic` example: an extension that registers the
//! provider `custom-anthropic` (two Claude models, key `$CUSTOM_ANTHROPIC_API_KEY`) with a wire
//! format of its own, `custom-anthropic-api`, and serves that format itself: the component also
//! exports `pith:plugin/provider` (pi's `streamSimple`), a Messages API client of its own over
//! the host's http import.
//!
//! Not ported: the OAuth login (`/login` is pi's terminal flow; headless, the key comes from the
//! environment, `auth.json` or `models.json`).

mod request;
mod stream;

use pith_sdk::extension::{
    Event, EventResult, Extension, ExtensionInfo, ProviderModel, ProviderRegistration,
};
use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::{Completion, Provider, ProviderInfo, Request, SseCompletion};

/// The wire format this component serves.
const API: &str = "custom-anthropic-api";

struct CustomAnthropic;

impl Extension for CustomAnthropic {
    fn new() -> Self {
        CustomAnthropic
    }

    fn describe(&self) -> ExtensionInfo {
        let claude = |id: &str, name: &str, cost: (f64, f64, f64, f64)| {
            ProviderModel::new(id, name)
                .abilities(true, true)
                .cost(cost.0, cost.1, cost.2, cost.3)
                .limits(200_000, 64_000)
        };
        ExtensionInfo::new("custom-provider-anthropic").provider(
            ProviderRegistration::new("custom-anthropic", API, "https://api.anthropic.com")
                .api_key("$CUSTOM_ANTHROPIC_API_KEY")
                .model(claude(
                    "claude-opus-4-5",
                    "Claude Opus 4.5 (Custom)",
                    (5.0, 25.0, 0.5, 6.25),
                ))
                .model(claude(
                    "claude-sonnet-4-5",
                    "Claude Sonnet 4.5 (Custom)",
                    (3.0, 15.0, 0.3, 3.75),
                )),
        )
    }

    fn on_event(&mut self, _event: Event) -> Result<EventResult, String> {
        Ok(EventResult::Continue)
    }
}

impl Provider for CustomAnthropic {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec![API.into()],
            // The models are the extension's registration.
            models: Vec::new(),
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let url = format!(
            "{}/v1/messages",
            request.model.base_url.trim_end_matches('/')
        );
        let mut http = HttpRequest::post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-dangerous-direct-browser-access", "true")
            .header(
                "anthropic-beta",
                "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14",
            );
        if let Some(key) = request.api_key.as_deref().filter(|k| !k.is_empty()) {
            http = http.header("x-api-key", key);
        }
        for header in &request.model.headers {
            http = http.header(&header.name, &header.value);
        }
        let response = http.json(&request::body(&request)).send_ok()?;
        Ok(Box::new(SseCompletion::new(
            response,
            stream::Stream::default(),
        )))
    }
}

pith_sdk::export_extension!(CustomAnthropic);
pith_sdk::export_provider!(CustomAnthropic);
