//! The plugin hosts of sessions in other folders than the one pith started in: one per folder
//! ([`PluginHost::for_workspace`]: that folder's project plugins, settings and sandbox, the
//! compiled code shared), made for the first session there and kept while a session uses it
//! ([`WorkspaceHosts::release_unused`] lets the others go, and their watchers stop). Each is
//! watched, so a change to its project plugins or to the user's reaches the sessions that use
//! it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

use super::{Place, StartFolder};
use crate::plugin_host::reload::ReloadReport;
use crate::plugin_host::{PluginHost, watch};

/// What a front-end does when a folder's plugins were reloaded: tell the sessions on that host.
pub type OnReload = Arc<dyn Fn(&Weak<PluginHost>, ReloadReport) + Send + Sync>;

/// The hosts made so far, by folder.
#[derive(Default)]
pub struct WorkspaceHosts {
    hosts: tokio::sync::Mutex<HashMap<PathBuf, Held>>,
}

/// A folder's host and its watcher.
struct Held {
    host: Arc<PluginHost>,
    _watcher: Option<watch::PluginWatcher>,
    /// The holders of `host` when no session has it (this entry and its watcher's task).
    unused_at: usize,
}

impl WorkspaceHosts {
    /// The plugin host of a session at `place` (the process's own in the start folder), and
    /// what the user is told of plugins there that could not load. A new folder's host is
    /// watched; `on_reload` hears of its reloads.
    pub async fn host_for(
        &self,
        start: &StartFolder,
        place: &Place,
        on_reload: OnReload,
    ) -> (Arc<PluginHost>, Vec<String>) {
        let Some(sandbox) = &place.sandbox else {
            return (start.host.clone(), Vec::new());
        };
        let mut hosts = self.hosts.lock().await;
        if let Some(held) = hosts.get(&place.cwd) {
            return (held.host.clone(), Vec::new());
        }
        let trusted = place.args.approve == Some(true);
        let (host, errors) = start
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
        let watched = Arc::downgrade(&host);
        let watcher = match watch::watch(host.clone(), move |report| on_reload(&watched, report)) {
            Ok(watcher) => Some(watcher),
            Err(err) => {
                tracing::warn!(
                    "the plugins of {} are not watched (no hot reload): {err}",
                    place.cwd.display()
                );
                None
            }
        };
        // Held here and by the watcher's task; the clone returned is the caller's.
        let unused_at = Arc::strong_count(&host);
        hosts.insert(
            place.cwd.clone(),
            Held {
                host: host.clone(),
                _watcher: watcher,
                unused_at,
            },
        );
        (host, notices)
    }

    /// Lets go of the hosts no session holds any more (a multi-session host closed or parked
    /// the last session of their folder): their instances are freed and their watchers stop.
    pub async fn release_unused(&self) {
        self.hosts
            .lock()
            .await
            .retain(|_, held| Arc::strong_count(&held.host) > held.unused_at);
    }
}
