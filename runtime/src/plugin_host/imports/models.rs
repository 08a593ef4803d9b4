//! `models` (0.2): the session's model and the models an extension may pick.
use crate::model::{Model, ThinkingLevel};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::models;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ThinkingLevel as WitLevel;
use crate::plugin_host::sandbox::StoreState;

/// A model as an extension sees it.
pub fn model_info(model: &Model) -> models::ModelInfo {
    models::ModelInfo {
        provider: model.provider.clone(),
        id: model.id.clone(),
        name: model.name.clone(),
        api: model.api.clone(),
        reasoning: model.reasoning,
        images: model.input.iter().any(|kind| kind == "image"),
        context_window: model.context_window,
        max_tokens: model.max_tokens,
    }
}

impl models::Host for StoreState {
    async fn current(&mut self) -> Option<models::ModelInfo> {
        self.with_session(|s| s.current_model())
            .flatten()
            .as_ref()
            .map(model_info)
    }

    async fn current_thinking_level(&mut self) -> WitLevel {
        self.with_session(|s| s.thinking_level())
            .unwrap_or(ThinkingLevel::Off)
            .into()
    }

    async fn find(&mut self, provider: String, id: String) -> Option<models::ModelInfo> {
        self.with_session(|s| s.find_model(&provider, &id))
            .flatten()
            .as_ref()
            .map(model_info)
    }

    async fn available(&mut self) -> Vec<models::ModelInfo> {
        self.with_session(|s| s.available_models())
            .unwrap_or_default()
            .iter()
            .map(model_info)
            .collect()
    }

    async fn has_configured_auth(&mut self, provider: String) -> bool {
        self.with_session(|s| s.has_auth(&provider))
            .unwrap_or(false)
    }
}
