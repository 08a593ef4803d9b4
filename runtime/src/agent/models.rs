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
    /// Keys from `models.json` (a literal, or the name of an environment variable), by provider.
    config_keys: HashMap<String, String>,
    /// Keys from `auth.json`, by provider.
    stored_keys: HashMap<String, String>,
}

/// `models.json` (pi's shape).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelsFile {
    #[serde(default)]
    providers: std::collections::BTreeMap<String, CustomProvider>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomProvider {
    base_url: Option<String>,
    api_key: Option<String>,
    api: Option<String>,
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    models: Vec<CustomModel>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomModel {
    id: String,
    name: Option<String>,
    api: Option<String>,
    base_url: Option<String>,
    reasoning: Option<bool>,
    input: Option<Vec<String>>,
    cost: Option<super::model::ModelCost>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    compat: Option<serde_json::Value>,
}

impl ModelRegistry {
    /// The models of every provider plugin, in load order.
    pub fn from_host(host: &PluginHost) -> ModelRegistry {
        let mut registry = ModelRegistry::default();
        for plugin in host.plugins().iter() {
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

    /// The models of the provider plugins loaded now, with `models.json` and `auth.json` read
    /// on top; each file that could not be used is a problem in the list (and left out).
    pub fn load(
        host: &PluginHost,
        models_file: &std::path::Path,
        auth_file: &std::path::Path,
    ) -> (ModelRegistry, Vec<String>) {
        let mut registry = ModelRegistry::from_host(host);
        let mut problems = Vec::new();
        if let Err(problem) = registry.load_custom(models_file) {
            problems.push(format!("models.json ignored: {problem}"));
        }
        if let Err(problem) = registry.load_auth(auth_file) {
            problems.push(format!("auth.json ignored: {problem}"));
        }
        (registry, problems)
    }

    /// Reads `auth.json` (pi's shape: `{"<provider>": {"type": "api_key", "key": "…"}}`, or an
    /// OAuth entry whose `access` token is used). A file that does not parse is reported.
    pub fn load_auth(&mut self, path: &std::path::Path) -> Result<(), String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(format!("{}: {err}", path.display())),
        };
        let entries: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
        for (provider, entry) in entries {
            let key = entry
                .get("key")
                .or_else(|| entry.get("access"))
                .and_then(serde_json::Value::as_str);
            if let Some(key) = key {
                self.stored_keys.insert(provider, key.to_string());
            }
        }
        Ok(())
    }

    /// Adds the providers and models of `models.json`: a provider with `models` adds them
    /// (replacing same-named ones); a provider without overrides the base URL and headers of
    /// its built-in models. A file that does not parse is reported and ignored.
    pub fn load_custom(&mut self, path: &std::path::Path) -> Result<(), String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(format!("{}: {err}", path.display())),
        };
        let file: ModelsFile =
            serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
        for (provider, config) in file.providers {
            if let Some(key) = &config.api_key {
                self.config_keys.insert(provider.clone(), key.clone());
            }
            if config.models.is_empty() {
                for model in self.models.iter_mut().filter(|m| m.provider == provider) {
                    if let Some(base_url) = &config.base_url {
                        model.base_url = base_url.clone();
                    }
                    if config.headers.is_some() {
                        model.headers = config.headers.clone();
                    }
                }
                continue;
            }
            for custom in config.models {
                let api = custom.api.or_else(|| config.api.clone()).ok_or_else(|| {
                    format!(
                        "{}: provider {provider}: model {} has no api",
                        path.display(),
                        custom.id
                    )
                })?;
                let base_url = custom
                    .base_url
                    .or_else(|| config.base_url.clone())
                    .ok_or_else(|| {
                        format!("{}: provider {provider} has no baseUrl", path.display())
                    })?;
                let model = Model {
                    name: custom.name.unwrap_or_else(|| custom.id.clone()),
                    id: custom.id,
                    api,
                    provider: provider.clone(),
                    base_url,
                    reasoning: custom.reasoning.unwrap_or(false),
                    input: custom.input.unwrap_or_else(|| vec!["text".into()]),
                    cost: custom.cost.unwrap_or_default(),
                    context_window: custom.context_window.unwrap_or(128_000),
                    max_tokens: custom.max_tokens.unwrap_or(16_384),
                    headers: custom.headers.or_else(|| config.headers.clone()),
                    compat: custom.compat,
                };
                match self
                    .models
                    .iter_mut()
                    .find(|m| m.is(&model.provider, &model.id))
                {
                    Some(slot) => *slot = model,
                    None => self.models.push(model),
                }
            }
        }
        Ok(())
    }

    /// Every model.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// The API key for `provider`: a run-time key, else the first set env var.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        if let Some(key) = self
            .runtime_keys
            .get(provider)
            .or_else(|| self.stored_keys.get(provider))
        {
            return Some(key.clone());
        }
        let from_env = self.key_env_vars.get(provider).and_then(|vars| {
            vars.iter()
                .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        });
        from_env.or_else(|| {
            // models.json: the name of an environment variable, else the key itself.
            let configured = self.config_keys.get(provider)?;
            Some(
                std::env::var(configured)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| configured.clone()),
            )
        })
    }

    /// True when `provider` can be used: it has a key, or needs none.
    pub fn has_key(&self, provider: &str) -> bool {
        match self.key_env_vars.get(provider) {
            Some(vars) if vars.is_empty() && !self.config_keys.contains_key(provider) => true,
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

    /// The model `provider`/`id`, when it is available (its provider has a key).
    pub fn find_available(&self, provider: &str, id: &str) -> Option<Model> {
        self.models
            .iter()
            .find(|m| m.is(provider, id) && self.has_key(&m.provider))
            .cloned()
    }

    /// The model `provider`/`id`, among all.
    pub fn find(&self, provider: &str, id: &str) -> Option<Model> {
        self.models.iter().find(|m| m.is(provider, id)).cloned()
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
                self.models
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
