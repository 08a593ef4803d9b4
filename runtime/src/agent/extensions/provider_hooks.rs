//! pi's `before_provider_request` and `after_provider_response`: the body of each provider
//! request goes past the extensions that hear the first (each may replace it; later ones see
//! the replacement), and each response's status and headers reach those that hear the second,
//! before the body is read.

use std::sync::Arc;

use super::Extensions;
use super::hooks::{Event, EventResult, ProviderRequestEvent, ProviderResponseEvent};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::Header;
use crate::plugin_host::provider_hooks::ProviderHooks;
use crate::plugin_host::session_context::BoxFuture;

const BEFORE: &str = "before_provider_request";
const AFTER: &str = "after_provider_response";

/// The hooks of a session's provider requests, when one of its extensions hears either event.
pub fn for_extensions(extensions: &Arc<Extensions>) -> Option<Arc<dyn ProviderHooks>> {
    (extensions.wants(BEFORE) || extensions.wants(AFTER)).then(|| {
        Arc::new(SessionProviderHooks {
            extensions: extensions.clone(),
        }) as Arc<dyn ProviderHooks>
    })
}

struct SessionProviderHooks {
    extensions: Arc<Extensions>,
}

impl ProviderHooks for SessionProviderHooks {
    fn before_request(&self, payload: String) -> BoxFuture<Option<String>> {
        let extensions = self.extensions.clone();
        Box::pin(async move { extensions.replace_payload(payload).await })
    }

    fn after_response(&self, status: u16, headers: Vec<(String, String)>) -> BoxFuture<()> {
        let extensions = self.extensions.clone();
        Box::pin(async move {
            if !extensions.wants(AFTER) {
                return;
            }
            let headers = headers
                .into_iter()
                .map(|(name, value)| Header { name, value })
                .collect();
            let event = Event::AfterProviderResponse(ProviderResponseEvent { status, headers });
            extensions.hook(AFTER, event).await;
        })
    }
}

impl Extensions {
    /// Asks the extensions that hear `before_provider_request`, in load order, each with the
    /// body as the previous one left it; `Some` when one replaced it. A replacement that is not
    /// JSON is an extension error and is ignored.
    async fn replace_payload(&self, payload: String) -> Option<String> {
        let mut current = payload;
        let mut replaced = false;
        for slot in self.slots().iter().filter(|s| s.wants(BEFORE)) {
            let event = Event::BeforeProviderRequest(ProviderRequestEvent {
                payload: current.clone(),
            });
            if let Ok(EventResult::ReplacePayload(body)) = self.call_slot(slot, BEFORE, event).await
            {
                match serde_json::from_str::<serde_json::Value>(&body) {
                    Ok(_) => {
                        current = body;
                        replaced = true;
                    }
                    Err(err) => self.error(
                        &slot.plugin.path,
                        BEFORE,
                        &format!("the replacement payload is not JSON: {err}"),
                    ),
                }
            }
        }
        replaced.then_some(current)
    }
}
