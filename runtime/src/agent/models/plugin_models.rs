//! The models and key variables provider plugins declare, with what a third-party plugin may
//! claim. A plugin that is neither first-party nor granted `providers` would be handed the
//! user's key of every provider it serves: it may not serve a built-in provider or wire format
//! (or read a built-in provider's key variable), nor one the user configured in `models.json` or an extension registered, nor
//! give its models headers that read the environment (`$NAME`). What is refused is left out,
//! with a problem that says how to grant it.

use super::{ModelRegistry, provider_config, replace_or_push};
use crate::plugin_host::plugin::Plugin;
use crate::plugin_host::provider::ProviderMeta;

impl ModelRegistry {
    /// Takes `plugin`'s declared models, wire formats and key variables, leaving out what it
    /// may not claim.
    pub(super) fn add_plugin_models(
        &mut self,
        plugin: &Plugin,
        meta: &ProviderMeta,
        problems: &mut Vec<String>,
    ) {
        let id = &plugin.manifest.id;
        let trusted = is_trusted(plugin);
        for api in &meta.apis {
            // Served by the first-party plugin instead (`PluginHost::provider_for_api`).
            if !trusted && super::catalog::catalog_apis().contains(api.as_str()) {
                problems.push(provider_config::refusal(
                    id,
                    &format!(
                        "serves the built-in wire format {api}, whose models' keys it would get"
                    ),
                ));
            }
        }
        self.served_apis.extend(meta.apis.iter().cloned());
        for model in &meta.models {
            if let Err(problem) = provider_config::may_serve(id, trusted, &model.provider, &[]) {
                problems.push(problem);
                continue;
            }
            let mut model = model.clone();
            let key = model.key();
            if !trusted && let Some(headers) = model.headers.as_mut() {
                headers.retain(|name, value| {
                    let reads_environment = value.as_str().is_some_and(|v| v.contains('$'));
                    if reads_environment {
                        problems.push(provider_config::refusal(
                            id,
                            &format!(
                                "gives the model {key} the header {name}, which would read the \
                                 environment"
                            ),
                        ));
                    }
                    !reads_environment
                });
            }
            if !trusted {
                self.untrusted_declared
                    .push((id.clone(), model.provider.clone()));
            }
            replace_or_push(&mut self.declared, model);
        }
        for (provider, vars) in &meta.key_env_vars {
            match provider_config::may_serve(id, trusted, provider, vars) {
                Ok(()) => {
                    self.key_env_vars.insert(provider.clone(), vars.clone());
                }
                Err(problem) => problems.push(problem),
            }
        }
    }

    /// Once `models.json` is read: leaves out a third-party plugin's models of a provider the
    /// user configured there or an extension registered (they would get its key).
    pub(super) fn drop_claimed_providers(&mut self, problems: &mut Vec<String>) {
        let claimed: Vec<(String, String)> = self
            .untrusted_declared
            .iter()
            .filter(|(_, provider)| {
                self.config_keys.contains_key(provider)
                    || self.overrides.contains_key(provider)
                    || self.custom.iter().any(|m| &m.provider == provider)
            })
            .cloned()
            .collect();
        for (plugin, provider) in claimed {
            problems.push(provider_config::refusal(
                &plugin,
                &format!(
                    "serves {provider}, a provider of models.json or of an extension, whose key \
                     it would get"
                ),
            ));
            self.declared.retain(|m| m.provider != provider);
            self.untrusted_declared.retain(|(_, p)| p != &provider);
        }
    }
}

/// A first-party plugin, or one the user granted `providers`.
pub fn is_trusted(plugin: &Plugin) -> bool {
    plugin.is_first_party() || plugin.capabilities.providers
}
