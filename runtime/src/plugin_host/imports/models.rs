//! `models` (0.2): the session's model and the models an extension may pick.
use crate::agent::models::provider_config::{ModelConfig, ProviderConfig, ProviderRegistration};
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

/// An extension's provider registration in pith's terms; `Err` says what is wrong with it.
pub fn registration(wit: models::ProviderRegistration) -> Result<ProviderRegistration, String> {
    let name = wit.name.trim().to_string();
    if name.is_empty() || name.contains('/') {
        return Err(format!(
            "the provider name \"{}\" must be non-empty and without \"/\"",
            wit.name
        ));
    }
    let compat = |owner: &str, text: Option<String>| -> Result<Option<serde_json::Value>, String> {
        text.map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|err| format!("{owner}: compat is not JSON ({err})"))
    };
    let headers =
        |list: Vec<crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::Header>| {
            (!list.is_empty()).then(|| {
                list.into_iter()
                    .map(|h| (h.name, serde_json::Value::String(h.value)))
                    .collect::<serde_json::Map<_, _>>()
            })
        };
    let commands = wit.api_key.iter().chain(
        wit.headers
            .iter()
            .chain(wit.models.iter().flat_map(|m| m.headers.iter()))
            .map(|h| &h.value),
    );
    if commands.into_iter().any(|value| value.starts_with('!')) {
        return Err(format!(
            "provider \"{name}\": an extension's key or header cannot be a command (`!…`, which \
             would run outside the sandbox): give a literal or `$NAME`"
        ));
    }
    let mut models = Vec::with_capacity(wit.models.len());
    for model in wit.models {
        let owner = format!("model \"{name}/{}\"", model.id);
        if model.id.is_empty() {
            return Err(format!("provider \"{name}\": a model has an empty id"));
        }
        if model.api.is_none() && wit.api.is_none() {
            return Err(format!(
                "{owner} has no api (give the provider's or the model's)"
            ));
        }
        if model.base_url.is_none() && wit.base_url.is_none() {
            return Err(format!(
                "{owner} has no base URL (give the provider's or the model's)"
            ));
        }
        models.push(ModelConfig {
            compat: compat(&owner, model.compat)?,
            id: model.id,
            name: model.name,
            api: model.api,
            base_url: model.base_url,
            reasoning: Some(model.reasoning),
            input: Some(if model.images {
                vec!["text".into(), "image".into()]
            } else {
                vec!["text".into()]
            }),
            cost: model.cost.map(|c| crate::model::ModelCost {
                input: c.input,
                output: c.output,
                cache_read: c.cache_read,
                cache_write: c.cache_write,
                ..Default::default()
            }),
            context_window: model.context_window,
            max_tokens: model.max_tokens,
            headers: headers(model.headers),
            extra: serde_json::Map::new(),
        });
    }
    Ok(ProviderRegistration {
        config: ProviderConfig {
            compat: None,
            base_url: wit.base_url,
            api_key: wit.api_key,
            api: wit.api,
            headers: headers(wit.headers),
            models,
        },
        name,
    })
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

    async fn register_provider(
        &mut self,
        registration: models::ProviderRegistration,
    ) -> Result<(), String> {
        let plugin = self.spec.plugin_id.clone();
        if !self.spec.capabilities.providers {
            return Err(crate::agent::models::provider_config::no_providers_grant(
                &plugin,
            ));
        }
        let registration = self::registration(registration)?;
        self.with_session(|s| s.register_provider(&plugin, registration))
            .unwrap_or_else(|| Err(crate::plugin_host::session_context::NO_SESSION.into()))
    }

    async fn unregister_provider(&mut self, name: String) {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.unregister_provider(&plugin, &name));
    }

    async fn register_virtual_model(
        &mut self,
        spec: models::VirtualModelSpec,
    ) -> Result<(), String> {
        let plugin = self.spec.plugin_id.clone();
        let model = virtual_model(spec)?;
        self.with_session(|s| s.register_virtual_model(&plugin, model))
            .unwrap_or_else(|| Err(crate::plugin_host::session_context::NO_SESSION.into()))
    }

    async fn unregister_virtual_model(&mut self, provider: String, id: String) {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.unregister_virtual_model(&plugin, &provider, &id));
    }
}

/// The catalog entry of a virtual model an extension registers, checked.
pub(crate) fn virtual_model(
    spec: crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::models::VirtualModelSpec,
) -> Result<crate::model::Model, String> {
    if spec.provider.is_empty() || spec.id.is_empty() {
        return Err("Virtual model provider and id must not be empty.".into());
    }
    if spec.provider.contains('/') {
        return Err(format!(
            "the virtual model \"{}/{}\": its provider cannot contain \"/\"",
            spec.provider, spec.id
        ));
    }
    let levels: Vec<crate::model::ThinkingLevel> = spec
        .thinking_levels
        .into_iter()
        .map(crate::model::ThinkingLevel::from)
        .collect();
    Ok(crate::model::Model::new_virtual(
        &spec.provider,
        &spec.id,
        &spec.name,
        &levels,
        (spec.context_window, spec.max_tokens),
        spec.images,
    ))
}
