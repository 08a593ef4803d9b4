//! What the session works with besides its conversation: its sandbox (its own, for a session
//! in another folder, else the host's) and its MCP servers, started again when their
//! configuration changes, with pi's report of what needs attention.

use std::sync::Arc;

use super::answers::McpReload;
use super::{Session, Shared};

impl Shared {
    /// The MCP configuration files (watched for changes).
    pub(super) fn mcp_files(&self) -> Vec<std::path::PathBuf> {
        let setup = self
            .mcp_setup
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if setup.off { Vec::new() } else { setup.files() }
    }

    /// The sandbox the session's tools and shell run under (its own, else the host's).
    pub fn sandbox(&self) -> Arc<crate::sandbox::SandboxPolicy> {
        self.sandbox.clone().unwrap_or_else(|| self.host.sandbox())
    }

    /// The session's own sandbox for a plugin call (`None`: the host's).
    pub fn call_sandbox(&self) -> Option<Arc<crate::sandbox::SandboxPolicy>> {
        self.sandbox.clone()
    }

    /// The session's MCP servers now.
    pub fn mcp(&self) -> Arc<crate::mcp::McpHub> {
        self.mcp
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Reads the MCP configuration again; when it changed, the servers start anew (the old
    /// ones are shut down). `{"changed", "servers", "errors"}`.
    pub fn reload_mcp(self: &Arc<Self>) -> McpReload {
        let fresh = self
            .mcp_setup
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .reread();
        let Some(fresh) = fresh else {
            let hub = self.mcp();
            return McpReload {
                changed: false,
                servers: hub.servers().len(),
                errors: None,
            };
        };
        let hub = fresh.start(&self.cwd, self.sandbox());
        let errors = fresh.config.errors.clone();
        *self
            .mcp_setup
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = fresh;
        let old = std::mem::replace(
            &mut *self.mcp.write().unwrap_or_else(|p| p.into_inner()),
            hub.clone(),
        );
        tokio::spawn(async move { old.shut_down().await });
        Session::from_shared(self.clone()).report_mcp();
        McpReload {
            changed: true,
            servers: hub.servers().len(),
            errors: Some(errors),
        }
    }
}

impl Session {
    /// Once the MCP servers' first attempts have ended: pi's report of what needs attention.
    pub(super) fn report_mcp(&self) {
        if self.shared.mcp().is_empty() {
            return;
        }
        let weak = Arc::downgrade(&self.shared);
        let hub = self.shared.mcp();
        tokio::spawn(async move {
            hub.wait_settled().await;
            let Some(shared) = weak.upgrade() else { return };
            if let Some(report) = hub.attention_report() {
                shared.notify(&report, "warning");
            }
        });
    }
}
