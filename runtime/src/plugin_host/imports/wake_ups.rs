//! Version 0.2's `wake-ups` import: timers and file watches an extension sets, called back as
//! `timer` and `file-change` events. The session keeps them ([`SessionAccess`]); without one
//! (a call outside a session) nothing is set. A watch needs the `workspace` capability.

use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::wake_ups;
use crate::plugin_host::grants::WorkspaceAccess;
use crate::plugin_host::sandbox::StoreState;
use crate::plugin_host::session_context::SessionAccess;

/// The shortest period of a repeating timer.
pub const MIN_PERIOD_MS: u64 = 10;

impl wake_ups::Host for StoreState {
    async fn set_timer(&mut self, id: String, delay_ms: u64, repeat: bool) {
        let plugin = self.spec.plugin_id.clone();
        let delay = if repeat {
            delay_ms.max(MIN_PERIOD_MS)
        } else {
            delay_ms
        };
        self.with_session(|s: &dyn SessionAccess| s.set_timer(&plugin, &id, delay, repeat));
    }

    async fn cancel_timer(&mut self, id: String) -> bool {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s: &dyn SessionAccess| s.cancel_timer(&plugin, &id))
            .unwrap_or(false)
    }

    async fn watch(&mut self, id: String, path: String) -> Result<(), String> {
        let plugin = self.spec.plugin_id.clone();
        if self.spec.capabilities.workspace == WorkspaceAccess::None
            && self.spec.capabilities.dirs.is_empty()
        {
            return Err(format!(
                "the extension {plugin} may not watch files: declare workspace = \"read\" (or \
                 dirs = [\"/folder\"] outside the workspace) under [capabilities] in its \
                 pith.toml (and grant it for a third-party plugin)"
            ));
        }
        self.with_session(|s: &dyn SessionAccess| s.watch(&plugin, &id, &path))
            .unwrap_or_else(|| Err("no session: the extension is not running in one".into()))
    }

    async fn unwatch(&mut self, id: String) -> bool {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s: &dyn SessionAccess| s.unwatch(&plugin, &id))
            .unwrap_or(false)
    }
}
