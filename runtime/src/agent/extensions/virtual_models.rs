//! The virtual models extensions register (pi's `registerVirtualModel`): the extension that
//! registered one is asked where each of its requests goes (`model-route`). Which extension
//! routes which model is the registry's (`ModelRegistry::router`).

use super::Extensions;
use crate::plugin_host::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension::{
    Event, EventResult, ModelRoute, RouteRequest,
};

impl Extensions {
    /// Asks the extension `router` where `request` goes. `None` when it is not loaded; the
    /// error is the extension's (or its sandbox's) text, which ends the request.
    pub async fn route(
        &self,
        router: &str,
        request: RouteRequest,
    ) -> Option<Result<ModelRoute, String>> {
        let slot = self
            .slots()
            .iter()
            .find(|slot| slot.plugin.manifest.id == router)
            .cloned()?;
        let answer = {
            let mut instance = slot.instance.lock().await;
            instance
                .on_event(&self.host, Event::ModelRoute(request))
                .await
        };
        Some(match answer {
            Ok(Ok(EventResult::Route(route))) => Ok(route),
            Ok(Ok(_)) => Err(format!(
                "the extension {router} answered without a route (answer `model-route` with \
                 `route`)"
            )),
            Ok(Err(message)) => Err(message),
            Err(err) => Err(err.to_string()),
        })
    }
}
