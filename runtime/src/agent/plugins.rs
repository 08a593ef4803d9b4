//! The session's side of hot reload: after the plugin set changed, extensions are brought in
//! line (new and updated ones get `session_start`), skills and templates are found again, the
//! host hears `plugins_changed`, and each plugin that failed to load is an `extension_error`.

use serde_json::{Value, json};

use super::event::SessionEvent;
use super::session::Session;
use crate::plugin_host::reload::ReloadReport;

impl Session {
    /// Applies a reload of the plugin set.
    pub async fn plugins_reloaded(&self, report: ReloadReport) {
        let shared = self.shared();
        for error in &report.errors {
            shared
                .extensions
                .error(&error.path, "reload", &error.reason);
        }
        if report.is_unchanged() {
            return;
        }
        let fresh = shared.extensions.refresh();
        shared.reload_resources().await;
        shared.emit(&SessionEvent::PluginsChanged {
            added: report.added,
            updated: report.updated,
            removed: report.removed,
        });
        shared.extensions.session_start(&fresh).await;
    }

    /// `get_plugins`: every loaded plugin, as `pith plugins --json` lists it.
    pub fn plugins_json(&self) -> Value {
        let plugins: Vec<Value> = self
            .shared()
            .host
            .plugins()
            .iter()
            .map(|p| p.describe())
            .collect();
        json!({ "plugins": plugins })
    }
}
