//! `session-control` (0.2): the changes and moves an extension may ask of its session.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::session_control;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ThinkingLevel as WitLevel;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ToolSpec as WitToolSpec;
use crate::plugin_host::sandbox::StoreState;
use crate::plugin_host::session_context::{ModelRefusal, NO_SESSION, SessionMove};
use crate::plugin_host::tool::ToolSpec;

impl session_control::Host for StoreState {
    async fn set_label(&mut self, entry_id: String, label: Option<String>) -> Result<(), String> {
        self.with_session(|s| s.set_label(&entry_id, label.as_deref()))
            .unwrap_or_else(|| Err(NO_SESSION.into()))
    }

    async fn set_model(
        &mut self,
        provider: String,
        id: String,
    ) -> Result<(), session_control::SetModelError> {
        match self.with_session(|s| s.set_model(&provider, &id)) {
            Some(Ok(())) => Ok(()),
            Some(Err(ModelRefusal::NoKey)) => Err(session_control::SetModelError::NoCredentials),
            Some(Err(ModelRefusal::Unknown)) | None => {
                Err(session_control::SetModelError::UnknownModel)
            }
        }
    }

    async fn set_thinking_level(&mut self, level: WitLevel) {
        self.with_session(|s| s.set_thinking_level(level.into()));
    }

    async fn active_tools(&mut self) -> Vec<String> {
        self.with_session(|s| s.active_tools()).unwrap_or_default()
    }

    async fn all_tools(&mut self) -> Vec<session_control::ToolInfo> {
        self.with_session(|s| s.all_tools())
            .unwrap_or_default()
            .into_iter()
            .map(|tool| session_control::ToolInfo {
                name: tool.name,
                description: tool.description,
                active: tool.active,
            })
            .collect()
    }

    async fn set_active_tools(&mut self, names: Vec<String>) -> Result<(), Vec<String>> {
        self.with_session(|s| s.set_active_tools(names))
            .unwrap_or_else(|| Err(Vec::new()))
    }

    async fn register_tool(&mut self, spec: WitToolSpec) -> Result<(), String> {
        let spec = ToolSpec::from_wit(spec)?;
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.register_tool(&plugin, spec))
            .ok_or_else(|| NO_SESSION.to_string())
    }

    async fn unregister_tool(&mut self, name: String) -> bool {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.unregister_tool(&plugin, &name))
            .unwrap_or(false)
    }

    async fn compact(&mut self, custom_instructions: Option<String>) {
        self.request(SessionMove::Compact(custom_instructions));
    }

    async fn new_session(&mut self) {
        self.request(SessionMove::NewSession);
    }

    async fn fork(&mut self, entry_id: String) {
        self.request(SessionMove::Fork(entry_id));
    }

    async fn navigate_tree(&mut self, entry_id: String) {
        self.request(SessionMove::NavigateTree(entry_id));
    }

    async fn switch_session(&mut self, path: String) {
        self.request(SessionMove::SwitchSession(path));
    }

    async fn reload(&mut self) {
        self.request(SessionMove::Reload);
    }

    async fn shutdown(&mut self) {
        self.request(SessionMove::Shutdown);
    }
}

impl StoreState {
    fn request(&self, requested: SessionMove) {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.request(&plugin, requested));
    }
}
