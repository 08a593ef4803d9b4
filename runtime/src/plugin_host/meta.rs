//! What plugins declare about themselves (from `describe()`, `skills()`, `templates()`),
//! as cached in [`super::plugin::PluginMeta`]: plain data with its conversions from the WIT.

use serde::{Deserialize, Serialize};

use super::bindings::provider_world::exports::pith::plugin0_1_0::provider as wit;
use super::tool::ToolSpec;
use crate::model::{Model, ModelCost};

/// A command an extension registers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandMeta {
    /// The name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
}

/// A streamed rule an extension contributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleMeta {
    /// The rule's name.
    pub name: String,
    /// What it is about.
    pub description: String,
    /// Globs of the files it concerns.
    pub globs: Vec<String>,
    /// The trigger regex.
    pub trigger: String,
    /// The text injected when it triggers.
    pub content: String,
}

/// What a command-line flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagKind {
    /// `--name` alone.
    Boolean,
    /// `--name value` or `--name=value`.
    Text,
}

/// A command-line flag's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FlagValue {
    /// A boolean flag's.
    Boolean(bool),
    /// A text flag's.
    Text(String),
}

/// A command-line flag an extension registers (pi's `registerFlag`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlagMeta {
    /// The name, without the dashes.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// What it takes.
    pub kind: FlagKind,
    /// Its value when not given.
    pub default: Option<FlagValue>,
}

/// What an extension said about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtensionMeta {
    /// Its name.
    pub name: String,
    /// The events it subscribes to, by pi's names.
    pub events: Vec<String>,
    /// Those pith does not know: never delivered.
    #[serde(default)]
    pub unknown_events: Vec<String>,
    /// Its commands.
    pub commands: Vec<CommandMeta>,
    /// Its tools.
    pub tools: Vec<ToolSpec>,
    /// Its streamed rules.
    pub rules: Vec<RuleMeta>,
    /// Its command-line flags.
    #[serde(default)]
    pub flags: Vec<FlagMeta>,
    /// The virtual models it registers and routes (catalog entries, api `pi-virtual`).
    #[serde(default)]
    pub virtual_models: Vec<crate::model::Model>,
    /// The providers it registers (pi's `registerProvider` in its factory).
    #[serde(default)]
    pub providers: Vec<crate::agent::models::provider_config::ProviderRegistration>,
}

impl ExtensionMeta {
    /// True when the extension wants events of `kind`.
    pub fn wants(&self, kind: &str) -> bool {
        self.events.iter().any(|e| e == kind || e == "*")
    }
}

/// A skill of a skill pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillMeta {
    /// Its name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Hidden from the model (still runnable as `/skill:name`).
    pub disable_model_invocation: bool,
}

/// A template of a prompt-template pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TemplateMeta {
    /// Its name, used as `/name`.
    pub name: String,
    /// What it is for.
    pub description: String,
}

/// What a provider plugin serves (from its `describe()`, cached).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderMeta {
    /// The wire formats it implements.
    pub apis: Vec<String>,
    /// Its built-in models.
    pub models: Vec<Model>,
    /// Provider name → env vars holding its API key, in order.
    pub key_env_vars: Vec<(String, Vec<String>)>,
}

impl ProviderMeta {
    /// Converts a plugin's `describe()`.
    pub fn from_wit(info: wit::ProviderInfo) -> ProviderMeta {
        ProviderMeta {
            apis: info.apis,
            models: info.models.into_iter().map(model_from_wit).collect(),
            key_env_vars: info.key_env_vars,
        }
    }
}

/// A WIT model as pi's model JSON.
pub fn model_from_wit(model: wit::Model) -> Model {
    Model {
        id: model.id,
        name: model.name,
        api: model.api,
        provider: model.provider,
        base_url: model.base_url,
        reasoning: model.reasoning,
        input: model
            .input
            .iter()
            .map(|k| match k {
                wit::InputKind::Text => "text".to_string(),
                wit::InputKind::Image => "image".to_string(),
            })
            .collect(),
        cost: ModelCost {
            input: model.cost.input,
            output: model.cost.output,
            cache_read: model.cost.cache_read,
            cache_write: model.cost.cache_write,
            tiers: Vec::new(),
        },
        context_window: model.context_window.into(),
        max_tokens: model.max_tokens.into(),
        // A component's `!command` header would run outside the sandbox at each request
        // (only the user's `models.json` may name commands): it is left out.
        headers: (!model.headers.is_empty()).then(|| {
            model
                .headers
                .into_iter()
                .filter(|h| !h.value.starts_with('!'))
                .map(|h| (h.name, serde_json::Value::String(h.value)))
                .collect()
        }),
        compat: model.compat.and_then(|c| serde_json::from_str(&c).ok()),
        extra: Default::default(),
    }
}

/// pi's model JSON as the WIT model a provider receives.
pub fn model_to_wit(model: &Model) -> wit::Model {
    use super::bindings::imports::pith::plugin0_1_0::types::Header;
    wit::Model {
        id: model.id.clone(),
        name: model.name.clone(),
        api: model.api.clone(),
        provider: model.provider.clone(),
        base_url: model.base_url.clone(),
        reasoning: model.reasoning,
        input: model
            .input
            .iter()
            .filter_map(|k| match k.as_str() {
                "text" => Some(wit::InputKind::Text),
                "image" => Some(wit::InputKind::Image),
                _ => None,
            })
            .collect(),
        cost: wit::ModelCost {
            input: model.cost.input,
            output: model.cost.output,
            cache_read: model.cost.cache_read,
            cache_write: model.cost.cache_write,
        },
        context_window: model.context_window.min(u32::MAX as u64) as u32,
        max_tokens: model.max_tokens.min(u32::MAX as u64) as u32,
        headers: model
            .headers
            .iter()
            .flatten()
            .map(|(name, value)| Header {
                name: name.clone(),
                value: value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string),
            })
            .collect(),
        compat: model.compat.as_ref().map(|c| c.to_string()),
    }
}
