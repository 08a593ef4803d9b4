//! Where an ACP session works: any absolute directory the client names (`crate::workspaces`),
//! with that folder's own trust decision (its record, never the start folder's `--approve`) and
//! its own plugin host, watched so a reload reaches the sessions on it.

use std::path::Path;
use std::sync::{Arc, Weak};

use agent_client_protocol::Error;

use super::Server;
use crate::plugin_host::PluginHost;
use crate::workspaces::{Place, PlaceError};

impl Server {
    /// The place of a session in `cwd`: an absolute, existing directory.
    pub(super) fn place(&self, cwd: &Path) -> Result<Place, Error> {
        self.start.place(cwd, None).map_err(|err| match err {
            PlaceError::Sandbox(_) => super::internal(err.to_string()),
            _ => super::invalid(err.to_string()),
        })
    }

    /// The plugin host of a session at `place` (the process's own in the start folder), and
    /// what the client is told of plugins there that could not load.
    pub(super) async fn host_for(&self, place: &Place) -> (Arc<PluginHost>, Vec<String>) {
        let server = self.this.clone();
        self.workspace_hosts
            .host_for(
                &self.start,
                place,
                Arc::new(move |host, report| {
                    if let Some(server) = server.upgrade() {
                        server.plugins_reloaded(host, report);
                    }
                }),
            )
            .await
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
