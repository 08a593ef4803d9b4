//! The plugin host of a session that works in another folder than the process's (an ACP
//! session's `cwd`). It loads that folder's own project plugins (`.pith/plugins`, when the folder
//! is trusted) and not the start folder's, with the folder's settings (grants, plugin config)
//! and sandbox. The user's and the command line's plugins load there too. What is per process
//! stays shared: the WebAssembly engine and linker, the compiled-component cache and the HTTP
//! client. A plugin that registers there exactly as in the process's host (same files, grants
//! and config) is the process's own `Plugin`, so its compiled code is shared as well.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use super::discovery::Origin;
use super::error::LoadError;
use super::host::{HostOptions, PluginHost};
use crate::sandbox::SandboxPolicy;
use crate::settings::Settings;

impl PluginHost {
    /// A host for sessions in `workspace`: its project plugins when `project_trusted`, its
    /// `settings` and `sandbox`; the rest as this host's. Plugins that fail are reported in the
    /// returned list and left out.
    pub async fn for_workspace(
        &self,
        workspace: &Path,
        project_trusted: bool,
        settings: Settings,
        sandbox: Arc<SandboxPolicy>,
    ) -> (PluginHost, Vec<LoadError>) {
        let mut plugin_dirs: Vec<(PathBuf, Origin)> = self
            .options
            .plugin_dirs
            .iter()
            .filter(|(_, origin)| *origin != Origin::Project)
            .cloned()
            .collect();
        if project_trusted {
            // After the user's directories, before the command line's (the standard order).
            let at = plugin_dirs
                .iter()
                .rposition(|(_, origin)| *origin == Origin::User)
                .map_or(0, |i| i + 1);
            plugin_dirs.insert(
                at,
                (workspace.join(".pith").join("plugins"), Origin::Project),
            );
        }
        let options = HostOptions {
            workspace: workspace.to_path_buf(),
            plugin_dirs,
            cache_dir: self.options.cache_dir.clone(),
            settings: settings.clone(),
            embedded: self.options.embedded,
            plugin_files: self.options.plugin_files.clone(),
            no_extensions: self.options.no_extensions,
            sandbox,
        };
        let host = PluginHost {
            engine_settings: self.engine_settings,
            wasm: self.wasm.clone(),
            cache: self.cache.clone(),
            plugins: RwLock::new(Arc::new(Vec::new())),
            tools: RwLock::new(Arc::new(Vec::new())),
            workspace: workspace.canonicalize().ok(),
            http: self.http.clone(),
            options,
            reloading: tokio::sync::Mutex::new(()),
            read_dirs: RwLock::new(self.read_dirs()),
            deferred: tokio::sync::watch::Sender::new(false),
            settings: RwLock::new(Arc::new(settings)),
            regrant: std::sync::atomic::AtomicBool::new(false),
        };
        let shared = self.plugins();
        let errors = host.register_all(false, &shared).await;
        (host, errors)
    }
}
