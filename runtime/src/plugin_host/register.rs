//! Registering plugins: reading what each offers (built in, cached, or from the component's
//! own `describe()`), deferring the ones that need compiling, and loading a component (the
//! engine and linker are built on the first load).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

use super::call::{CallOptions, fresh_call};
use super::discovery::{self, Found, Origin};
use super::engine::PluginEngine;
use super::error::{CallError, LoadError};
use super::grants::{self, Capabilities};
use super::host::{PluginHost, Wasm};
use super::manifest::{Kind, Manifest};
use super::plugin::{ComponentSource, Loaded, META_VERSION, Plugin, PluginMeta, error_text};
use super::sandbox::StoreState;
use super::tool::ToolSpec;
use super::{bindings, provider, reload, resources};
use crate::settings::Settings;

impl PluginHost {
    /// True when plugins were left out at start-up to be loaded by
    /// [`PluginHost::load_deferred`].
    pub fn has_deferred(&self) -> bool {
        *self.deferred.borrow()
    }

    /// Loads the plugins left out at start-up (compiling them; a reload of every directory)
    /// and says what changed. [`PluginHost::deferred_done`] then releases the waiters.
    pub async fn load_deferred(&self) -> reload::ReloadReport {
        self.reload().await
    }

    /// Marks the deferred plugins as loaded (and their changes taken in by the session).
    pub fn deferred_done(&self) {
        self.deferred.send_replace(false);
    }

    /// Waits until no plugin left out at start-up is still loading (at once when none was).
    pub async fn deferred_settled(&self) {
        let mut pending = self.deferred.subscribe();
        let _ = pending.wait_for(|pending| !*pending).await;
    }

    /// Validates one candidate; `Ok(None)` when the settings disable it, or when `defer` and
    /// learning what it offers needs a compile (it is then marked as deferred).
    pub(super) async fn register(
        &self,
        found: Found,
        settings: &Settings,
        defer: bool,
    ) -> Result<Option<Plugin>, LoadError> {
        let (manifest_text, path, origin, source, hash) = match found {
            Found::Embedded(embedded) => (
                embedded.manifest.to_string(),
                format!("<embedded>/{}", embedded.name),
                Origin::Embedded,
                ComponentSource::Embedded(embedded),
                embedded.hash.to_string(),
            ),
            Found::File { manifest, origin } => {
                let text = std::fs::read_to_string(&manifest).map_err(|err| {
                    LoadError::new(&manifest, format!("cannot read the manifest: {err}"))
                })?;
                let parsed = Manifest::parse(&text)
                    .map_err(|err| LoadError::new(&manifest, format!("bad manifest: {err}")))?;
                let component = if parsed.component.is_none()
                    && manifest.file_name().is_some_and(|n| n == "pith.toml")
                {
                    discovery::sole_component(manifest.parent().unwrap_or(Path::new(".")))
                        .map_err(|reason| LoadError::new(&manifest, reason))?
                } else {
                    parsed.component_path(&manifest)
                };
                if !component.is_file() {
                    return Err(LoadError::new(&component, "the component file is missing"));
                }
                let hash = self.cache.file_hash(&component).map_err(|err| {
                    LoadError::new(&component, format!("cannot read the component: {err}"))
                })?;
                (
                    text,
                    manifest.display().to_string(),
                    origin,
                    ComponentSource::File(component),
                    hash,
                )
            }
        };
        let mut manifest = Manifest::parse(&manifest_text)
            .map_err(|err| LoadError::new(&path, format!("bad manifest: {err}")))?;
        let plugin_settings = grants::plugin_settings(settings, &manifest.id)
            .map_err(|reason| LoadError::new(&path, reason))?;
        if let Some(overrides) = &plugin_settings.limits {
            manifest.limits = manifest.limits.overridden(overrides).map_err(|reason| {
                LoadError::new(&path, format!("settings plugins.{}: {reason}", manifest.id))
            })?;
        }
        if plugin_settings.enabled == Some(false) {
            return Ok(None);
        }
        if manifest.has_kind(Kind::ScriptEngine) && origin != Origin::Embedded {
            return Err(LoadError::new(
                &path,
                "kind \"script-engine\" is pith's own codemode engine: a plugin cannot replace it \
                 (register a `codemode` tool from an extension to replace the tool)",
            ));
        }
        if self.options.no_extensions
            && manifest.has_kind(Kind::Extension)
            && origin != Origin::Explicit
        {
            return Ok(None);
        }
        let capabilities = Capabilities::resolve(
            &manifest.requested,
            plugin_settings.grant.as_ref(),
            origin == Origin::Embedded,
        );
        let config: BTreeMap<String, String> = plugin_settings
            .config
            .into_iter()
            .filter(|(key, _)| capabilities.allows_config(key))
            .collect();
        let mut plugin = Plugin {
            manifest,
            origin,
            path,
            source,
            hash,
            capabilities: Arc::new(capabilities),
            config: Arc::new(config),
            meta: PluginMeta::default(),
            loaded: tokio::sync::OnceCell::new(),
        };
        // The metadata is valid for these bytes claimed as these kinds (it records that they
        // passed validation against those worlds).
        let kinds: Vec<&str> = plugin.manifest.kinds.iter().map(|k| k.as_str()).collect();
        let meta_key = format!("{}-{}-m{META_VERSION}", plugin.hash, kinds.join("+"));
        let built_in = match &plugin.source {
            ComponentSource::Embedded(embedded) if !embedded.described.is_empty() => {
                PluginMeta::from_described(&plugin.manifest.kinds, embedded.described)
                    .inspect_err(|err| {
                        tracing::info!("describing {} at run time: {err}", plugin.manifest.id);
                    })
                    .ok()
            }
            _ => None,
        };
        match built_in.or_else(|| self.cache.metadata::<PluginMeta>(&meta_key)) {
            Some(meta) => plugin.meta = meta,
            // Providers are not deferred: the model named at start-up may be theirs.
            None if defer && !plugin.manifest.has_kind(Kind::Provider) => {
                tracing::info!("{} is compiled after start-up", plugin.path);
                self.deferred.send_replace(true);
                return Ok(None);
            }
            None => {
                let component_path = match &plugin.source {
                    ComponentSource::File(path) => path.display().to_string(),
                    ComponentSource::Embedded(_) => plugin.path.clone(),
                };
                let meta = self
                    .describe_component(&plugin)
                    .await
                    .map_err(|err| LoadError::new(&component_path, err.to_string()))?;
                self.cache.store_metadata(&meta_key, &meta);
                plugin.meta = meta;
            }
        }
        Ok(Some(plugin))
    }

    /// The engine and linker, built on first use; an engine that cannot be built fails the
    /// call that needed it, naming `plugin`.
    pub(super) fn wasm(&self, plugin: &Plugin) -> Result<&Wasm, CallError> {
        let wasm = self.wasm.get_or_init(|| {
            let engine = PluginEngine::with_settings(self.engine_settings)
                .map_err(|err| format!("cannot start the WebAssembly engine: {err:#}"))?;
            let linker = build_linker(&engine)
                .map_err(|err| format!("cannot link pith's imports: {err:#}"))?;
            Ok(Wasm { engine, linker })
        });
        wasm.as_ref().map_err(|reason| CallError::Load {
            plugin: plugin.manifest.id.clone(),
            reason: reason.clone(),
        })
    }

    /// The WebAssembly engine, once a plugin needed it.
    pub fn engine(&self) -> Option<&wasmtime::Engine> {
        self.wasm
            .get()
            .and_then(|wasm| wasm.as_ref().ok())
            .map(|wasm| wasm.engine.engine())
    }

    /// Compiles (or deserializes) and pre-instantiates a plugin, once.
    pub async fn loaded(&self, plugin: &Plugin) -> Result<Arc<Loaded>, CallError> {
        let load_error = |reason: String| CallError::Load {
            plugin: plugin.manifest.id.clone(),
            reason,
        };
        plugin
            .loaded
            .get_or_try_init(|| async {
                let source = plugin.source.clone();
                let hash = plugin.hash.clone();
                let cache = &self.cache;
                let (wasm, component) = tokio::task::block_in_place(|| {
                    let wasm = self.wasm(plugin)?;
                    cache
                        .component(&wasm.engine, &hash, source.precompiled(), || source.bytes())
                        .map(|(component, _)| (wasm, component))
                        .map_err(|err| load_error(err.0))
                })?;
                let pre = wasm.linker.instantiate_pre(&component).map_err(|err| {
                    let text = error_text(&err);
                    let fix = import_fix(&text)
                        .map(|fix| format!(" ({fix})"))
                        .unwrap_or_default();
                    load_error(format!(
                        "imports something pith does not provide: {text}{fix}"
                    ))
                })?;
                Loaded::new(pre, &plugin.manifest.kinds)
                    .map(Arc::new)
                    .map_err(load_error)
            })
            .await
            .cloned()
    }

    /// Asks the component itself what it offers: instantiates it and reads its `describe()`
    /// (startup uses the answer read at build time or cached on disk when there is one).
    pub async fn describe_component(&self, plugin: &Plugin) -> Result<PluginMeta, CallError> {
        let loaded = self.loaded(plugin).await?;
        let mut meta = PluginMeta::default();
        resources::describe_resources(self, plugin, &loaded, &mut meta).await?;
        let describe = || CallOptions {
            describe_first_party: true,
            ..CallOptions::default()
        };
        if let Some(pre) = loaded.tool.clone() {
            let specs = self
                .run_call(
                    plugin,
                    describe(),
                    fresh_call!(pre, |instance, store| instance
                        .pith_plugin0_1_0_tool()
                        .call_describe(&mut *store)
                        .await),
                )
                .await?;
            meta.tools = specs
                .into_iter()
                .map(ToolSpec::from_wit)
                .collect::<Result<_, _>>()
                .map_err(|reason| CallError::Load {
                    plugin: plugin.manifest.id.clone(),
                    reason,
                })?;
        }
        if let Some(pre) = loaded.provider.clone() {
            let info = self
                .run_call(
                    plugin,
                    describe(),
                    fresh_call!(pre, |instance, store| instance
                        .pith_plugin0_1_0_provider()
                        .call_describe(&mut *store)
                        .await),
                )
                .await?;
            meta.provider = Some(provider::ProviderMeta::from_wit(info));
        }
        Ok(meta)
    }
}

/// The fix for an import pith refuses, when pith knows one.
pub fn import_fix(reason: &str) -> Option<&'static str> {
    if !reason.contains("import") {
        return None;
    }
    if reason.contains("wasi:http") {
        Some(
            "pith does not provide wasi:http: use pith's own `pith:plugin/http` import (Rust: \
             pith_sdk::http); with componentize-js, build with `--disable http fetch-event`",
        )
    } else if reason.contains("pith:plugin/") {
        Some(
            "the component was built against a WIT package this pith does not have: rebuild it \
             against the WIT of `pith plugin wit`",
        )
    } else {
        None
    }
}

/// The linker every plugin is instantiated against: WASI (filesystem limited to the granted
/// preopens and the sandbox's path rules, no sockets) and pith's imports.
fn build_linker(engine: &PluginEngine) -> wasmtime::Result<Linker<StoreState>> {
    let mut linker = Linker::new(engine.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    super::guarded_fs::add_to_linker(&mut linker)?;
    use bindings::imports::pith::plugin0_1_0 as shared;
    shared::types::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    shared::host::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    shared::http::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    shared::process::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    shared::search::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    bindings::tool_world::pith::plugin0_1_0::tool_progress::add_to_linker::<_, HasSelf<_>>(
        &mut linker,
        |s| s,
    )?;
    bindings::extension_world::pith::plugin0_1_0::ui::add_to_linker::<_, HasSelf<_>>(
        &mut linker,
        |s| s,
    )?;
    bindings::extension_world::pith::plugin0_1_0::session::add_to_linker::<_, HasSelf<_>>(
        &mut linker,
        |s| s,
    )?;
    // Version 0.2's imports for extensions.
    use bindings::extension_world_v2::pith::plugin0_2_0 as v2;
    v2::models::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::entries::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::session_read::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::session_control::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::completion::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::events_bus::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::cli_flags::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    v2::wake_ups::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
    bindings::script_engine_world::pith::plugin0_2_0::script_host::add_to_linker::<_, HasSelf<_>>(
        &mut linker,
        |s| s,
    )?;
    Ok(linker)
}
