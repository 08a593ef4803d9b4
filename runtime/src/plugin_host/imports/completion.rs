//! `completion` (0.2): model calls an extension makes through the host.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::completion;
use crate::plugin_host::sandbox::StoreState;
use crate::plugin_host::session_context::NO_SESSION;

impl completion::Host for StoreState {
    async fn complete(
        &mut self,
        request: completion::CompletionRequest,
    ) -> Result<completion::CompletionAnswer, completion::CompletionError> {
        let plugin = self.spec.plugin_id.clone();
        if !self.spec.capabilities.models {
            return Err(completion::CompletionError::Denied(format!(
                "the extension {plugin} may not call models: declare `models = true` under \
                 [capabilities] in its pith.toml, and grant it in the settings \
                 ({{\"plugins\": {{\"{plugin}\": {{\"grant\": {{\"models\": true}}}}}}}})"
            )));
        }
        let Some(context) = self.extension.clone() else {
            return Err(completion::CompletionError::Denied(NO_SESSION.into()));
        };
        let Some(asked) = context.access().map(|s| s.complete(plugin, request)) else {
            return Err(completion::CompletionError::Denied(NO_SESSION.into()));
        };
        // The model's time is the host's, not the extension's deadline.
        let _host_time = self.clock.enter_host();
        asked.await
    }
}
