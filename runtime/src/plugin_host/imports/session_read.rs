//! `session-read` (0.2): what an extension may read of its session.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::{entries, session_read};
use crate::plugin_host::sandbox::StoreState;

impl session_read::Host for StoreState {
    async fn session_id(&mut self) -> String {
        self.with_session(|s| s.session_id()).unwrap_or_default()
    }

    async fn session_file(&mut self) -> Option<String> {
        self.with_session(|s| s.session_file()).flatten()
    }

    async fn cwd(&mut self) -> String {
        self.with_session(|s| s.cwd()).unwrap_or_default()
    }

    async fn leaf_id(&mut self) -> Option<String> {
        self.with_session(|s| s.leaf_id()).flatten()
    }

    async fn label(&mut self, entry_id: String) -> Option<String> {
        self.with_session(|s| s.label(&entry_id)).flatten()
    }

    async fn all_entries(&mut self) -> Vec<entries::SessionEntry> {
        self.with_session(|s| s.all_entries()).unwrap_or_default()
    }

    async fn branch(&mut self) -> Vec<entries::SessionEntry> {
        self.with_session(|s| s.branch()).unwrap_or_default()
    }

    async fn entry(&mut self, id: String) -> Option<entries::SessionEntry> {
        self.with_session(|s| s.entry(&id)).flatten()
    }

    async fn system_prompt(&mut self) -> String {
        self.with_session(|s| s.system_prompt()).unwrap_or_default()
    }

    async fn has_pending_messages(&mut self) -> bool {
        self.with_session(|s| s.has_pending_messages())
            .unwrap_or(false)
    }

    async fn is_project_trusted(&mut self) -> bool {
        self.with_session(|s| s.is_project_trusted())
            .unwrap_or(false)
    }

    async fn tool_call_parent(&mut self, tool_call_id: String) -> Option<String> {
        self.with_session(|s| s.tool_call_parent(&tool_call_id))
            .flatten()
    }

    async fn mode(&mut self) -> session_read::RunMode {
        self.with_session(|s| s.mode())
            .unwrap_or(session_read::RunMode::Rpc)
    }

    async fn has_ui(&mut self) -> bool {
        self.with_session(|s| s.has_ui()).unwrap_or(false)
    }

    async fn commands(&mut self) -> Vec<session_read::CommandInfo> {
        self.with_session(|s| s.commands()).unwrap_or_default()
    }

    async fn settings(&mut self) -> String {
        self.with_session(|s| s.settings())
            .unwrap_or_else(|| "{}".into())
    }

    async fn context_usage(&mut self) -> Option<session_read::UsageOfContext> {
        let fill = self.with_session(|s| s.context_fill()).flatten()?;
        Some(session_read::UsageOfContext {
            tokens: fill.tokens,
            context_window: fill.context_window,
            percent: fill.percent,
        })
    }
}
