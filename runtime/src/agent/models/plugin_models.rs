//! The models and key variables provider plugins declare, with what a third-party plugin may
//! claim. A plugin that is neither first-party nor granted `providers` is handed the key of
//! every model it serves, so it may not serve a built-in provider or wire format (or read a
//! built-in provider's key variable, or another variable than `<PROVIDER>_API_KEY`), nor a
//! provider a trusted plugin declares, the user configured in `models.json` or an extension
//! registered, nor give its models headers that read the environment (`$NAME`). What is refused
//! is left out, with one problem per plugin and claim that says how to grant it.

use std::collections::HashSet;

use super::{ModelRegistry, provider_config, replace_or_push};
use crate::agent::model::Model;
use crate::plugin_host::plugin::Plugin;
use crate::plugin_host::provider::ProviderMeta;

/// What third-party provider plugins declared, held back until every plugin is read.
#[derive(Debug, Clone, Default)]
pub(super) struct Untrusted {
    /// Their models, with the plugin of each.
    models: Vec<(String, Model)>,
    /// Their key variables, by provider, with the plugin of each.
    key_env_vars: Vec<(String, String, Vec<String>)>,
    /// The providers trusted plugins declare models or key variables of.
    trusted_providers: HashSet<String>,
    /// The wire formats third-party plugins serve, with the plugin of each.
    apis: Vec<(String, String)>,
    /// The wire formats trusted plugins serve.
    trusted_apis: HashSet<String>,
}

impl ModelRegistry {
    /// Takes `plugin`'s declared models, wire formats and key variables; a third-party plugin's
    /// are held back for [`ModelRegistry::settle_untrusted`], without what it may never claim.
    pub(super) fn add_plugin_models(
        &mut self,
        plugin: &Plugin,
        meta: &ProviderMeta,
        problems: &mut Vec<String>,
    ) {
        let id = &plugin.manifest.id;
        let trusted = is_trusted(plugin);
        for api in &meta.apis {
            // Served by a trusted plugin, or by none (`PluginHost::provider_for_api`).
            if !trusted && super::catalog::catalog_apis().contains(api.as_str()) {
                push_once(
                    problems,
                    provider_config::refusal(
                        id,
                        &format!(
                            "serves the built-in wire format {api}, whose models' keys it would \
                             get"
                        ),
                    ),
                );
                continue;
            }
            if trusted {
                self.untrusted.trusted_apis.insert(api.clone());
            } else {
                self.untrusted.apis.push((id.clone(), api.clone()));
            }
            self.served_apis.insert(api.clone());
        }
        for model in &meta.models {
            if let Err(problem) = provider_config::may_serve(id, trusted, &model.provider, &[]) {
                push_once(problems, problem);
                continue;
            }
            let mut model = model.clone();
            if trusted {
                self.untrusted
                    .trusted_providers
                    .insert(model.provider.clone());
                replace_or_push(&mut self.declared, model);
                continue;
            }
            let key = model.key();
            if let Some(headers) = model.headers.as_mut() {
                headers.retain(|name, value| {
                    let reads_environment = value.as_str().is_some_and(|v| v.contains('$'));
                    if reads_environment {
                        push_once(
                            problems,
                            provider_config::refusal(
                                id,
                                &format!(
                                    "gives the model {key} the header {name}, which would read \
                                     the environment"
                                ),
                            ),
                        );
                    }
                    !reads_environment
                });
            }
            self.untrusted.models.push((id.clone(), model));
        }
        for (provider, vars) in &meta.key_env_vars {
            match provider_config::may_serve(id, trusted, provider, vars) {
                Ok(()) if trusted => {
                    self.untrusted.trusted_providers.insert(provider.clone());
                    self.key_env_vars.insert(provider.clone(), vars.clone());
                }
                Ok(()) => {
                    self.untrusted
                        .key_env_vars
                        .push((id.clone(), provider.clone(), vars.clone()));
                }
                Err(problem) => push_once(problems, problem),
            }
        }
    }

    /// Once every plugin and extension registration is read: takes in the third-party
    /// plugins' models and key variables but those of a provider a trusted plugin declares or
    /// an extension registered.
    pub(super) fn settle_untrusted(&mut self, problems: &mut Vec<String>) {
        for (plugin, api) in std::mem::take(&mut self.untrusted.apis) {
            // A trusted plugin serves it (`PluginHost::provider_for_api`).
            if self.untrusted.trusted_apis.contains(&api) {
                push_once(
                    problems,
                    provider_config::refusal(
                        &plugin,
                        &format!(
                            "serves the wire format {api}, which a trusted plugin serves and \
                             keeps serving"
                        ),
                    ),
                );
            }
        }
        let untrusted = std::mem::take(&mut self.untrusted.models);
        for (plugin, model) in untrusted {
            match self.claimed_by_others(&model.provider) {
                Some(owner) => push_once(problems, claimed(&plugin, &model.provider, owner)),
                None => {
                    self.untrusted_declared
                        .push((plugin, model.provider.clone()));
                    replace_or_push(&mut self.declared, model);
                }
            }
        }
        let vars = std::mem::take(&mut self.untrusted.key_env_vars);
        for (plugin, provider, vars) in vars {
            match self.claimed_by_others(&provider) {
                Some(owner) => push_once(problems, claimed(&plugin, &provider, owner)),
                None => {
                    self.key_env_vars.entry(provider).or_insert(vars);
                }
            }
        }
    }

    /// Once `models.json` is read: leaves out a third-party plugin's models of a provider the
    /// user configured there (they would get its key).
    pub(super) fn drop_claimed_providers(&mut self, problems: &mut Vec<String>) {
        let configured = |registry: &ModelRegistry, provider: &str| {
            registry.config_keys.contains_key(provider)
                || registry.overrides.contains_key(provider)
                || registry.custom.iter().any(|m| m.provider == provider)
        };
        let claims = std::mem::take(&mut self.untrusted_declared);
        for (plugin, provider) in claims {
            if configured(self, &provider) {
                push_once(problems, claimed(&plugin, &provider, "models.json"));
                // Only third-party plugins' models are of it: a trusted plugin's provider
                // was kept from them when they were settled.
                self.declared.retain(|m| m.provider != provider);
            } else {
                self.untrusted_declared.push((plugin, provider));
            }
        }
    }

    /// Who else holds `provider`: a trusted plugin, or an extension's registration (with or
    /// without models: `models.json` is not read yet when this is asked).
    fn claimed_by_others(&self, provider: &str) -> Option<&'static str> {
        if self.untrusted.trusted_providers.contains(provider) {
            Some("a trusted plugin")
        } else if self.custom.iter().any(|m| m.provider == provider)
            || self.replaced.contains(provider)
            || self.config_keys.contains_key(provider)
            || self.overrides.contains_key(provider)
        {
            Some("an extension")
        } else {
            None
        }
    }
}

/// A first-party plugin, or one the user granted `providers`.
pub fn is_trusted(plugin: &Plugin) -> bool {
    plugin.is_first_party() || plugin.capabilities.providers
}

/// Why a third-party plugin's models of `provider`, which `owner` holds, were left out.
fn claimed(plugin: &str, provider: &str, owner: &str) -> String {
    provider_config::refusal(
        plugin,
        &format!("serves {provider}, a provider of {owner}, whose key it would get"),
    )
}

/// Adds `problem` unless it is there already (one per plugin and claim, not per model).
fn push_once(problems: &mut Vec<String>, problem: String) {
    if !problems.contains(&problem) {
        problems.push(problem);
    }
}
