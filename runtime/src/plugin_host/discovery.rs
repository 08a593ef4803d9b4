//! Finding plugins: the first-party ones embedded in the binary, then each plugin directory
//! in order (the agent dir's `plugins/`, the project's `.pith/plugins/`, each `--plugins-dir`).
//!
//! In a directory, a plugin is either `<name>.toml` beside `<name>.wasm` (or beside the file its
//! `component` field names), or a subdirectory holding `pith.toml` and its component. A `.wasm`
//! that no manifest claims is reported, never loaded.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A first-party plugin compiled into the binary.
#[derive(Debug)]
pub struct EmbeddedPlugin {
    /// Its crate name.
    pub name: &'static str,
    /// Its `pith.toml`.
    pub manifest: &'static str,
    /// The component.
    pub wasm: &'static [u8],
    /// The component compiled to native code at build time (`Engine::precompile_component`
    /// with pith's code-generation settings), or empty when the build could not.
    pub precompiled: &'static [u8],
    /// Its `describe()` answer read at build time, as the JSON of the WIT value (the tools'
    /// `list<tool-spec>` or the provider's `provider-info`), or empty when the build could not.
    pub described: &'static str,
    /// The component's content hash, computed at build time.
    pub hash: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/embedded_plugins.rs"));

/// Where a plugin was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Built into the binary.
    Embedded,
    /// The agent directory's `plugins/`.
    User,
    /// The project's `.pith/plugins/`.
    Project,
    /// A `--plugins-dir`.
    Flag,
    /// A plugin named on the command line (`-e <path>`).
    Explicit,
}

/// A plugin found but not yet validated.
#[derive(Debug, Clone)]
pub enum Found {
    /// An embedded plugin.
    Embedded(&'static EmbeddedPlugin),
    /// A manifest file in a plugin directory.
    File {
        /// The manifest.
        manifest: PathBuf,
        /// Where it was found.
        origin: Origin,
    },
}

/// A file in a plugin directory that cannot be a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

/// A build tool's file that is no manifest (a plugin project used as a plugins directory).
fn is_build_file(path: &Path) -> bool {
    const BUILD_FILES: [&str; 7] = [
        "Cargo.toml",
        "pyproject.toml",
        "rust-toolchain.toml",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        ".clippy.toml",
    ];
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| BUILD_FILES.contains(&name))
}

/// Lists the manifests in `dir` and the `.wasm` files no manifest claims. A missing directory
/// has no plugins.
pub fn scan_dir(dir: &Path, origin: Origin) -> (Vec<Found>, Vec<Stray>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let mut found = Vec::new();
    let mut claimed: HashSet<PathBuf> = HashSet::new();
    for path in &paths {
        if path.is_dir() {
            let manifest = path.join("pith.toml");
            if manifest.is_file() {
                found.push(Found::File { manifest, origin });
            }
        } else if path.extension().is_some_and(|e| e == "toml") && !is_build_file(path) {
            claimed.insert(path.with_extension("wasm"));
            if let Some(component) = component_field(path) {
                claimed.insert(dir.join(component));
            }
            found.push(Found::File {
                manifest: path.clone(),
                origin,
            });
        }
    }
    let strays = paths
        .into_iter()
        .filter(|p| {
            p.is_file() && p.extension().is_some_and(|e| e == "wasm") && !claimed.contains(p)
        })
        .map(|path| {
            let reason = format!(
                "no manifest: put {} beside it",
                path.with_extension("toml")
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            );
            Stray { path, reason }
        })
        .collect();
    (found, strays)
}

/// The `component = "…"` field of a manifest, read leniently (full validation comes later).
fn component_field(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: toml::Value = toml::from_str(&text).ok()?;
    value.get("component")?.as_str().map(str::to_string)
}

/// The manifest of a plugin named on the command line: the `.toml` itself, the `.toml` beside
/// a `.wasm`, or the `pith.toml` of a directory.
pub fn explicit_manifest(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("pith.toml")
    } else if path.extension().is_some_and(|e| e == "wasm") {
        path.with_extension("toml")
    } else {
        path.to_path_buf()
    }
}

/// The component of a `pith.toml` plugin directory with no `component` field: its only `.wasm`.
pub fn sole_component(dir: &Path) -> Result<PathBuf, String> {
    let mut wasm: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|err| err.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    match wasm.len() {
        1 => Ok(wasm.remove(0)),
        0 => Err("no .wasm component in the plugin's directory".into()),
        n => Err(format!(
            "{n} .wasm files in the plugin's directory; name one with `component`"
        )),
    }
}
