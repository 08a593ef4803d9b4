//! The keys of the model registry, as pi 1.5.2 resolves them: `auth.json` entries (API keys in
//! pi's value forms, OAuth logins renewed before they expire), `models.json` keys, the
//! providers' environment variables, and which providers can be used.

use crate::agent::models::catalog::catalog;
use crate::agent::models::credentials;
use crate::agent::models::oauth;
use crate::agent::models::{KeyError, ModelRegistry, RequestAuth, Stored};

/// The variable whose token Anthropic takes as `Authorization: Bearer` (never as a key).
const ANTHROPIC_AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";

impl ModelRegistry {
    /// Reads `auth.json` (pi's shape: `{"<provider>": {"type": "api_key", "key": "…"}}`, or an
    /// OAuth entry whose `access` token is used). A file that does not parse is reported.
    pub fn load_auth(&mut self, path: &std::path::Path) -> Result<(), KeyError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(KeyError::file(path, err)),
        };
        let entries: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&text).map_err(|err| KeyError::file(path, err))?;
        for (provider, entry) in entries {
            let text = |field: &str| {
                entry
                    .get(field)
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_string)
            };
            let stored = match entry.get("type").and_then(serde_json::Value::as_str) {
                Some("api_key") => Stored::ApiKey {
                    key: text("key"),
                    env: entry
                        .get("env")
                        .and_then(serde_json::Value::as_object)
                        .cloned()
                        .unwrap_or_default(),
                },
                Some("oauth") => match (text("access"), entry.as_object()) {
                    (Some(_), Some(fields)) => Stored::OAuth(oauth::OAuthCredential {
                        entry: fields.clone(),
                    }),
                    _ => Stored::Unknown,
                },
                _ => Stored::Unknown,
            };
            self.stored.insert(provider, stored);
        }
        Ok(())
    }

    /// The environment variables that hold `provider`'s key: its plugin's, else pi's table.
    fn env_vars(&self, provider: &str) -> &[String] {
        match self.key_env_vars.get(provider) {
            Some(vars) => vars,
            None => catalog()
                .provider(provider)
                .map(|p| p.env_vars.as_slice())
                .unwrap_or_default(),
        }
    }

    /// The API key for `provider`, when one resolves (see [`ModelRegistry::request_auth`]).
    pub fn api_key(&self, provider: &str) -> Option<String> {
        self.request_auth(provider)
            .ok()
            .and_then(|auth| auth.api_key)
    }

    /// A request's credentials for `provider`, in pi's order: `--api-key` (literal), the
    /// `auth.json` entry (which owns the provider: a key that does not resolve falls back to
    /// the provider's variables, `models.json` is not read), `models.json`'s `apiKey` (resolved
    /// at each request; one that does not resolve is an error, never sent), then the
    /// provider's environment variables.
    pub fn request_auth(&self, provider: &str) -> Result<RequestAuth, KeyError> {
        let key = |key: String| RequestAuth {
            api_key: Some(key),
            ..RequestAuth::default()
        };
        if let Some(runtime) = self.runtime_keys.get(provider).filter(|k| !k.is_empty()) {
            return Ok(key(runtime.clone()));
        }
        match self.stored.get(provider) {
            Some(Stored::ApiKey { key: raw, env }) => {
                let lookup = credentials::Lookup { scoped: Some(env) };
                let resolved = raw
                    .as_deref()
                    .and_then(|raw| credentials::resolve(raw, &lookup, true).ok())
                    .filter(|k| !k.is_empty());
                return Ok(match resolved {
                    Some(resolved) => key(resolved),
                    None => self.env_auth(provider),
                });
            }
            Some(Stored::OAuth(stored)) => {
                let renewed = self
                    .renewed
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .get(provider)
                    .cloned();
                let credential = renewed.as_ref().unwrap_or(stored);
                let (api_key, headers, base_url) = oauth::request_parts(provider, credential);
                return Ok(RequestAuth {
                    api_key,
                    headers,
                    base_url,
                });
            }
            Some(Stored::Unknown) => return Ok(RequestAuth::default()),
            None => {}
        }
        if let Some(raw) = self.config_keys.get(provider) {
            if let Some(legacy) = legacy_env_name(raw) {
                return Ok(key(legacy));
            }
            return credentials::resolve(raw, &credentials::Lookup::PROCESS, false)
                .map(key)
                .map_err(|unresolved| KeyError::Unresolved {
                    provider: provider.to_string(),
                    detail: unresolved.message(&format!("API key for provider \"{provider}\"")),
                });
        }
        Ok(self.env_auth(provider))
    }

    /// Renews `provider`'s OAuth token when it is about to expire (pi's 5 minutes), writing it
    /// back to `auth.json`; nothing for other credentials. The error names the provider and
    /// how to log in again.
    pub async fn refresh_oauth(&self, provider: &str) -> Result<(), KeyError> {
        if self.runtime_keys.contains_key(provider) {
            return Ok(());
        }
        let Some(Stored::OAuth(stored)) = self.stored.get(provider) else {
            return Ok(());
        };
        let current = self
            .renewed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(provider)
            .cloned()
            .unwrap_or_else(|| stored.clone());
        if !current.needs_refresh(provider) {
            return Ok(());
        }
        let fresh = oauth::refreshed(&self.auth_file, provider, &current).await?;
        self.renewed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(provider.to_string(), fresh);
        Ok(())
    }

    /// The provider's environment variables: the first set one is its key, but
    /// `ANTHROPIC_AUTH_TOKEN` is sent as `Authorization: Bearer` (and wins, as in pi).
    fn env_auth(&self, provider: &str) -> RequestAuth {
        let set = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
        let vars = self.env_vars(provider);
        if provider == "anthropic"
            && let Some(token) = vars
                .iter()
                .find(|v| *v == ANTHROPIC_AUTH_TOKEN)
                .and_then(|v| set(v))
        {
            return RequestAuth {
                headers: vec![("Authorization".into(), format!("Bearer {token}"))],
                ..RequestAuth::default()
            };
        }
        RequestAuth {
            api_key: vars.iter().find_map(|var| set(var)),
            ..RequestAuth::default()
        }
    }

    /// True when `provider` can be used, as pi lists it: a run-time key; an `auth.json` entry
    /// (OAuth, or a key that resolves — its command runs once — else the variables); a
    /// `models.json` key that can resolve (a command is not run); a set variable; or no key
    /// needed (a plugin's provider that names no variable).
    pub fn has_key(&self, provider: &str) -> bool {
        // A provider that lists only virtual models needs no key (pi's keyless provider).
        if self.only_virtual(provider) {
            return true;
        }
        let env_set = || {
            self.env_vars(provider)
                .iter()
                .any(|var| std::env::var(var).is_ok_and(|v| !v.is_empty()))
        };
        if self
            .runtime_keys
            .get(provider)
            .is_some_and(|k| !k.is_empty())
        {
            return true;
        }
        match self.stored.get(provider) {
            Some(Stored::OAuth(_)) => return true,
            Some(Stored::Unknown) => return false,
            Some(Stored::ApiKey { .. }) => {
                return self
                    .request_auth(provider)
                    .is_ok_and(|auth| auth.api_key.is_some() || !auth.headers.is_empty());
            }
            None => {}
        }
        if let Some(raw) = self.config_keys.get(provider) {
            return legacy_env_name(raw).is_some() || credentials::looks_resolvable(raw);
        }
        let needs_none = self
            .key_env_vars
            .get(provider)
            .is_some_and(|vars| vars.is_empty());
        needs_none || env_set()
    }
}

/// pi 0.73's form of a `models.json` key: the name of a set environment variable (pi 1.5 reads
/// `$NAME`; a bare name that is a set variable is still read as one, so 0.73's files work).
fn legacy_env_name(raw: &str) -> Option<String> {
    let is_name = !raw.is_empty()
        && raw.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
        && raw
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    is_name
        .then(|| std::env::var(raw).ok().filter(|v| !v.is_empty()))
        .flatten()
}
