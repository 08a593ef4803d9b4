//! A plugin found and validated: its manifest, grants, content hash, cached metadata, and its
//! compiled component, loaded on first use.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use wasmtime::component::InstancePre;

use super::bindings::{
    extension_world, extension_world_v2, prompt_template_world, provider_world,
    script_engine_world, skill_world, tool_world,
};
use super::discovery::{EmbeddedPlugin, Origin};
use super::grants::Capabilities;
use super::manifest::{Kind, Manifest};
use super::sandbox::StoreState;
use super::tool::ToolSpec;

/// Where a plugin's component bytes come from.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    /// Built into the binary.
    Embedded(&'static EmbeddedPlugin),
    /// A file.
    File(PathBuf),
}

impl ComponentSource {
    /// Reads the component's bytes.
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        match self {
            ComponentSource::Embedded(plugin) => Ok(plugin.wasm.to_vec()),
            ComponentSource::File(path) => std::fs::read(path),
        }
    }

    /// The native code built into the binary for an embedded component (empty for files).
    pub fn precompiled(&self) -> &'static [u8] {
        match self {
            ComponentSource::Embedded(plugin) => plugin.precompiled,
            ComponentSource::File(_) => &[],
        }
    }
}

/// What `describe()` said, cached on disk by content hash so startup does not instantiate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PluginMeta {
    /// The tools of a tool plugin.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// What a provider plugin serves.
    #[serde(default)]
    pub provider: Option<super::meta::ProviderMeta>,
    /// What an extension plugin registers.
    #[serde(default)]
    pub extension: Option<super::meta::ExtensionMeta>,
    /// The skills of a skill pack.
    #[serde(default)]
    pub skills: Vec<super::meta::SkillMeta>,
    /// The templates of a prompt-template pack.
    #[serde(default)]
    pub templates: Vec<super::meta::TemplateMeta>,
}

impl PluginMeta {
    /// The metadata of an embedded plugin from its `describe()` answer read at build time
    /// (the JSON of the WIT value: `list<tool-spec>` for a tool plugin, `provider-info` for a
    /// provider), converted as a live answer is.
    pub fn from_described(kinds: &[Kind], json: &str) -> Result<PluginMeta, String> {
        let mut meta = PluginMeta::default();
        if kinds.contains(&Kind::Tool) {
            let specs: Vec<super::bindings::imports::pith::plugin0_1_0::types::ToolSpec> =
                serde_json::from_str(json).map_err(|err| err.to_string())?;
            meta.tools = specs
                .into_iter()
                .map(ToolSpec::from_wit)
                .collect::<Result<_, _>>()?;
        } else if kinds.contains(&Kind::Provider) {
            let info = serde_json::from_str(json).map_err(|err| err.to_string())?;
            meta.provider = Some(super::meta::ProviderMeta::from_wit(info));
        } else if !kinds.contains(&Kind::ScriptEngine) {
            // A script engine describes nothing.
            return Err("only tool and provider plugins are described at build time".into());
        }
        Ok(meta)
    }
}

/// The version of [`PluginMeta`]'s layout, part of its cache key.
pub const META_VERSION: u32 = 4;

/// An extension's entry points, by the version of the extension world it was built for.
#[derive(Clone)]
pub enum ExtensionPre {
    /// Built for `pith:plugin@0.1.0` (its events and answers are adapted).
    V1(extension_world::ExtensionPluginCorePre<StoreState>),
    /// Built for `pith:plugin@0.2.0`.
    V2(extension_world_v2::ExtensionPluginCorePre<StoreState>),
}

/// A compiled component, pre-instantiated against the host's imports, with the typed entry
/// points of the kinds it claims (each checked against its world's exports).
pub struct Loaded {
    /// The compiled component (what it imports and exports).
    pub component: wasmtime::component::Component,
    /// The tool world's entry points.
    pub tool: Option<tool_world::ToolPluginPre<StoreState>>,
    /// The provider world's entry points.
    pub provider: Option<provider_world::ProviderPluginPre<StoreState>>,
    /// The extension world's entry points.
    pub extension: Option<ExtensionPre>,
    /// The skill world's entry points.
    pub skill: Option<skill_world::SkillPluginPre<StoreState>>,
    /// The prompt-template world's entry points.
    pub prompt_template: Option<prompt_template_world::PromptTemplatePluginPre<StoreState>>,
    /// The script-engine world's entry points.
    pub script_engine: Option<script_engine_world::ScriptEnginePluginPre<StoreState>>,
}

impl Loaded {
    /// Checks the pre-instantiated component against the worlds of `kinds`.
    pub fn new(pre: InstancePre<StoreState>, kinds: &[Kind]) -> Result<Loaded, String> {
        let check = |kind: Kind, result: wasmtime::Result<()>| implemented(kind, result);
        let mut loaded = Loaded {
            component: pre.component().clone(),
            tool: None,
            provider: None,
            extension: None,
            skill: None,
            prompt_template: None,
            script_engine: None,
        };
        for &kind in kinds {
            match kind {
                Kind::Tool => check(
                    kind,
                    tool_world::ToolPluginPre::new(pre.clone()).map(|p| loaded.tool = Some(p)),
                )?,
                Kind::Provider => check(
                    kind,
                    provider_world::ProviderPluginPre::new(pre.clone())
                        .map(|p| loaded.provider = Some(p)),
                )?,
                Kind::Extension => {
                    // Version 0.2's world, else 0.1's (the error names what 0.1 lacks).
                    let extension =
                        match extension_world_v2::ExtensionPluginCorePre::new(pre.clone()) {
                            Ok(v2) => ExtensionPre::V2(v2),
                            Err(_) => ExtensionPre::V1(implemented(
                                kind,
                                extension_world::ExtensionPluginCorePre::new(pre.clone()),
                            )?),
                        };
                    loaded.extension = Some(extension);
                }
                Kind::Skill => check(
                    kind,
                    skill_world::SkillPluginPre::new(pre.clone()).map(|p| loaded.skill = Some(p)),
                )?,
                Kind::PromptTemplate => check(
                    kind,
                    prompt_template_world::PromptTemplatePluginPre::new(pre.clone())
                        .map(|p| loaded.prompt_template = Some(p)),
                )?,
                Kind::ScriptEngine => check(
                    kind,
                    script_engine_world::ScriptEnginePluginPre::new(pre.clone())
                        .map(|p| loaded.script_engine = Some(p)),
                )?,
            }
        }
        Ok(loaded)
    }
}

/// `result` of checking a component against `kind`'s world, its error saying so.
fn implemented<T>(kind: Kind, result: wasmtime::Result<T>) -> Result<T, String> {
    result.map_err(|err| format!("does not implement the {kind} world: {}", error_text(&err)))
}

/// The text of an error and its causes.
pub fn error_text(err: &wasmtime::Error) -> String {
    err.chain()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

/// A plugin found, validated and granted.
pub struct Plugin {
    /// Its manifest.
    pub manifest: Manifest,
    /// Where it was found.
    pub origin: Origin,
    /// The manifest's path (or `<embedded>/<crate>`), for listings and errors.
    pub path: String,
    /// The component's path, for files.
    pub source: ComponentSource,
    /// The component's content hash.
    pub hash: String,
    /// What it may do.
    pub capabilities: Arc<Capabilities>,
    /// The config values it may read (granted keys only).
    pub config: Arc<BTreeMap<String, String>>,
    /// Its cached `describe()` metadata.
    pub meta: PluginMeta,
    pub(crate) loaded: tokio::sync::OnceCell<Arc<Loaded>>,
}

impl Plugin {
    /// The plugin as `pith plugins --json` and `get_plugins` list it: id, version, kinds, origin,
    /// path, description, tools, granted capabilities and limits.
    pub fn describe(&self) -> serde_json::Value {
        let plugin = self;
        let caps = &plugin.capabilities;
        serde_json::json!({
            "id": plugin.manifest.id,
            "version": plugin.manifest.version,
            "kinds": plugin.manifest.kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
            "origin": plugin.origin,
            "path": plugin.path,
            "description": plugin.manifest.description,
            "tools": plugin.meta.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "granted": {
                "workspace": caps.workspace,
                "http": caps.http.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                "config": caps.config,
                "process": caps.process,
                "models": caps.models,
                "providers": caps.providers,
                "dirs": caps.dirs,
            },
            "limits": {
                "memoryMb": plugin.manifest.limits.memory_bytes >> 20,
                "deadlineMs": plugin.manifest.limits.deadline_ms,
                "timeoutMs": plugin.manifest.limits.timeout_ms,
            },
        })
    }

    /// True for first-party plugins.
    pub fn is_first_party(&self) -> bool {
        self.origin == Origin::Embedded
    }

    /// True when the component has been compiled and pre-instantiated in this process.
    pub fn is_loaded(&self) -> bool {
        self.loaded.initialized()
    }

    /// True unless it is known to be an extension built for version 0.2 or later (it has not
    /// been loaded yet, or it was built for 0.1): such an extension gets agent events as pi's
    /// JSON.
    pub fn may_speak_extension_v1(&self) -> bool {
        self.loaded
            .get()
            .is_none_or(|loaded| matches!(loaded.extension, Some(ExtensionPre::V1(_))))
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("id", &self.manifest.id)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}
