//! A provider as `models.json` or an extension's registration gives it (pi's shape), and the
//! registrations extensions make and withdraw.

/// A provider as `models.json` or an extension's registration gives it (pi's shape).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    /// The endpoint of its models.
    pub base_url: Option<String>,
    /// Its key: a literal, `$NAME` or `!command`.
    pub api_key: Option<String>,
    /// Its models' wire format.
    pub api: Option<String>,
    /// Headers of every request.
    pub headers: Option<serde_json::Map<String, serde_json::Value>>,
    /// Switches for every model of the provider (a model's own win, field by field).
    pub compat: Option<serde_json::Value>,
    /// Its models (none: the fields above change its built-in ones).
    #[serde(default)]
    pub models: Vec<ModelConfig>,
}

/// A provider an extension registers (pi's `registerProvider(name, config)`).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct ProviderRegistration {
    /// The provider's name.
    pub name: String,
    /// What it registers.
    pub config: ProviderConfig,
}

/// A provider registered or removed by an extension after it loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderChange {
    /// `plugin` registered (or replaced) a provider.
    Register {
        /// The extension's id.
        plugin: String,
        /// The provider.
        registration: Box<ProviderRegistration>,
    },
    /// `plugin` removed the provider `name` it registered.
    Unregister {
        /// The extension's id.
        plugin: String,
        /// The provider's name.
        name: String,
    },
    /// `plugin` registered (or replaced) a virtual model, which it routes.
    RegisterVirtual {
        /// The extension's id.
        plugin: String,
        /// The virtual model.
        model: Box<crate::agent::model::Model>,
    },
    /// `plugin` removed the virtual model `provider/id` it registered.
    UnregisterVirtual {
        /// The extension's id.
        plugin: String,
        /// The model's provider.
        provider: String,
        /// The model's id.
        id: String,
    },
}

impl ProviderChange {
    /// The extension that made the change.
    pub fn plugin(&self) -> &str {
        match self {
            ProviderChange::Register { plugin, .. }
            | ProviderChange::Unregister { plugin, .. }
            | ProviderChange::RegisterVirtual { plugin, .. }
            | ProviderChange::UnregisterVirtual { plugin, .. } => plugin,
        }
    }

    /// Applies this change to `registered` (extension id and registration, in order): a
    /// registration of a name already registered is merged over it, field by field, as pi
    /// does (models given replace the earlier ones; none keeps them); a removal drops the
    /// extension's own registration of that name.
    /// A virtual model's change changes none.
    pub fn apply(&self, registered: &mut Vec<(String, ProviderRegistration)>) {
        match self {
            ProviderChange::Register {
                plugin,
                registration,
            } => {
                let mut merged = registration.as_ref().clone();
                if let Some(at) = registered.iter().position(|(_, r)| r.name == merged.name) {
                    let (_, earlier) = registered.remove(at);
                    merged.config = earlier.config.overlaid(merged.config);
                }
                registered.push((plugin.clone(), merged));
            }
            ProviderChange::Unregister { plugin, name } => {
                registered.retain(|(p, r)| !(p == plugin && &r.name == name));
            }
            ProviderChange::RegisterVirtual { .. } | ProviderChange::UnregisterVirtual { .. } => {}
        }
    }
}

/// A model of a [`ProviderConfig`].
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelConfig {
    /// The id sent to the API.
    pub id: String,
    /// The display name.
    pub name: Option<String>,
    /// The wire format (the provider's when `None`).
    pub api: Option<String>,
    /// The endpoint (the provider's when `None`).
    pub base_url: Option<String>,
    /// True for a reasoning model.
    pub reasoning: Option<bool>,
    /// `text`, `image`.
    pub input: Option<Vec<String>>,
    /// Prices.
    pub cost: Option<crate::agent::model::ModelCost>,
    /// The context window in tokens.
    pub context_window: Option<u64>,
    /// The most output tokens.
    pub max_tokens: Option<u64>,
    /// Headers of its requests.
    pub headers: Option<serde_json::Map<String, serde_json::Value>>,
    /// pi's `compat`.
    pub compat: Option<serde_json::Value>,
    /// `thinkingLevelMap`, `samplingParams`, `samplingParamsByThinkingLevel` and the rest.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ProviderConfig {
    /// `newer`'s fields over these: each one it gives wins; its models, when it gives any.
    pub fn overlaid(self, newer: ProviderConfig) -> ProviderConfig {
        ProviderConfig {
            base_url: newer.base_url.or(self.base_url),
            api_key: newer.api_key.or(self.api_key),
            api: newer.api.or(self.api),
            headers: newer.headers.or(self.headers),
            compat: newer.compat.or(self.compat),
            models: if newer.models.is_empty() {
                self.models
            } else {
                newer.models
            },
        }
    }
}

/// Why `plugin` may not register providers, and the fix.
/// Whether the provider plugin `id` may serve `provider`'s models, reading its key from `vars`
/// (`trusted`: first-party, or granted `providers`). A third-party plugin serving a built-in
/// provider (in any case: names are matched without it), or reading a variable that holds one's
/// key, would be handed the user's key for it; one reading another variable than
/// `<PROVIDER>_API_KEY` could be handed any secret: that takes the `providers` grant.
pub fn may_serve(id: &str, trusted: bool, provider: &str, vars: &[String]) -> Result<(), String> {
    if trusted {
        return Ok(());
    }
    let catalog = crate::agent::models::catalog::catalog();
    let built_in = catalog
        .providers()
        .iter()
        .any(|p| p.name.eq_ignore_ascii_case(provider));
    let built_in_var = vars.iter().find(|var| {
        catalog
            .providers()
            .iter()
            .any(|p| p.env_vars.iter().any(|v| v == *var))
    });
    // Its own key is in `<PROVIDER>_API_KEY`; another variable may hold any secret.
    let own_var = format!(
        "{}_API_KEY",
        provider
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            })
            .collect::<String>()
    );
    let other_var = vars.iter().find(|var| **var != own_var);
    let what = match (built_in, built_in_var, other_var) {
        (true, _, _) => {
            format!("serves the built-in provider {provider}, which would hand it the user's key")
        }
        (false, Some(var), _) => format!(
            "reads the key variable {var} of a built-in provider, which would hand it the user's key"
        ),
        (false, None, Some(var)) => format!(
            "reads the environment variable {var} as {provider}'s key (its own is {own_var}), \
             which would hand it whatever that variable holds"
        ),
        (false, None, None) => return Ok(()),
    };
    Err(refusal(id, &what))
}

/// Why a third-party provider plugin's claim (`what` it does) was left out, and how to allow
/// it.
pub fn refusal(id: &str, what: &str) -> String {
    format!(
        "the plugin {id} {what}: left out. To allow it, declare providers = true under \
         [capabilities] in its pith.toml and grant it in settings.json \
         (\"plugins\": {{\"{id}\": {{\"grant\": {{\"providers\": true}}}}}})"
    )
}

/// Why an extension's provider registration was refused.
pub fn no_providers_grant(plugin: &str) -> String {
    format!(
        "the extension {plugin} may not register providers (they get the user's keys and \
         conversations): declare providers = true under [capabilities] in its pith.toml, and \
         grant it in settings.json (\"plugins\": {{\"{plugin}\": {{\"grant\": {{\"providers\": true}}}}}})"
    )
}

#[cfg(test)]
mod tests {
    use super::may_serve;

    #[test]
    fn a_third_party_plugin_serves_its_own_provider_with_its_own_key_variable_only() {
        assert!(may_serve("p", true, "anthropic", &["GITHUB_TOKEN".into()]).is_ok());
        let built_in = may_serve("p", false, "Anthropic", &[]).unwrap_err();
        assert!(
            built_in.starts_with("the plugin p serves the built-in provider Anthropic"),
            "{built_in}"
        );
        assert!(may_serve("p", false, "acme-ai", &["ACME_AI_API_KEY".into()]).is_ok());
        let other = may_serve("p", false, "acme-ai", &["GITHUB_TOKEN".into()]).unwrap_err();
        assert!(
            other.contains(
                "reads the environment variable GITHUB_TOKEN as acme-ai's key (its own is \
                 ACME_AI_API_KEY)"
            ),
            "{other}"
        );
        let theirs = may_serve("p", false, "acme", &["ANTHROPIC_API_KEY".into()]).unwrap_err();
        assert!(
            theirs.contains("reads the key variable ANTHROPIC_API_KEY of a built-in provider"),
            "{theirs}"
        );
        assert!(
            theirs.contains("\"grant\": {\"providers\": true}"),
            "{theirs}"
        );
    }
}
