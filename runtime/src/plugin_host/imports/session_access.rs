//! The imports of version 0.2 through which an extension reads and steers its session:
//! `models`, `session-read` and `session-control`. Each reaches the session through
//! [`SessionAccess`], which the engine implements; without a session (a call outside one) the
//! answers are empty and the changes refused.

use crate::model::{Model, ThinkingLevel};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::{
    cli_flags, completion, entries, events_bus, models, session_control, session_read,
};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ThinkingLevel as WitLevel;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ToolSpec as WitToolSpec;
use crate::plugin_host::imports::ui::BoxFuture;
use crate::plugin_host::resources::FlagValue;
use crate::plugin_host::sandbox::StoreState;
use crate::plugin_host::tool::ToolSpec;

/// How full the context is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextFill {
    /// The context's tokens, when known.
    pub tokens: Option<u64>,
    /// The model's window.
    pub context_window: u64,
    /// `tokens` in percent of the window.
    pub percent: Option<f64>,
}

/// Why a model could not be selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRefusal {
    /// No such model.
    Unknown,
    /// Its provider has no key.
    NoKey,
}

/// A tool the session could offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSummary {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// True when it is offered to the model.
    pub active: bool,
}

/// A move of the session an extension asks for, run once its call has returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionMove {
    /// A compaction, with optional instructions.
    Compact(Option<String>),
    /// A new session.
    NewSession,
    /// A fork before this user message.
    Fork(String),
    /// The leaf moved to this entry.
    NavigateTree(String),
    /// A switch to this session file (relative to the folder pith started in).
    SwitchSession(String),
    /// A reload of the plugins, settings, models and resources.
    Reload,
    /// The end of the process, once idle (RPC only).
    Shutdown,
}

/// What an extension may read and change of its session (the engine's side of the imports).
pub trait SessionAccess: Send + Sync {
    /// The session's model.
    fn current_model(&self) -> Option<Model>;
    /// The session's thinking level.
    fn thinking_level(&self) -> ThinkingLevel;
    /// A model by provider and id.
    fn find_model(&self, provider: &str, id: &str) -> Option<Model>;
    /// The models whose provider has a key.
    fn available_models(&self) -> Vec<Model>;
    /// True when `provider` has a key.
    fn has_auth(&self, provider: &str) -> bool;
    /// The session's id.
    fn session_id(&self) -> String;
    /// Its file, when saved.
    fn session_file(&self) -> Option<String>;
    /// Its folder.
    fn cwd(&self) -> String;
    /// The leaf entry's id.
    fn leaf_id(&self) -> Option<String>;
    /// An entry's label.
    fn label(&self, entry_id: &str) -> Option<String>;
    /// How full the context is.
    fn context_fill(&self) -> Option<ContextFill>;
    /// Every entry of the session file, in file order.
    fn all_entries(&self) -> Vec<entries::SessionEntry>;
    /// The entries from the first to the leaf.
    fn branch(&self) -> Vec<entries::SessionEntry>;
    /// One entry by id.
    fn entry(&self, id: &str) -> Option<entries::SessionEntry>;
    /// The system prompt the next request would carry.
    fn system_prompt(&self) -> String;
    /// True when steering or follow-up messages wait.
    fn has_pending_messages(&self) -> bool;
    /// True when the session's project is trusted.
    fn is_project_trusted(&self) -> bool;
    /// How the process serves the session.
    fn mode(&self) -> session_read::RunMode;
    /// True when someone can answer dialogs.
    fn has_ui(&self) -> bool;
    /// The commands, as `get_commands` lists them.
    fn commands(&self) -> Vec<session_read::CommandInfo>;
    /// The settings in force, as JSON.
    fn settings(&self) -> String;
    /// The value of the extension `plugin`'s flag `name`.
    fn flag(&self, plugin: &str, name: &str) -> Option<FlagValue>;
    /// Calls the extension `plugin` back with `timer(id)` after `delay_ms` (every `delay_ms`
    /// when `repeat`).
    fn set_timer(&self, plugin: &str, id: &str, delay_ms: u64, repeat: bool);
    /// Cancels a timer of `plugin`'s; false when there was none.
    fn cancel_timer(&self, plugin: &str, id: &str) -> bool;
    /// Watches `path` for `plugin`; the error says why it cannot be.
    fn watch(&self, plugin: &str, id: &str, path: &str) -> Result<(), String>;
    /// Stops a watch of `plugin`'s; false when there was none.
    fn unwatch(&self, plugin: &str, id: &str) -> bool;
    /// Sets or clears an entry's label; the error is pi's text.
    fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), String>;
    /// Selects a model.
    fn set_model(&self, provider: &str, id: &str) -> Result<(), ModelRefusal>;
    /// Sets the thinking level (clamped).
    fn set_thinking_level(&self, level: ThinkingLevel);
    /// The active tools' names.
    fn active_tools(&self) -> Vec<String>;
    /// Every tool the session could offer.
    fn all_tools(&self) -> Vec<ToolSummary>;
    /// Makes exactly `names` active; the error lists the unknown names.
    fn set_active_tools(&self, names: Vec<String>) -> Result<(), Vec<String>>;
    /// Runs `requested` for the extension `plugin` once its call has returned.
    fn request(&self, plugin: &str, requested: SessionMove);
    /// Registers a tool of the extension `plugin`.
    fn register_tool(&self, plugin: &str, spec: ToolSpec);
    /// Removes a run-time tool of the extension `plugin`.
    fn unregister_tool(&self, plugin: &str, name: &str) -> bool;
    /// The extension `plugin` hears `channel` (or stops, with `hear` false).
    fn subscribe(&self, plugin: &str, channel: &str, hear: bool);
    /// Sends `data` on the bus's `channel`.
    fn emit(&self, channel: &str, data: String);
    /// Asks a model for the extension `plugin`, whose spending it is counted as.
    fn complete(
        &self,
        plugin: String,
        request: completion::CompletionRequest,
    ) -> BoxFuture<Result<completion::CompletionAnswer, completion::CompletionError>>;
}

/// A model as an extension sees it.
pub fn model_info(model: &Model) -> models::ModelInfo {
    models::ModelInfo {
        provider: model.provider.clone(),
        id: model.id.clone(),
        name: model.name.clone(),
        api: model.api.clone(),
        reasoning: model.reasoning,
        images: model.input.iter().any(|kind| kind == "image"),
        context_window: model.context_window,
        max_tokens: model.max_tokens,
    }
}

impl StoreState {
    /// The session behind the calling extension, if it runs in one (for the imports of other
    /// modules).
    pub(crate) fn with_session<R>(&self, read: impl FnOnce(&dyn SessionAccess) -> R) -> Option<R> {
        self.access(read)
    }

    /// The session behind the calling extension, if it runs in one.
    fn access<R>(&self, read: impl FnOnce(&dyn SessionAccess) -> R) -> Option<R> {
        let context = self.extension.clone()?;
        let _host_time = self.clock.enter_host();
        context.access().map(read)
    }
}

impl models::Host for StoreState {
    async fn current(&mut self) -> Option<models::ModelInfo> {
        self.access(|s| s.current_model())
            .flatten()
            .as_ref()
            .map(model_info)
    }

    async fn current_thinking_level(&mut self) -> WitLevel {
        self.access(|s| s.thinking_level())
            .unwrap_or(ThinkingLevel::Off)
            .into()
    }

    async fn find(&mut self, provider: String, id: String) -> Option<models::ModelInfo> {
        self.access(|s| s.find_model(&provider, &id))
            .flatten()
            .as_ref()
            .map(model_info)
    }

    async fn available(&mut self) -> Vec<models::ModelInfo> {
        self.access(|s| s.available_models())
            .unwrap_or_default()
            .iter()
            .map(model_info)
            .collect()
    }

    async fn has_configured_auth(&mut self, provider: String) -> bool {
        self.access(|s| s.has_auth(&provider)).unwrap_or(false)
    }
}

impl session_read::Host for StoreState {
    async fn session_id(&mut self) -> String {
        self.access(|s| s.session_id()).unwrap_or_default()
    }

    async fn session_file(&mut self) -> Option<String> {
        self.access(|s| s.session_file()).flatten()
    }

    async fn cwd(&mut self) -> String {
        self.access(|s| s.cwd()).unwrap_or_default()
    }

    async fn leaf_id(&mut self) -> Option<String> {
        self.access(|s| s.leaf_id()).flatten()
    }

    async fn label(&mut self, entry_id: String) -> Option<String> {
        self.access(|s| s.label(&entry_id)).flatten()
    }

    async fn all_entries(&mut self) -> Vec<entries::SessionEntry> {
        self.access(|s| s.all_entries()).unwrap_or_default()
    }

    async fn branch(&mut self) -> Vec<entries::SessionEntry> {
        self.access(|s| s.branch()).unwrap_or_default()
    }

    async fn entry(&mut self, id: String) -> Option<entries::SessionEntry> {
        self.access(|s| s.entry(&id)).flatten()
    }

    async fn system_prompt(&mut self) -> String {
        self.access(|s| s.system_prompt()).unwrap_or_default()
    }

    async fn has_pending_messages(&mut self) -> bool {
        self.access(|s| s.has_pending_messages()).unwrap_or(false)
    }

    async fn is_project_trusted(&mut self) -> bool {
        self.access(|s| s.is_project_trusted()).unwrap_or(false)
    }

    async fn mode(&mut self) -> session_read::RunMode {
        self.access(|s| s.mode())
            .unwrap_or(session_read::RunMode::Rpc)
    }

    async fn has_ui(&mut self) -> bool {
        self.access(|s| s.has_ui()).unwrap_or(false)
    }

    async fn commands(&mut self) -> Vec<session_read::CommandInfo> {
        self.access(|s| s.commands()).unwrap_or_default()
    }

    async fn settings(&mut self) -> String {
        self.access(|s| s.settings()).unwrap_or_else(|| "{}".into())
    }

    async fn context_usage(&mut self) -> Option<session_read::UsageOfContext> {
        let fill = self.access(|s| s.context_fill()).flatten()?;
        Some(session_read::UsageOfContext {
            tokens: fill.tokens,
            context_window: fill.context_window,
            percent: fill.percent,
        })
    }
}

/// The refusal of a change made outside a session.
const NO_SESSION: &str = "no session: the extension is not running in one";

impl session_control::Host for StoreState {
    async fn set_label(&mut self, entry_id: String, label: Option<String>) -> Result<(), String> {
        self.access(|s| s.set_label(&entry_id, label.as_deref()))
            .unwrap_or_else(|| Err(NO_SESSION.into()))
    }

    async fn set_model(
        &mut self,
        provider: String,
        id: String,
    ) -> Result<(), session_control::SetModelError> {
        match self.access(|s| s.set_model(&provider, &id)) {
            Some(Ok(())) => Ok(()),
            Some(Err(ModelRefusal::NoKey)) => Err(session_control::SetModelError::NoCredentials),
            Some(Err(ModelRefusal::Unknown)) | None => {
                Err(session_control::SetModelError::UnknownModel)
            }
        }
    }

    async fn set_thinking_level(&mut self, level: WitLevel) {
        self.access(|s| s.set_thinking_level(level.into()));
    }

    async fn active_tools(&mut self) -> Vec<String> {
        self.access(|s| s.active_tools()).unwrap_or_default()
    }

    async fn all_tools(&mut self) -> Vec<session_control::ToolInfo> {
        self.access(|s| s.all_tools())
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
        self.access(|s| s.set_active_tools(names))
            .unwrap_or_else(|| Err(Vec::new()))
    }

    async fn register_tool(&mut self, spec: WitToolSpec) -> Result<(), String> {
        let spec = ToolSpec::from_wit(spec)?;
        let plugin = self.spec.plugin_id.clone();
        self.access(|s| s.register_tool(&plugin, spec))
            .ok_or_else(|| NO_SESSION.to_string())
    }

    async fn unregister_tool(&mut self, name: String) -> bool {
        let plugin = self.spec.plugin_id.clone();
        self.access(|s| s.unregister_tool(&plugin, &name))
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

impl cli_flags::Host for StoreState {
    async fn value(&mut self, name: String) -> Option<cli_flags::FlagValue> {
        let plugin = self.spec.plugin_id.clone();
        match self.access(|s| s.flag(&plugin, &name)).flatten()? {
            FlagValue::Boolean(on) => Some(cli_flags::FlagValue::Boolean(on)),
            FlagValue::Text(text) => Some(cli_flags::FlagValue::Text(text)),
        }
    }
}

impl StoreState {
    fn request(&self, requested: SessionMove) {
        let plugin = self.spec.plugin_id.clone();
        self.access(|s| s.request(&plugin, requested));
    }
}

impl events_bus::Host for StoreState {
    async fn emit(&mut self, channel: String, data: String) {
        self.access(|s| s.emit(&channel, data));
    }

    async fn subscribe(&mut self, channel: String) {
        let plugin = self.spec.plugin_id.clone();
        self.access(|s| s.subscribe(&plugin, &channel, true));
    }

    async fn unsubscribe(&mut self, channel: String) {
        let plugin = self.spec.plugin_id.clone();
        self.access(|s| s.subscribe(&plugin, &channel, false));
    }
}

impl completion::Host for StoreState {
    async fn complete(
        &mut self,
        request: completion::CompletionRequest,
    ) -> Result<completion::CompletionAnswer, completion::CompletionError> {
        let plugin = self.spec.plugin_id.clone();
        if !self.spec.capabilities.models {
            return Err(completion::CompletionError::Denied(format!(
                "the extension {plugin} may not call models: declare `models = true` under \
                 [capabilities] in its pith.toml, and grant it in the settings \
                 ({{\"plugins\": {{\"{plugin}\": {{\"grant\": {{\"models\": true}}}}}}}})"
            )));
        }
        let Some(context) = self.extension.clone() else {
            return Err(completion::CompletionError::Denied(NO_SESSION.into()));
        };
        let Some(asked) = context.access().map(|s| s.complete(plugin, request)) else {
            return Err(completion::CompletionError::Denied(NO_SESSION.into()));
        };
        // The model's time is the host's, not the extension's deadline.
        let _host_time = self.clock.enter_host();
        asked.await
    }
}

impl entries::Host for StoreState {}
