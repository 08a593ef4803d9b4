//! The plugin set and what holds it: where plugins are looked for ([`HostOptions`]), the loaded
//! set swapped whole by a reload, its tool index, and the engine and linker made on first use.
//! The host's other work is in the files beside this one, each an `impl PluginHost` of its own
//! concern: calls (`call.rs`), registration (`register.rs`), reloads, providers, resources.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use wasmtime::component::Linker;

use crate::settings::Settings;

use super::cache::{self, Cache};
use super::discovery::{self, EMBEDDED_PLUGINS, Found, Origin};
use super::engine::{self, PluginEngine};
use super::error::LoadError;
use super::http_client;
use super::manifest::Kind;
use super::plugin::Plugin;
use super::sandbox::StoreState;
use super::tool::ToolSpec;

/// The wasmtime engine and the linker every plugin is instantiated against, built on the first
/// load of a component: a start that finds every plugin's metadata in the cache needs neither.
pub(super) struct Wasm {
    pub(super) engine: PluginEngine,
    pub(super) linker: Linker<StoreState>,
}

/// Where to look for plugins and how to run them.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The workspace tools work in (the session's working directory).
    pub workspace: PathBuf,
    /// Plugin directories, in load order (later ones override plugins with the same id).
    pub plugin_dirs: Vec<(PathBuf, Origin)>,
    /// The compiled-component cache, or `None` to compile in memory only.
    pub cache_dir: Option<PathBuf>,
    /// Settings (grants, plugin config, enabled flags).
    pub settings: Settings,
    /// Whether to load the first-party plugins built into the binary.
    pub embedded: bool,
    /// Plugins named on the command line (`-e`): manifests, components or plugin directories.
    pub plugin_files: Vec<PathBuf>,
    /// `--no-extensions`: extensions load only from `plugin_files`.
    pub no_extensions: bool,
    /// The sandbox of the model's tools and shell (`--sandbox`, `sandbox.*`).
    pub sandbox: Arc<crate::sandbox::SandboxPolicy>,
}

impl HostOptions {
    /// The standard directories: the agent dir's `plugins/`, the project's `.pith/plugins/`
    /// (only when the project is trusted), then each `--plugins-dir`.
    pub fn standard_dirs(
        agent_plugins: &Path,
        workspace: &Path,
        project_trusted: bool,
        extra: &[PathBuf],
    ) -> Vec<(PathBuf, Origin)> {
        let mut dirs = vec![(agent_plugins.to_path_buf(), Origin::User)];
        if project_trusted {
            dirs.push((workspace.join(".pith").join("plugins"), Origin::Project));
        }
        dirs.extend(extra.iter().map(|d| (d.clone(), Origin::Flag)));
        dirs
    }
}

/// The loaded plugins and the machinery to call them.
pub struct PluginHost {
    pub(super) engine_settings: engine::EngineSettings,
    /// The engine and linker, made on first use; shared with the hosts of sessions in other
    /// folders ([`PluginHost::for_workspace`]).
    pub(super) wasm: Arc<std::sync::OnceLock<Result<Wasm, String>>>,
    pub(super) cache: Arc<Cache>,
    /// The current set, swapped whole by a reload; calls hold their own `Arc`s, so a call in
    /// flight finishes on the version it started with.
    pub(super) plugins: RwLock<Arc<Vec<Arc<Plugin>>>>,
    /// The tools of the current set, built once per set (swapped with it).
    pub(super) tools: RwLock<PluginTools>,
    pub(super) workspace: Option<PathBuf>,
    pub(super) http: http_client::HttpClient,
    pub(super) options: HostOptions,
    pub(super) reloading: tokio::sync::Mutex<()>,
    pub(super) read_dirs: RwLock<Arc<Vec<PathBuf>>>,
    /// True while plugins left out at start-up (they need compiling) are not yet loaded.
    pub(super) deferred: tokio::sync::watch::Sender<bool>,
    /// The settings grants, limits and config come from (replaced by `reload`).
    pub(super) settings: RwLock<Arc<Settings>>,
    /// Set when the settings were replaced: the next reload grants every plugin again.
    pub(super) regrant: std::sync::atomic::AtomicBool,
}

impl PluginHost {
    /// Finds, validates and registers every plugin. Plugins that fail are reported in the
    /// returned list and left out; the others load.
    pub async fn load(options: HostOptions) -> wasmtime::Result<(PluginHost, Vec<LoadError>)> {
        PluginHost::load_deferring(options, false).await
    }

    /// As [`PluginHost::load`], but with `defer`, a plugin whose component would have to be
    /// compiled to learn what it offers (a new or changed third-party plugin; not a provider,
    /// whose models the start-up may need) is left out, so
    /// start-up never waits for a compile: [`PluginHost::load_deferred`] loads those later,
    /// and [`PluginHost::deferred_settled`] waits for that.
    pub async fn load_deferring(
        options: HostOptions,
        defer: bool,
    ) -> wasmtime::Result<(PluginHost, Vec<LoadError>)> {
        let engine_settings = engine::EngineSettings::from_settings(&options.settings)
            .map_err(wasmtime::Error::msg)?;
        let mut http_timeouts = match options.settings.get("http") {
            None => http_client::HttpTimeouts::default(),
            Some(value) => serde_json::from_value(value.clone()).map_err(|err| {
                wasmtime::Error::msg(format!(
                    "settings http: {err} (keys: connectTimeoutMs, firstByteTimeoutMs, idleTimeoutMs)"
                ))
            })?,
        };
        // pi's name for the stall timeout of a streamed answer; `http.idleTimeoutMs` wins.
        let idle_set = options
            .settings
            .get("http")
            .is_some_and(|http| http.get("idleTimeoutMs").is_some());
        if let Some(ms) = options.settings.number("retry", "streamIdleTimeoutMs")
            && !idle_set
        {
            http_timeouts.idle_timeout_ms = ms;
        }
        // pi 1.5's `httpIdleTimeoutMs`: the wait for the headers and between two chunks of the
        // body; 0 or "disabled" turns it off. `http.*` wins.
        let disabled = 10 * 365 * 24 * 3_600_000;
        let idle = match options.settings.get("httpIdleTimeoutMs") {
            Some(serde_json::Value::String(off)) if off == "disabled" => Some(disabled),
            Some(value) => value.as_u64().map(|ms| if ms == 0 { disabled } else { ms }),
            None => None,
        };
        if let Some(ms) = idle {
            let http = options.settings.get("http");
            let set = |key: &str| http.is_some_and(|http| http.get(key).is_some());
            if !set("firstByteTimeoutMs") {
                http_timeouts.first_byte_timeout_ms = ms;
            }
            if !set("idleTimeoutMs") {
                http_timeouts.idle_timeout_ms = ms;
            }
        }
        // pi's `retry.provider.timeoutMs`: the wait for a provider's response headers.
        if let Some(ms) = options
            .settings
            .get("retry")
            .and_then(|retry| retry.get("provider"))
            .and_then(|provider| provider.get("timeoutMs"))
            .and_then(serde_json::Value::as_u64)
            .filter(|ms| *ms > 0)
        {
            let http = options.settings.get("http");
            if http.is_none_or(|http| http.get("firstByteTimeoutMs").is_none()) {
                http_timeouts.first_byte_timeout_ms = ms;
            }
        }
        // pi's `httpProxy` (agent directory only: a project cannot set it).
        let proxy = options
            .settings
            .get("httpProxy")
            .and_then(serde_json::Value::as_str)
            .filter(|url| !url.is_empty())
            .map(str::to_string);
        let cache = Arc::new(Cache::new(options.cache_dir.clone()));
        let workspace = options.workspace.canonicalize().ok();
        let settings = RwLock::new(Arc::new(options.settings.clone()));
        let host = PluginHost {
            engine_settings,
            wasm: Arc::new(std::sync::OnceLock::new()),
            cache,
            plugins: RwLock::new(Arc::new(Vec::new())),
            tools: RwLock::new(Arc::new(Vec::new())),
            workspace,
            http: http_client::client(http_timeouts, proxy),
            options,
            reloading: tokio::sync::Mutex::new(()),
            read_dirs: RwLock::new(Arc::new(Vec::new())),
            deferred: tokio::sync::watch::Sender::new(false),
            settings,
            regrant: std::sync::atomic::AtomicBool::new(false),
        };
        let errors = host.register_all(defer, &[]).await;
        Ok((host, errors))
    }

    /// Registers every candidate and makes them the current set; a plugin registered as one of
    /// `shared` is (same files, grants and config) is taken from there, compiled code and all.
    pub(super) async fn register_all(&self, defer: bool, shared: &[Arc<Plugin>]) -> Vec<LoadError> {
        let mut plugins = Vec::new();
        let mut errors = Vec::new();
        for candidate in self.candidates(&mut errors) {
            match self
                .register(candidate, &self.options.settings, defer)
                .await
            {
                Ok(Some(plugin)) => {
                    let same = shared.iter().find(|other| {
                        other.path == plugin.path
                            && other.hash == plugin.hash
                            && other.manifest == plugin.manifest
                            && other.capabilities == plugin.capabilities
                            && other.config == plugin.config
                    });
                    insert(
                        &mut plugins,
                        same.cloned().unwrap_or_else(|| Arc::new(plugin)),
                    );
                }
                Ok(None) => {}
                Err(err) => errors.push(err),
            }
        }
        self.cache.flush_index();
        self.swap(plugins);
        errors
    }

    /// Every plugin the embedded set and the directories offer now, in load order; files that
    /// cannot be plugins go to `errors`.
    pub(super) fn candidates(&self, errors: &mut Vec<LoadError>) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        if self.options.embedded {
            found.extend(EMBEDDED_PLUGINS.iter().map(Found::Embedded));
        }
        for (dir, origin) in &self.options.plugin_dirs {
            let (plugins, strays) = discovery::scan_dir(dir, *origin);
            found.extend(plugins);
            errors.extend(strays.into_iter().map(|s| LoadError::new(s.path, s.reason)));
        }
        for path in &self.options.plugin_files {
            let manifest = discovery::explicit_manifest(&self.options.workspace.join(path));
            let javascript = ["js", "mjs", "cjs", "ts", "mts", "cts"];
            if path
                .extension()
                .is_some_and(|ext| javascript.iter().any(|j| ext == *j))
            {
                errors.push(LoadError::new(
                    path,
                    "a pi JavaScript extension: pith loads plugins that are WebAssembly components (a directory with pith.toml); port it with `pith plugin new --lang js` (see `pith docs plugins`)",
                ));
            } else if manifest.is_file() {
                found.push(Found::File {
                    manifest,
                    origin: Origin::Explicit,
                });
            } else {
                errors.push(LoadError::new(&manifest, "no such plugin manifest"));
            }
        }
        found
    }

    /// Replaces the plugin set, and its tool index, at once.
    pub(super) fn swap(&self, plugins: Vec<Arc<Plugin>>) {
        let tools = Arc::new(tool_index(&plugins));
        let mut current = self
            .plugins
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *self
            .tools
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = tools;
        *current = Arc::new(plugins);
    }

    /// Lets plugins with workspace access also read `dirs` (canonical paths; read-only).
    pub fn grant_read_dirs(&self, dirs: Vec<PathBuf>) {
        let dirs: Vec<PathBuf> = dirs
            .into_iter()
            .filter_map(|d| d.canonicalize().ok())
            .collect();
        *self
            .read_dirs
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(dirs);
    }

    /// The sandbox of the model's tools and shell.
    pub fn sandbox(&self) -> Arc<crate::sandbox::SandboxPolicy> {
        self.options.sandbox.clone()
    }

    /// The directories granted with [`PluginHost::grant_read_dirs`].
    pub fn read_dirs(&self) -> Arc<Vec<PathBuf>> {
        self.read_dirs
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The directories watched for changes: the plugin directories and those holding plugins
    /// named on the command line.
    pub fn plugin_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .options
            .plugin_dirs
            .iter()
            .map(|(dir, _)| dir.clone())
            .collect();
        for path in &self.options.plugin_files {
            let manifest = discovery::explicit_manifest(&self.options.workspace.join(path));
            if let Some(parent) = manifest.parent()
                && !dirs.iter().any(|d| parent.starts_with(d))
            {
                dirs.push(parent.to_path_buf());
            }
        }
        dirs
    }

    /// How many components were compiled and how many came from the disk cache.
    pub fn cache_stats(&self) -> cache::CacheStats {
        self.cache.stats()
    }

    /// Every loaded plugin, as of now (a reload swaps in a new list).
    pub fn plugins(&self) -> Arc<Vec<Arc<Plugin>>> {
        self.plugins
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The plugin with this id.
    pub fn plugin(&self, id: &str) -> Option<Arc<Plugin>> {
        self.plugins().iter().find(|p| p.manifest.id == id).cloned()
    }

    /// Every tool of the current set, by name, with the plugin that exports it; a tool from a
    /// later plugin replaces a same-named earlier one (so a plugin tool named like a built-in
    /// replaces the built-in). Built once per plugin set; a run keeps the list it started with.
    pub fn tools(&self) -> PluginTools {
        self.tools
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// Adds a plugin to a set; one with the same id is replaced (later directories win).
pub(super) fn insert(plugins: &mut Vec<Arc<Plugin>>, plugin: Arc<Plugin>) {
    if let Some(existing) = plugins
        .iter_mut()
        .find(|p| p.manifest.id == plugin.manifest.id)
    {
        tracing::info!(
            "plugin {} from {} replaces the one from {}",
            plugin.manifest.id,
            plugin.path,
            existing.path
        );
        *existing = plugin;
    } else {
        plugins.push(plugin);
    }
}

impl PluginHost {
    /// Every plugin as `pith plugins --json` and `get_plugins` list it, each with the tools of
    /// its that another plugin's tool of the same name replaces (`shadowed`: which one serves
    /// the name, and why).
    pub fn describe_plugins(&self) -> Vec<serde_json::Value> {
        let tools = self.tools();
        self.plugins()
            .iter()
            .map(|plugin| {
                let mut described = plugin.describe();
                let shadowed: Vec<serde_json::Value> = plugin
                    .meta
                    .tools
                    .iter()
                    .filter_map(|tool| {
                        let (_, winner) = tools.iter().find(|(spec, _)| spec.name == tool.name)?;
                        (winner.manifest.id != plugin.manifest.id).then(|| {
                            serde_json::json!({
                                "tool": tool.name,
                                "servedBy": winner.manifest.id,
                                "why": "a plugin loaded later serves the name (built-in plugins, \
                                        then the agent's, the project's, --plugins-dir, -e)",
                            })
                        })
                    })
                    .collect();
                if !shadowed.is_empty() {
                    described["shadowed"] = serde_json::Value::Array(shadowed);
                }
                described
            })
            .collect()
    }
}

/// The tools of a plugin set, by name, with the plugin exporting each.
pub type PluginTools = Arc<Vec<(ToolSpec, Arc<Plugin>)>>;

/// The tool index of `plugins`: by name, a later plugin's tool replacing an earlier one's.
fn tool_index(plugins: &[Arc<Plugin>]) -> Vec<(ToolSpec, Arc<Plugin>)> {
    let mut tools: Vec<(ToolSpec, Arc<Plugin>)> = Vec::new();
    for plugin in plugins.iter().filter(|p| p.manifest.has_kind(Kind::Tool)) {
        for spec in &plugin.meta.tools {
            match tools.iter_mut().find(|(s, _)| s.name == spec.name) {
                Some(slot) => {
                    if slot.1.manifest.id != plugin.manifest.id {
                        tracing::warn!(
                            "the tool {} of plugin {} replaces the one of plugin {} (loaded earlier)",
                            spec.name,
                            plugin.manifest.id,
                            slot.1.manifest.id
                        );
                    }
                    *slot = (spec.clone(), plugin.clone());
                }
                None => tools.push((spec.clone(), plugin.clone())),
            }
        }
    }
    tools
}
