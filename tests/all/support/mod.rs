//! Shared helpers for the integration tests: plugin fixtures built from `plugins/`, a shared
//! compiled-component cache, and a tiny HTTP server on loopback.
#![allow(dead_code)]

pub mod acp;
pub mod fake_llm;
pub mod ports;
pub mod rpc;
pub mod scenario;

use std::path::{Path, PathBuf};

use pith::plugin_host::discovery::{BUILT_PLUGINS_DIR, Origin};
use pith::plugin_host::{HostOptions, LoadError, PluginHost};
use pith::settings::Settings;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("runtime/ is in the repo")
        .to_path_buf()
}

/// The component the build made for the plugin crate `crate_name`.
pub fn built_component(crate_name: &str) -> PathBuf {
    Path::new(BUILT_PLUGINS_DIR).join(format!("{}.wasm", crate_name.replace('-', "_")))
}

/// Installs the pinned npm project `tests/<name>/` (its `package.json` and lock) once per build
/// directory, unless `<install>/<ready>` exists; returns the install's root.
pub fn npm_installed(name: &str, ready: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let source = repo_root().join("tests").join(name);
    if !root.join(ready).exists() {
        std::fs::create_dir_all(&root).unwrap();
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(source.join(file), root.join(file)).unwrap();
        }
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&root)
            .status()
            .expect("npm runs (the CI script installs Node.js and npm)");
        assert!(status.success(), "npm ci of tests/{name} failed");
    }
    root
}

/// The shared compiled-component cache of the test runs.
pub fn shared_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// A temporary workspace and plugins directory.
pub struct Fixture {
    pub root: tempfile::TempDir,
    pub workspace: PathBuf,
    pub plugins: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let root = tempfile::tempdir().expect("tempdir");
        let workspace = root.path().join("workspace");
        let plugins = root.path().join("plugins");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&plugins).unwrap();
        Fixture {
            workspace: workspace.canonicalize().unwrap(),
            plugins,
            root,
        }
    }

    /// Installs the plugin crate at `plugins/<group_and_crate>` as `<file_stem>.wasm` +
    /// `<file_stem>.toml`, with its manifest text passed through `edit`.
    pub fn install_as(
        &self,
        group_and_crate: &str,
        file_stem: &str,
        edit: impl FnOnce(String) -> String,
    ) {
        let crate_dir = repo_root().join("plugins").join(group_and_crate);
        let crate_name = crate_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let manifest = std::fs::read_to_string(crate_dir.join("pith.toml")).unwrap();
        std::fs::copy(
            built_component(&crate_name),
            self.plugins.join(format!("{file_stem}.wasm")),
        )
        .unwrap();
        std::fs::write(
            self.plugins.join(format!("{file_stem}.toml")),
            edit(manifest),
        )
        .unwrap();
    }

    /// Installs a plugin crate unchanged.
    pub fn install(&self, group_and_crate: &str) {
        let stem = group_and_crate.rsplit('/').next().unwrap().to_string();
        self.install_as(group_and_crate, &stem, |m| m);
    }

    /// Loads a host over this fixture's plugins directory with `settings`.
    pub async fn host(&self, settings: Value) -> (PluginHost, Vec<LoadError>) {
        self.host_with_cache(settings, Some(shared_cache())).await
    }

    /// Loads a host with a given cache directory.
    pub async fn host_with_cache(
        &self,
        settings: Value,
        cache_dir: Option<PathBuf>,
    ) -> (PluginHost, Vec<LoadError>) {
        self.host_with_embedded(settings, cache_dir, false).await
    }

    /// Loads a host with a given cache directory, with or without the first-party plugins.
    pub async fn host_with_embedded(
        &self,
        settings: Value,
        cache_dir: Option<PathBuf>,
        embedded: bool,
    ) -> (PluginHost, Vec<LoadError>) {
        self.host_deferring(settings, cache_dir, embedded, false)
            .await
    }

    /// Loads a host as `pith --mode rpc` does when `defer`: plugins that need compiling are
    /// left for [`PluginHost::load_deferred`].
    pub async fn host_deferring(
        &self,
        settings: Value,
        cache_dir: Option<PathBuf>,
        embedded: bool,
        defer: bool,
    ) -> (PluginHost, Vec<LoadError>) {
        PluginHost::load_deferring(
            HostOptions {
                workspace: self.workspace.clone(),
                plugin_dirs: vec![(self.plugins.clone(), Origin::Flag)],
                cache_dir,
                settings: Settings::from_value(settings),
                embedded,
                plugin_files: Vec::new(),
                no_extensions: false,
                sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(
                    &self.workspace,
                )),
            },
            defer,
        )
        .await
        .expect("the plugin host starts")
    }
}

/// The keys of a JSON object in their order (frames are checked key by key against pi's).
pub fn keys(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|object| object.keys().cloned().collect())
        .unwrap_or_default()
}

/// Serves `body` with status 200 to every request on a loopback port; returns the base URL.
pub async fn serve_text(body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let _ = socket.read(&mut buf).await;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

/// A plugins directory holding the built components of `crates` (paths under `plugins/`,
/// e.g. `examples/word-count`), each as `<crate>.wasm` beside its `<crate>.toml`.
pub fn plugins_dir_with(crates: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for group_and_crate in crates {
        install_plugin(dir.path(), group_and_crate);
    }
    dir
}

/// Copies one built plugin crate into `dir` as `<crate>.wasm` + `<crate>.toml`.
pub fn install_plugin(dir: &Path, group_and_crate: &str) {
    let crate_dir = repo_root().join("plugins").join(group_and_crate);
    let name = crate_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::copy(built_component(&name), dir.join(format!("{name}.wasm"))).unwrap();
    std::fs::copy(
        crate_dir.join("pith.toml"),
        dir.join(format!("{name}.toml")),
    )
    .unwrap();
    // The files a plugin names relative to its folder (an extension's skills and templates)
    // go with it.
    for file in ["SKILL.md", "dynamic.md"] {
        if crate_dir.join(file).is_file() {
            std::fs::copy(crate_dir.join(file), dir.join(file)).unwrap();
        }
    }
}
