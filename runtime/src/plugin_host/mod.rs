//! The plugin host: finds plugins (embedded first-party ones and plugin directories), validates
//! them against the worlds they claim, grants them what the manifest declares and the user
//! allows, caches compiled code and `describe()` metadata by content hash, and calls them in
//! fresh sandboxed stores.
//!
//! Startup is flat in the number of plugins: it reads manifests and metadata (built into the
//! binary for the first-party plugins, cached on disk for the others) only; the engine is built
//! and a component deserialized and pre-instantiated on its first call.

pub mod bindings;
pub mod cache;
mod call;
pub mod child_process;
pub mod codegen;
mod register;
pub use call::CallOptions;
use call::fresh_call;
use register::Wasm;
pub use register::import_fix;
pub use sandbox::Escalation;
pub mod convert;
pub mod discovery;
pub mod engine;
pub mod error;
pub mod extension;
mod extension_v1;
pub mod grants;
pub mod guarded_fs;
pub mod http_client;
pub mod imports;
pub mod manifest;
pub mod meta;
pub mod path_guard;
pub mod plugin;
pub mod provider;
pub mod provider_hooks;
pub mod reload;
pub mod resources;
pub mod sandbox;
pub mod session_context;
pub mod tool;
pub mod tool_arguments;
pub mod watch;
mod workspace_host;

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::content::ToolOutput;
use crate::settings::Settings;
use cache::Cache;
use discovery::{EMBEDDED_PLUGINS, Found, Origin};
pub use error::{CallError, LoadError};
use manifest::Kind;
use plugin::Plugin;
use sandbox::ProgressSink;
use tool::ToolSpec;

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
    engine_settings: engine::EngineSettings,
    /// The engine and linker, made on first use; shared with the hosts of sessions in other
    /// folders ([`PluginHost::for_workspace`]).
    wasm: Arc<std::sync::OnceLock<Result<Wasm, String>>>,
    cache: Arc<Cache>,
    /// The current set, swapped whole by a reload; calls hold their own `Arc`s, so a call in
    /// flight finishes on the version it started with.
    plugins: RwLock<Arc<Vec<Arc<Plugin>>>>,
    /// The tools of the current set, built once per set (swapped with it).
    tools: RwLock<PluginTools>,
    workspace: Option<PathBuf>,
    http: http_client::HttpClient,
    options: HostOptions,
    reloading: tokio::sync::Mutex<()>,
    read_dirs: RwLock<Arc<Vec<PathBuf>>>,
    /// True while plugins left out at start-up (they need compiling) are not yet loaded.
    deferred: tokio::sync::watch::Sender<bool>,
    /// The settings grants, limits and config come from (replaced by `reload`).
    settings: RwLock<Arc<Settings>>,
    /// Set when the settings were replaced: the next reload grants every plugin again.
    regrant: std::sync::atomic::AtomicBool,
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
        let engine_settings = match options.settings.get("engine") {
            None => engine::EngineSettings::default(),
            Some(value) => serde_json::from_value(value.clone()).map_err(|err| {
                wasmtime::Error::msg(format!(
                    "settings engine: {err} (keys: pooling, poolInstances, maxWasmStackKb)"
                ))
            })?,
        };
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
    async fn register_all(&self, defer: bool, shared: &[Arc<Plugin>]) -> Vec<LoadError> {
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
    fn candidates(&self, errors: &mut Vec<LoadError>) -> Vec<Found> {
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
    fn swap(&self, plugins: Vec<Arc<Plugin>>) {
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

    /// Calls the tool `name` with `arguments` in a fresh sandboxed instance. The tool's own
    /// failures come back as an error [`ToolOutput`]; sandbox failures as a [`CallError`].
    /// When `cancel` fires, waiting host calls return and child processes are killed, so the
    /// tool can report what it has; a call that does not wind down in time is dropped.
    pub async fn call_tool(
        &self,
        name: &str,
        call_id: &str,
        arguments: &Value,
        progress: Option<ProgressSink>,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Result<ToolOutput, CallError> {
        let plugin = self
            .tools()
            .iter()
            .find(|(spec, _)| spec.name == name)
            .map(|(_, plugin)| plugin.clone())
            .ok_or_else(|| CallError::NotFound(format!("Tool {name} not found")))?;
        let options = CallOptions {
            progress,
            cancel,
            ..CallOptions::default()
        };
        self.call_plugin_tool(&plugin, name, call_id, arguments, options)
            .await
    }

    /// Calls the tool `name` of `plugin` (the version a run was shown, even if a reload has
    /// replaced it since), as [`PluginHost::call_tool`] does.
    pub async fn call_plugin_tool(
        &self,
        plugin: &Arc<Plugin>,
        name: &str,
        call_id: &str,
        arguments: &Value,
        options: CallOptions,
    ) -> Result<ToolOutput, CallError> {
        // The first-party tools take pi's other argument forms too.
        let prepared;
        let arguments = if plugin.is_first_party() {
            prepared = tool_arguments::prepare(name, arguments);
            &prepared
        } else {
            arguments
        };
        let loaded = self.loaded(plugin).await?;
        let pre = loaded
            .tool
            .clone()
            .ok_or_else(|| CallError::NotFound(format!("Tool {name} not found")))?;
        let (name, call_id, arguments) =
            (name.to_string(), call_id.to_string(), arguments.to_string());
        let result = self
            .run_call(
                plugin,
                options,
                fresh_call!(pre, |instance, store| instance
                    .pith_plugin0_1_0_tool()
                    .call_execute(&mut *store, &name, &call_id, &arguments)
                    .await),
            )
            .await?;
        Ok(match result {
            Ok(output) => ToolOutput::from_wit(output, false),
            Err(error) => ToolOutput::from_wit_error(error),
        })
    }
}

/// Adds a plugin to a set; one with the same id is replaced (later directories win).
fn insert(plugins: &mut Vec<Arc<Plugin>>, plugin: Arc<Plugin>) {
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
