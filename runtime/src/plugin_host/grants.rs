//! The grant model: the manifest declares, the user's settings grant, and a plugin gets what
//! both allow. First-party plugins come with their declared capabilities granted; a third-party
//! plugin gets the workspace access it declares and nothing else (network, process, config
//! keys, model calls) unless the user grants it in `settings.json`:
//!
//! ```json
//! { "plugins": { "word-count": {
//!     "grant": { "workspace": "read", "http": ["https://api.example.com/"], "config": true, "process": false, "models": true },
//!     "config": { "EXAMPLE_API_KEY": "…" } } } }
//! ```
//!
//! `http` and `config` take `true` (everything declared) or a list; a granted URL prefix narrower
//! than a declared one narrows it. `dirs` (folders outside the workspace an extension reads,
//! writes and watches) takes `true` or a list too, and is never granted without the user's word,
//! not even to a first-party plugin. `providers` (an extension's provider registrations, which
//! receive the user's keys and conversations) is a switch like `process` and `models`.

use std::path::PathBuf;

use crate::settings::Settings;
use serde::{Deserialize, Serialize};

/// How much of the workspace a plugin may touch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceAccess {
    /// No filesystem at all.
    #[default]
    None,
    /// Read-only.
    Read,
    /// Read and write.
    Write,
}

/// A URL prefix on an allowlist: scheme, host, optional port (any port when absent) and a
/// path prefix that matches whole segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPrefix {
    scheme: String,
    host: String,
    port: Option<u16>,
    path: String,
    text: String,
}

impl UrlPrefix {
    /// Parses an `http://` or `https://` prefix.
    pub fn parse(text: &str) -> Result<UrlPrefix, String> {
        let url =
            reqwest::Url::parse(text).map_err(|err| format!("{text:?} is not a URL: {err}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("{text:?}: only http and https URLs can be granted"));
        }
        let host = url
            .host_str()
            .ok_or_else(|| format!("{text:?} has no host"))?
            .to_ascii_lowercase();
        if url.query().is_some() || url.fragment().is_some() {
            return Err(format!(
                "{text:?}: a prefix cannot have a query or fragment"
            ));
        }
        // `Url` fills in the default port as None and keeps an explicit one.
        let explicit_port = url.port();
        Ok(UrlPrefix {
            scheme: url.scheme().to_string(),
            host,
            port: explicit_port,
            path: url.path().to_string(),
            text: text.to_string(),
        })
    }

    /// The prefix as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when `url` falls under this prefix.
    pub fn allows(&self, url: &reqwest::Url) -> bool {
        url.scheme() == self.scheme
            && url.host_str().map(str::to_ascii_lowercase).as_deref() == Some(self.host.as_str())
            && self
                .port
                .is_none_or(|port| url.port_or_known_default() == Some(port))
            && path_under(url.path(), &self.path)
    }

    /// True when everything `other` allows, this allows too.
    fn covers(&self, other: &UrlPrefix) -> bool {
        self.scheme == other.scheme
            && self.host == other.host
            && (self.port.is_none() || self.port == other.port)
            && path_under(&other.path, &self.path)
    }
}

/// True when `path` is `prefix` or below it, segment-wise.
fn path_under(path: &str, prefix: &str) -> bool {
    if prefix.is_empty() || prefix == "/" {
        return true;
    }
    match path.strip_prefix(prefix) {
        Some(rest) => prefix.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

impl<'de> Deserialize<'de> for UrlPrefix {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        UrlPrefix::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The capabilities a manifest asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requested {
    /// Access to the workspace.
    pub workspace: WorkspaceAccess,
    /// URL prefixes it may call.
    pub http: Vec<UrlPrefix>,
    /// Config keys it may read.
    pub config: Vec<String>,
    /// Whether it may run child processes.
    pub process: bool,
    /// Whether it may call models through the host (an extension's `completion`).
    pub models: bool,
    /// Folders outside the workspace it reads, writes and watches (absolute).
    pub dirs: Vec<PathBuf>,
    /// Whether it may register providers (an extension's `register-provider`).
    pub providers: bool,
}

/// `true` for everything declared, or an explicit list.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum GrantList<T> {
    /// Everything declared (`true`) or nothing (`false`).
    All(bool),
    /// These items.
    Only(Vec<T>),
}

/// What the user grants a plugin in settings (`plugins.<id>.grant`). Absent fields keep the
/// default: the declared workspace, nothing else.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Workspace access, at most what is declared.
    pub workspace: Option<WorkspaceAccess>,
    /// URL prefixes.
    pub http: Option<GrantList<UrlPrefix>>,
    /// Config keys.
    pub config: Option<GrantList<String>>,
    /// Child processes.
    pub process: Option<bool>,
    /// Model calls through the host.
    pub models: Option<bool>,
    /// Folders outside the workspace.
    pub dirs: Option<GrantList<PathBuf>>,
    /// Provider registrations.
    pub providers: Option<bool>,
}

/// The capabilities a plugin really has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Workspace access.
    pub workspace: WorkspaceAccess,
    /// URL prefixes it may call.
    pub http: Vec<UrlPrefix>,
    /// Config keys it may read.
    pub config: Vec<String>,
    /// Whether it may run child processes.
    pub process: bool,
    /// Whether it may call models through the host.
    pub models: bool,
    /// Folders outside the workspace it may read, write and watch (each only when granted,
    /// first-party plugins included).
    pub dirs: Vec<PathBuf>,
    /// Whether it may register providers (which receive the user's keys and requests).
    pub providers: bool,
}

impl Capabilities {
    /// What a plugin gets from its declaration, the user's grant, and whether it is
    /// first-party (first-party plugins have everything they declare unless the user narrows it).
    pub fn resolve(
        requested: &Requested,
        grant: Option<&Grant>,
        first_party: bool,
    ) -> Capabilities {
        let empty = Grant::default();
        let grant = grant.unwrap_or(&empty);
        let workspace = grant.workspace.map_or(requested.workspace, |granted| {
            granted.min(requested.workspace)
        });
        let http = match &grant.http {
            None => {
                if first_party {
                    requested.http.clone()
                } else {
                    Vec::new()
                }
            }
            Some(GrantList::All(all)) => {
                if *all {
                    requested.http.clone()
                } else {
                    Vec::new()
                }
            }
            Some(GrantList::Only(granted)) => intersect_prefixes(&requested.http, granted),
        };
        let config = match &grant.config {
            None => {
                if first_party {
                    requested.config.clone()
                } else {
                    Vec::new()
                }
            }
            Some(GrantList::All(all)) => {
                if *all {
                    requested.config.clone()
                } else {
                    Vec::new()
                }
            }
            Some(GrantList::Only(keys)) => requested
                .config
                .iter()
                .filter(|k| keys.contains(k))
                .cloned()
                .collect(),
        };
        let process = requested.process && grant.process.unwrap_or(first_party);
        let models = requested.models && grant.models.unwrap_or(first_party);
        let providers = requested.providers && grant.providers.unwrap_or(first_party);
        // Never without the user's word: a folder outside the workspace is theirs.
        let dirs = match &grant.dirs {
            None | Some(GrantList::All(false)) => Vec::new(),
            Some(GrantList::All(true)) => requested.dirs.clone(),
            Some(GrantList::Only(granted)) => requested
                .dirs
                .iter()
                .filter(|d| granted.contains(d))
                .cloned()
                .collect(),
        };
        Capabilities {
            workspace,
            http,
            config,
            process,
            models,
            dirs,
            providers,
        }
    }

    /// True when `url` is under a granted prefix.
    pub fn allows_url(&self, url: &reqwest::Url) -> bool {
        self.http.iter().any(|prefix| prefix.allows(url))
    }

    /// True when `key` was granted.
    pub fn allows_config(&self, key: &str) -> bool {
        self.config.iter().any(|k| k == key)
    }
}

/// For each declared prefix and granted prefix where one covers the other, the narrower one.
fn intersect_prefixes(declared: &[UrlPrefix], granted: &[UrlPrefix]) -> Vec<UrlPrefix> {
    let mut out: Vec<UrlPrefix> = Vec::new();
    for d in declared {
        for g in granted {
            let narrower = if d.covers(g) {
                Some(g)
            } else if g.covers(d) {
                Some(d)
            } else {
                None
            };
            if let Some(prefix) = narrower
                && !out.contains(prefix)
            {
                out.push(prefix.clone());
            }
        }
    }
    out
}

/// What the settings say about one plugin (`plugins.<id>`).
#[derive(Debug, Clone, Default, serde::Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PluginSettings {
    /// False disables the plugin.
    pub enabled: Option<bool>,
    /// The capabilities the user grants it.
    pub grant: Option<Grant>,
    /// Overrides of the manifest's limits.
    pub limits: Option<LimitOverrides>,
    /// Config values it may read (only the granted keys).
    pub config: std::collections::BTreeMap<String, String>,
}

/// The user's overrides of a plugin's limits (settings `plugins.<id>.limits`; `timeoutMs: 0`
/// removes the wall-clock limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct LimitOverrides {
    /// The memory cap, MiB.
    pub memory_mb: Option<u64>,
    /// Guest time per call, ms.
    pub deadline_ms: Option<u64>,
    /// Wall-clock time per call, ms.
    pub timeout_ms: Option<u64>,
}

/// The settings of the plugin `id` (`plugins.<id>`); a malformed entry is reported in `Err`.
pub fn plugin_settings(settings: &Settings, id: &str) -> Result<PluginSettings, String> {
    match settings.get("plugins").and_then(|p| p.get(id)) {
        None => Ok(PluginSettings::default()),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|err| format!("settings plugins.{id}: {err}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn plugin_settings_are_read_and_a_malformed_entry_names_the_plugin() {
        let settings = Settings::from_value(serde_json::json!({"plugins": {
            "x": {"enabled": true, "config": {"K": "v"}},
            "y": {"enabled": "yes"}
        }}));
        let x = plugin_settings(&settings, "x").unwrap();
        assert_eq!(x.enabled, Some(true));
        assert_eq!(x.config.get("K").map(String::as_str), Some("v"));
        let err = plugin_settings(&settings, "y").unwrap_err();
        assert!(err.starts_with("settings plugins.y:"), "{err}");
        assert_eq!(
            plugin_settings(&settings, "z").unwrap(),
            PluginSettings::default()
        );
    }

    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap()
    }

    fn requested() -> Requested {
        Requested {
            workspace: WorkspaceAccess::Write,
            http: vec![UrlPrefix::parse("http://127.0.0.1").unwrap()],
            config: vec!["A".into(), "B".into()],
            process: true,
            models: true,
            dirs: vec![PathBuf::from("/srv/drop")],
            providers: true,
        }
    }

    #[test]
    fn a_folder_outside_the_workspace_needs_the_users_grant_even_for_first_party() {
        let none = Capabilities::resolve(&requested(), None, true);
        assert!(none.dirs.is_empty());
        let all = Grant {
            dirs: Some(GrantList::All(true)),
            ..Grant::default()
        };
        let caps = Capabilities::resolve(&requested(), Some(&all), false);
        assert_eq!(caps.dirs, [PathBuf::from("/srv/drop")]);
        let other = Grant {
            dirs: Some(GrantList::Only(vec![PathBuf::from("/elsewhere")])),
            ..Grant::default()
        };
        assert!(
            Capabilities::resolve(&requested(), Some(&other), false)
                .dirs
                .is_empty()
        );
    }

    #[test]
    fn prefixes_match_host_port_and_whole_segments() {
        let p = UrlPrefix::parse("https://api.example.com/v1").unwrap();
        assert!(p.allows(&url("https://api.example.com/v1")));
        assert!(p.allows(&url("https://api.example.com/v1/chat")));
        assert!(!p.allows(&url("https://api.example.com/v10")));
        assert!(!p.allows(&url("https://api.example.com.evil.net/v1")));
        assert!(!p.allows(&url("http://api.example.com/v1")));
        let any_port = UrlPrefix::parse("http://127.0.0.1").unwrap();
        assert!(any_port.allows(&url("http://127.0.0.1:9999/x")));
        let one_port = UrlPrefix::parse("http://127.0.0.1:8080/").unwrap();
        assert!(!one_port.allows(&url("http://127.0.0.1:9999/x")));
        assert!(one_port.allows(&url("http://127.0.0.1:8080/x")));
    }

    #[test]
    fn third_party_gets_only_its_workspace_by_default() {
        let caps = Capabilities::resolve(&requested(), None, false);
        assert_eq!(
            caps,
            Capabilities {
                workspace: WorkspaceAccess::Write,
                ..Default::default()
            }
        );
    }

    #[test]
    fn first_party_gets_what_it_declares() {
        let caps = Capabilities::resolve(&requested(), None, true);
        assert!(caps.process);
        assert_eq!(caps.config.len(), 2);
        assert_eq!(caps.http.len(), 1);
    }

    #[test]
    fn grants_narrow_and_never_widen() {
        let grant: Grant = serde_json::from_value(serde_json::json!({
            "workspace": "read", "http": ["http://127.0.0.1:4000/api"], "config": ["B", "Z"], "process": true
        }))
        .unwrap();
        let caps = Capabilities::resolve(&requested(), Some(&grant), false);
        assert_eq!(caps.workspace, WorkspaceAccess::Read);
        assert_eq!(
            caps.http,
            vec![UrlPrefix::parse("http://127.0.0.1:4000/api").unwrap()]
        );
        assert_eq!(caps.config, vec!["B".to_string()]);
        assert!(caps.process);

        let wider: Grant =
            serde_json::from_value(serde_json::json!({"http": ["http://"]})).unwrap_or_default();
        let caps = Capabilities::resolve(&Requested::default(), Some(&wider), false);
        assert!(caps.http.is_empty());
        let mut none_declared = requested();
        none_declared.workspace = WorkspaceAccess::Read;
        let write: Grant =
            serde_json::from_value(serde_json::json!({"workspace": "write"})).unwrap();
        assert_eq!(
            Capabilities::resolve(&none_declared, Some(&write), false).workspace,
            WorkspaceAccess::Read
        );
    }
}
