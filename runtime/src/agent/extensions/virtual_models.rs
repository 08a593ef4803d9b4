//! The virtual models extensions register (pi's `registerVirtualModel`): the extension that
//! registered one is asked where each of its requests goes (`model-route`).

use super::Extensions;
use crate::plugin_host::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension::{
    Event, EventResult, ModelRoute, RouteRequest,
};

impl Extensions {
    /// True when an extension of the session registered the virtual model `provider/id`.
    pub fn routes(&self, provider: &str, id: &str) -> bool {
        self.router_of(provider, id).is_some()
    }

    /// Asks the extension that registered the virtual model `provider/id` where `request`
    /// goes. `None` when no extension registered it; the error is the extension's (or its
    /// sandbox's) text, which ends the request.
    pub async fn route(
        &self,
        provider: &str,
        id: &str,
        request: RouteRequest,
    ) -> Option<Result<ModelRoute, String>> {
        let slot = self.router_of(provider, id)?;
        let answer = {
            let mut instance = slot.instance.lock().await;
            instance
                .on_event(&self.host, Event::ModelRoute(request))
                .await
        };
        Some(match answer {
            Ok(Ok(EventResult::Route(route))) => Ok(route),
            Ok(Ok(_)) => Err(format!(
                "the extension {} answered without a route (answer `model-route` with `route`)",
                slot.plugin.manifest.id
            )),
            Ok(Err(message)) => Err(message),
            Err(err) => Err(err.to_string()),
        })
    }

    /// The id of the extension that routes the virtual model `provider/id`.
    pub fn router_id(&self, provider: &str, id: &str) -> Option<String> {
        self.router_of(provider, id)
            .map(|slot| slot.plugin.manifest.id.clone())
    }

    /// The extension that registered `provider/id`: the last one, as a later registration
    /// replaces an earlier one (pi's).
    fn router_of(&self, provider: &str, id: &str) -> Option<std::sync::Arc<super::Slot>> {
        self.slots()
            .iter()
            .rev()
            .find(|slot| slot.meta.virtual_models.iter().any(|m| m.is(provider, id)))
            .cloned()
    }
}
