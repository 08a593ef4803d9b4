//! The model registry: the models the provider plugins declare, which of them have an API key,
//! and resolving `--model` patterns.

use std::collections::HashMap;

use super::model::{Model, ThinkingLevel};
use crate::plugin_host::PluginHost;

/// Every known model and how each provider gets its key.
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    models: Vec<Model>,
    key_env_vars: HashMap<String, Vec<String>>,
    /// Keys given at run time (`--api-key`), by provider.
    pub runtime_keys: HashMap<String, String>,
}

impl ModelRegistry {
    /// The models of every provider plugin, in load order.
    pub fn from_host(host: &PluginHost) -> ModelRegistry {
        let mut registry = ModelRegistry::default();
        for plugin in host.plugins() {
            if let Some(meta) = &plugin.meta.provider {
                for model in &meta.models {
                    match registry
                        .models
                        .iter_mut()
                        .find(|m| m.is(&model.provider, &model.id))
                    {
                        Some(slot) => *slot = model.clone(),
                        None => registry.models.push(model.clone()),
                    }
                }
                for (provider, vars) in &meta.key_env_vars {
                    registry.key_env_vars.insert(provider.clone(), vars.clone());
                }
            }
        }
        registry
    }

    /// Every model.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// The API key for `provider`: a run-time key, else the first set env var.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        if let Some(key) = self.runtime_keys.get(provider) {
            return Some(key.clone());
        }
        self.key_env_vars
            .get(provider)?
            .iter()
            .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
    }

    /// True when `provider` can be used: it has a key, or needs none.
    pub fn has_key(&self, provider: &str) -> bool {
        match self.key_env_vars.get(provider) {
            Some(vars) if vars.is_empty() => true,
            _ => self.api_key(provider).is_some(),
        }
    }

    /// The models whose provider has a key.
    pub fn available(&self) -> Vec<Model> {
        self.models
            .iter()
            .filter(|m| self.has_key(&m.provider))
            .cloned()
            .collect()
    }

    /// The model `provider`/`id`, among all.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.models.iter().find(|m| m.is(provider, id)).cloned()
    }

    /// Resolves `--model` (`id`, `provider/id`, with an optional `:level`) and `--provider`.
    pub fn resolve(
        &self,
        pattern: &str,
        provider: Option<&str>,
    ) -> Option<(Model, Option<ThinkingLevel>)> {
        let (pattern, level) = match pattern.rsplit_once(':') {
            Some((head, tail)) if ThinkingLevel::parse(tail).is_some() => {
                (head, ThinkingLevel::parse(tail))
            }
            _ => (pattern, None),
        };
        let lower = pattern.to_ascii_lowercase();
        let matches = |m: &&Model| provider.is_none_or(|p| m.provider == p);
        let exact =
            self.models.iter().filter(matches).find(|m| {
                m.key().to_ascii_lowercase() == lower || m.id.to_ascii_lowercase() == lower
            });
        let found = exact.or_else(|| {
            self.models
                .iter()
                .filter(matches)
                .filter(|m| {
                    m.id.to_ascii_lowercase().contains(&lower)
                        || m.name.to_ascii_lowercase().contains(&lower)
                })
                .max_by(|a, b| a.id.cmp(&b.id))
        });
        found.map(|m| (m.clone(), level))
    }
}
