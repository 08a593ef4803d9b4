//! The plugin hosts of sessions in other folders than the one pith started in: one per folder
//! ([`PluginHost::for_workspace`]: that folder's project plugins, settings and sandbox, the
//! compiled code shared), made for the first session there and kept while the process runs.
//! Each is watched, so a change to its project plugins or to the user's reaches the sessions
//! that use it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use super::Server;
use super::places::Place;
use crate::plugin_host::{PluginHost, watch};

/// The hosts made so far, by folder.
#[derive(Default)]
pub(super) struct WorkspaceHosts {
    hosts: tokio::sync::Mutex<HashMap<PathBuf, Held>>,
}

/// A folder's host and its watcher.
struct Held {
    host: Arc<PluginHost>,
    _watcher: Option<watch::PluginWatcher>,
}

impl Server {
    /// The plugin host of a session at `place` (the process's own in the start folder), and
    /// what the client is told of plugins there that could not load.
    pub(super) async fn host_for(&self, place: &Place) -> (Arc<PluginHost>, Vec<String>) {
        let Some(sandbox) = &place.sandbox else {
            return (self.host.clone(), Vec::new());
        };
        let mut hosts = self.workspace_hosts.hosts.lock().await;
        if let Some(held) = hosts.get(&place.cwd) {
            return (held.host.clone(), Vec::new());
        }
        let trusted = place.args.approve == Some(true);
        let (host, errors) = self
            .host
            .for_workspace(&place.cwd, trusted, place.settings.clone(), sandbox.clone())
            .await;
        let host = Arc::new(host);
        let notices = errors
            .iter()
            .map(|error| {
                format!(
                    "A plugin of {} was not loaded: {error}",
                    place.cwd.display()
                )
            })
            .collect();
        let server = self.this.clone();
        let watched = Arc::downgrade(&host);
        let watcher = match watch::watch(host.clone(), move |report| {
            if let Some(server) = server.upgrade() {
                server.plugins_reloaded(&watched, report);
            }
        }) {
            Ok(watcher) => Some(watcher),
            Err(err) => {
                tracing::warn!(
                    "the plugins of {} are not watched (no hot reload): {err}",
                    place.cwd.display()
                );
                None
            }
        };
        hosts.insert(
            place.cwd.clone(),
            Held {
                host: host.clone(),
                _watcher: watcher,
            },
        );
        (host, notices)
    }

    /// Tells the sessions on `host` that its plugins were reloaded.
    pub(super) fn plugins_reloaded(
        &self,
        host: &Weak<PluginHost>,
        report: crate::plugin_host::reload::ReloadReport,
    ) {
        let sessions: Vec<_> = self
            .sessions()
            .values()
            .filter(|open| Weak::ptr_eq(&Arc::downgrade(&open.host), host))
            .map(|open| open.session.clone())
            .collect();
        for session in sessions {
            let report = report.clone();
            tokio::spawn(async move { session.plugins_reloaded(report).await });
        }
    }
}
