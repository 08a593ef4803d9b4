//! The model registry: pi's catalog (see [`crate::agent::models::catalog`]), the models provider plugins
//! declare and `models.json`'s, which of them have a key, and resolving `--model` patterns.
//! A provider's merged list is made on first use, so a start that names its provider parses
//! only that provider's part of the catalog.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use catalog::catalog;

pub mod ask;
mod auth;
pub mod catalog;
pub mod compat_check;
pub mod credentials;
mod custom;
pub mod errors;
pub mod oauth;
pub mod provider_config;
pub mod provider_env;

pub use auth::RequestAuth;
use auth::Stored;
pub use errors::KeyError;
pub use provider_config::{ModelConfig, ProviderChange, ProviderConfig, ProviderRegistration};

mod keys;
pub mod plugin_models;
mod virtual_models;
use crate::agent::model::{Model, ThinkingLevel};
use crate::plugin_host::PluginHost;

/// Every known model and how each provider gets its key.
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    /// Models the provider plugins declare (a third-party provider's own; they replace a
    /// catalog model of the same provider and id).
    declared: Vec<Model>,
    /// The wire formats the loaded provider plugins serve: a model of another API is not
    /// offered (nothing could answer it).
    served_apis: HashSet<String>,
    /// What third-party provider plugins declared, held back until every plugin is read.
    untrusted: plugin_models::Untrusted,
    /// The providers third-party plugins declared models of (plugin id, provider), checked
    /// again once `models.json` is read.
    untrusted_declared: Vec<(String, String)>,
    /// Environment variables of providers the catalog does not know, from their plugins.
    key_env_vars: HashMap<String, Vec<String>>,
    /// Keys given at run time (`--api-key`), by provider.
    pub runtime_keys: HashMap<String, String>,
    /// Keys from `models.json` (a literal, or the name of an environment variable), by provider.
    config_keys: HashMap<String, String>,
    /// `auth.json`'s credentials, by provider.
    stored: HashMap<String, Stored>,
    /// `models.json` providers without models: the base URL and headers of their built-ins.
    overrides: HashMap<String, ProviderOverride>,
    /// `models.json`'s own models and those of providers extensions register.
    custom: Vec<Model>,
    /// Providers an extension registered with models: their built-in ones are left out.
    replaced: HashSet<String>,
    /// Catalogs pi refreshed and stored in `models-store.json` (OpenRouter's list for the
    /// user's key): they replace the built-in catalog's models of their provider.
    refreshed: HashMap<String, Arc<Vec<Model>>>,
    /// Each provider's merged list, made on first use.
    merged: Arc<Mutex<HashMap<String, Arc<Vec<Model>>>>>,
    /// Every model, in order, made on first use.
    everything: Arc<OnceLock<Arc<Vec<Model>>>>,
    /// The virtual models extensions register (pi's `registerVirtualModel`): each hides a
    /// physical model of its provider and id.
    virtual_models: Vec<Model>,
    /// The extension that routes each virtual model, by `provider/id`.
    virtual_routers: HashMap<String, String>,
    /// `auth.json`, where renewed OAuth tokens are written.
    auth_file: std::path::PathBuf,
    /// OAuth credentials renewed since `auth.json` was read, by provider.
    renewed: Arc<Mutex<HashMap<String, crate::agent::models::oauth::OAuthCredential>>>,
}

/// What `models.json` changes of a provider's built-in models.
#[derive(Debug, Clone, Default)]
struct ProviderOverride {
    base_url: Option<String>,
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    /// Over the built-in models' own, field by field.
    compat: Option<serde_json::Value>,
}

impl ModelRegistry {
    /// The catalog and the models of every provider plugin and the providers extensions
    /// register, in load order (a registration's problems are logged).
    pub fn from_host(host: &PluginHost) -> ModelRegistry {
        let mut problems = Vec::new();
        let registry = Self::from_host_with(host, &[], &mut problems);
        for problem in problems {
            tracing::warn!("{problem}");
        }
        registry
    }

    /// The catalog and the models of every provider plugin, in load order, with the providers
    /// extensions register (at load, then `changes` made since, in order); problems with a
    /// registration go to `problems`.
    fn from_host_with(
        host: &PluginHost,
        changes: &[ProviderChange],
        problems: &mut Vec<String>,
    ) -> ModelRegistry {
        let mut registry = ModelRegistry::default();
        let mut registered: Vec<(String, ProviderRegistration)> = Vec::new();
        for plugin in host.plugins().iter() {
            if let Some(meta) = &plugin.meta.provider {
                registry.add_plugin_models(plugin, meta, problems);
            }
            if let Some(extension) = &plugin.meta.extension {
                for model in &extension.virtual_models {
                    registry.add_virtual(&plugin.manifest.id, model.clone());
                }
                if !extension.providers.is_empty() && !plugin.capabilities.providers {
                    problems.push(provider_config::no_providers_grant(&plugin.manifest.id));
                    continue;
                }
                for registration in &extension.providers {
                    ProviderChange::Register {
                        plugin: plugin.manifest.id.clone(),
                        registration: Box::new(registration.clone()),
                    }
                    .apply(&mut registered);
                }
            }
        }
        // Changes made at run time by extensions still loaded (and, for providers, still
        // granted: a reload may have removed one, or the user the grant).
        let plugins = host.plugins();
        let loaded = |id: &str, needs_grant: bool| {
            plugins
                .iter()
                .any(|p| p.manifest.id == id && (!needs_grant || p.capabilities.providers))
        };
        for change in changes {
            match change {
                // One another extension routes stays its (the first registration holds).
                ProviderChange::RegisterVirtual { plugin, model }
                    if loaded(plugin, false)
                        && registry
                            .router(&model.provider, &model.id)
                            .is_none_or(|router| router == plugin.as_str()) =>
                {
                    registry.add_virtual(plugin, model.as_ref().clone());
                }
                ProviderChange::UnregisterVirtual {
                    plugin,
                    provider,
                    id,
                } if loaded(plugin, false) => registry.remove_virtual(plugin, provider, id),
                ProviderChange::Register { plugin, .. }
                | ProviderChange::Unregister { plugin, .. }
                    if loaded(plugin, true) =>
                {
                    change.apply(&mut registered);
                }
                _ => {}
            }
        }
        for (plugin, registration) in registered {
            let source = format!("extension {plugin}");
            if let Err(problem) = registry.add_provider(
                &source,
                &registration.name,
                registration.config,
                true,
                problems,
            ) {
                problems.push(format!("{source}: {problem} (provider left out)"));
            }
        }
        registry.settle_untrusted(problems);
        if !registry.virtual_models.is_empty() {
            registry
                .served_apis
                .insert(crate::model::VIRTUAL_API.to_string());
        }
        registry
    }

    /// The models of `provider`: the catalog's, then its plugin's, with `models.json`'s
    /// changes and models on top.
    pub fn models_of(&self, provider: &str) -> Arc<Vec<Model>> {
        let mut merged = self
            .merged
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(models) = merged.get(provider) {
            return models.clone();
        }
        let mut models: Vec<Model> = match self.refreshed.get(provider) {
            _ if self.replaced.contains(provider) => Vec::new(),
            Some(stored) => stored.as_ref().clone(),
            None => catalog().models(provider).as_ref().clone(),
        };
        let declared = if self.replaced.contains(provider) {
            &[][..]
        } else {
            &self.declared[..]
        };
        for model in declared.iter().filter(|m| m.provider == provider) {
            replace_or_push(&mut models, model.clone());
        }
        for model in self.custom.iter().filter(|m| m.provider == provider) {
            replace_or_push(&mut models, model.clone());
        }
        // `models.json`'s changes apply over the built-in models and an extension's.
        if let Some(changes) = self.overrides.get(provider) {
            for model in models.iter_mut() {
                if let Some(base_url) = &changes.base_url {
                    model.base_url = base_url.clone();
                }
                if changes.headers.is_some() {
                    model.headers = changes.headers.clone();
                }
                if changes.compat.is_some() {
                    model.compat = crate::agent::models::compat_check::merge(
                        model.compat.as_ref(),
                        changes.compat.as_ref(),
                    );
                }
            }
        }
        for model in self
            .virtual_models
            .iter()
            .filter(|m| m.provider == provider)
        {
            replace_or_push(&mut models, model.clone());
        }
        let models = Arc::new(models);
        merged.insert(provider.to_string(), models.clone());
        models
    }

    /// The models that may be `pattern` exactly, without reading the whole catalog: those of
    /// the providers whose catalog line names it as an id, of the provider it names before a
    /// `/`, and the plugins' and `models.json`'s. `None` when none of them is an exact match
    /// (a part of a name needs every model).
    fn exact_pool(&self, pattern: &str) -> Option<Arc<Vec<Model>>> {
        let mut providers: Vec<String> = catalog()
            .providers_naming(pattern)
            .into_iter()
            .map(str::to_string)
            .collect();
        if let Some((named, _)) = pattern.split_once('/') {
            providers.push(named.to_string());
        }
        providers.extend(
            self.declared
                .iter()
                .chain(&self.custom)
                .chain(&self.virtual_models)
                .map(|m| m.provider.clone())
                .chain(self.refreshed.keys().cloned()),
        );
        let order = self.providers();
        let mut pool: Vec<Model> = Vec::new();
        for provider in order.iter().filter(|p| providers.contains(p)) {
            pool.extend(self.models_of(provider).iter().cloned());
        }
        let lower = pattern.to_ascii_lowercase();
        pool.iter()
            .any(|m| m.key().to_ascii_lowercase() == lower || m.id.to_ascii_lowercase() == lower)
            .then(|| Arc::new(pool))
    }

    /// Every provider, the catalog's first (in pi's order), then the plugins' and
    /// `models.json`'s.
    fn providers(&self) -> Vec<String> {
        let mut names: Vec<String> = catalog()
            .providers()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        for model in self
            .declared
            .iter()
            .chain(&self.custom)
            .chain(&self.virtual_models)
        {
            if !names.contains(&model.provider) {
                names.push(model.provider.clone());
            }
        }
        names
    }

    /// The models of the provider plugins loaded now, with `models.json` and `auth.json` read
    /// on top; each file that could not be used is a problem in the list (and left out).
    pub fn load(
        host: &PluginHost,
        models_file: &std::path::Path,
        auth_file: &std::path::Path,
    ) -> (ModelRegistry, Vec<String>) {
        Self::load_with_changes(host, models_file, auth_file, &[])
    }

    /// [`ModelRegistry::load`] with the providers extensions registered or removed since they
    /// loaded (`changes`, in order).
    pub fn load_with_changes(
        host: &PluginHost,
        models_file: &std::path::Path,
        auth_file: &std::path::Path,
        changes: &[ProviderChange],
    ) -> (ModelRegistry, Vec<String>) {
        let mut problems = Vec::new();
        let mut registry = ModelRegistry::from_host_with(host, changes, &mut problems);
        match registry.load_custom(models_file) {
            Ok(findings) => problems.extend(findings),
            Err(problem) => problems.push(format!("models.json ignored: {problem}")),
        }
        registry.drop_claimed_providers(&mut problems);
        registry.auth_file = auth_file.to_path_buf();
        if let Err(problem) = registry.load_store(&models_file.with_file_name("models-store.json"))
        {
            problems.push(format!("models-store.json ignored: {problem}"));
        }
        if let Err(problem) = registry.load_auth(auth_file) {
            problems.push(format!("auth.json ignored: {problem}"));
        }
        (registry, problems)
    }

    /// Reads pi's `models-store.json` (`{"<provider>": {"models": […], "checkedAt": …}}`, the
    /// catalogs pi refreshed from the network): each provider's chat models replace its
    /// built-in ones. A file that does not parse is reported and ignored.
    pub fn load_store(&mut self, path: &std::path::Path) -> Result<(), KeyError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(KeyError::file(path, err)),
        };
        let entries: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text.trim_start_matches('\u{feff}'))
                .map_err(|err| KeyError::file(path, err))?;
        for (provider, entry) in entries {
            let Some(models) = entry.get("models").and_then(serde_json::Value::as_array) else {
                continue;
            };
            let chat: Vec<Model> = models
                .iter()
                .filter(|m| m.get("type").is_none_or(|t| t == "chat"))
                .filter_map(|m| serde_json::from_value(m.clone()).ok())
                .collect();
            self.refreshed.insert(provider, Arc::new(chat));
        }
        self.forget_merged();
        Ok(())
    }

    /// True when `provider` lists virtual models and nothing else (pi's keyless provider).
    fn only_virtual(&self, provider: &str) -> bool {
        self.virtual_models.iter().any(|m| m.provider == provider)
            && catalog().models(provider).is_empty()
            && !self.refreshed.contains_key(provider)
            && !self
                .declared
                .iter()
                .chain(&self.custom)
                .any(|m| m.provider == provider)
    }

    /// Drops the merged lists (the sources changed).
    fn forget_merged(&mut self) {
        self.merged = Arc::default();
        self.everything = Arc::default();
    }

    /// Every model, in order: the catalog's providers in pi's order, then the others.
    pub fn all(&self) -> Arc<Vec<Model>> {
        self.everything
            .get_or_init(|| {
                Arc::new(
                    self.providers()
                        .iter()
                        .flat_map(|p| self.models_of(p).as_ref().clone())
                        .collect(),
                )
            })
            .clone()
    }

    /// True when `model` can be used: its provider has a key and a provider plugin serves its API.
    pub fn is_available(&self, model: &Model) -> bool {
        self.served_apis.contains(&model.api) && self.has_key(&model.provider)
    }

    /// The models that can be used, in order.
    pub fn available(&self) -> Vec<Model> {
        self.providers()
            .iter()
            .filter(|p| self.has_key(p))
            .flat_map(|p| self.models_of(p).as_ref().clone())
            .filter(|m| self.served_apis.contains(&m.api))
            .collect()
    }

    /// The model `provider`/`id`, when it is available.
    pub fn find_available(&self, provider: &str, id: &str) -> Option<Model> {
        self.find(provider, id).filter(|m| self.is_available(m))
    }

    /// The model `provider`/`id`, among all.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.models_of(provider)
            .iter()
            .find(|m| m.id == id)
            .cloned()
    }

    /// The model a session starts with when nothing names one: the first provider default
    /// (pi's order) that is available, else the first available model.
    pub fn default_model(&self) -> Option<Model> {
        catalog()
            .defaults()
            .iter()
            .filter(|d| self.has_key(&d.provider))
            .find_map(|d| self.find_available(&d.provider, &d.model))
            .or_else(|| self.available().into_iter().next())
    }

    /// Resolves `--models` / `enabledModels` patterns: globs (`*`, `?`, case-insensitive) against
    /// `provider/id` or `id`, or a pattern as `--model` takes it; each with an optional `:level`.
    pub fn resolve_scope(&self, patterns: &[String]) -> Vec<(Model, Option<ThinkingLevel>)> {
        let mut scoped: Vec<(Model, Option<ThinkingLevel>)> = Vec::new();
        for pattern in patterns {
            let (body, level) = match pattern.rsplit_once(':') {
                Some((head, tail)) if ThinkingLevel::parse(tail).is_some() => {
                    (head, ThinkingLevel::parse(tail))
                }
                _ => (pattern.as_str(), None),
            };
            let found: Vec<Model> = if body.contains(['*', '?']) {
                let body = body.to_ascii_lowercase();
                self.all()
                    .iter()
                    .filter(|m| {
                        glob(&body, &m.key().to_ascii_lowercase())
                            || glob(&body, &m.id.to_ascii_lowercase())
                    })
                    .cloned()
                    .collect()
            } else {
                self.resolve(body, None)
                    .map(|(m, _)| m)
                    .into_iter()
                    .collect()
            };
            for model in found {
                if !scoped.iter().any(|(m, _)| m.is(&model.provider, &model.id)) {
                    scoped.push((model, level));
                }
            }
        }
        scoped
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
        let pool = match provider {
            Some(provider) => self.models_of(provider),
            None => self.exact_pool(pattern).unwrap_or_else(|| self.all()),
        };
        // An exact id (or `provider/id`): the one usable provider's when several have it.
        let exact: Vec<&Model> = pool
            .iter()
            .filter(|m| m.key().to_ascii_lowercase() == lower || m.id.to_ascii_lowercase() == lower)
            .collect();
        let usable = |m: &&&Model| self.has_key(&m.provider);
        let found = exact
            .iter()
            .find(usable)
            .or(exact.first())
            .copied()
            .or_else(|| {
                // A part of an id or a name: usable providers first, then aliases
                // (`claude-sonnet-4-5` before `claude-sonnet-4-5-20250929`), then the latest.
                let matching: Vec<&Model> = pool
                    .iter()
                    .filter(|m| {
                        m.id.to_ascii_lowercase().contains(&lower)
                            || m.name.to_ascii_lowercase().contains(&lower)
                    })
                    .collect();
                let usable_ones: Vec<&Model> = matching.iter().filter(usable).copied().collect();
                let pool = if usable_ones.is_empty() {
                    matching
                } else {
                    usable_ones
                };
                let aliases: Vec<&Model> =
                    pool.iter().filter(|m| is_alias(&m.id)).copied().collect();
                let pool = if aliases.is_empty() { pool } else { aliases };
                pool.into_iter().max_by(|a, b| a.id.cmp(&b.id))
            });
        found.map(|m| (m.clone(), level))
    }
}

/// True for an id that is not a dated snapshot (`-latest`, or no `-YYYYMMDD` at its end).
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let dated = id.len() > 9
        && id.as_bytes()[id.len() - 9] == b'-'
        && id[id.len() - 8..].bytes().all(|b| b.is_ascii_digit());
    !dated
}

/// A model list with `model` in place of the one of the same provider and id, or added.
fn replace_or_push(models: &mut Vec<Model>, model: Model) {
    match models.iter_mut().find(|m| m.is(&model.provider, &model.id)) {
        Some(slot) => *slot = model,
        None => models.push(model),
    }
}

/// Matches `text` against a glob of `*` (any run) and `?` (one character).
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("anthropic/*", "anthropic/claude-sonnet-4-5"));
        assert!(glob("*sonnet*", "claude-sonnet-4-5"));
        assert!(glob("gpt-?", "gpt-5"));
        assert!(!glob("gpt-?", "gpt-55"));
        assert!(!glob("claude*", "openai/gpt"));
    }
}
