//! What an extension's session offers the imports, implemented by the session runtime: the UI
//! ([`ExtensionContext`]) and the reads and moves of version 0.2 ([`SessionAccess`]). A call's
//! store carries one ([`super::sandbox::StoreState::extension`]); the imports in
//! [`super::imports`] answer through it.

use std::future::Future;
use std::pin::Pin;

use super::bindings::extension_world::pith::plugin0_1_0::session;
use super::bindings::extension_world_v2::pith::plugin0_2_0::{completion, entries, session_read};
use super::bindings::imports::pith::plugin0_1_0::types::{Content, CustomMessage};
use super::meta::FlagValue;
use super::tool::ToolSpec;
use crate::model::{Model, ThinkingLevel};

/// The refusal of a change made outside a session.
pub const NO_SESSION: &str = "no session: the extension is not running in one";

/// A boxed future, as the context's methods return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A UI request from an extension, in the protocol's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum UiRequest {
    /// Pick one of the options.
    Select {
        /// The dialog's title.
        title: String,
        /// The choices.
        options: Vec<String>,
        /// How long to wait for the answer (none or 0: no limit).
        timeout_ms: Option<u32>,
    },
    /// Yes or no.
    Confirm {
        /// The dialog's title.
        title: String,
        /// The text shown.
        message: String,
        /// How long to wait for the answer (none or 0: no limit).
        timeout_ms: Option<u32>,
    },
    /// A line of text.
    Input {
        /// The dialog's title.
        title: String,
        /// A hint shown in the empty field.
        placeholder: Option<String>,
        /// How long to wait for the answer (none or 0: no limit).
        timeout_ms: Option<u32>,
    },
    /// A longer text.
    Editor {
        /// The dialog's title.
        title: String,
        /// The text the editor starts with.
        prefill: Option<String>,
    },
    /// A notification.
    Notify {
        /// The text shown.
        message: String,
        /// info, warning or error.
        kind: Option<&'static str>,
    },
    /// A status line.
    SetStatus {
        /// Which status line or widget.
        key: String,
        /// The text (none clears it).
        text: Option<String>,
    },
    /// A widget.
    SetWidget {
        /// Which status line or widget.
        key: String,
        /// The widget's lines (none removes it).
        lines: Option<Vec<String>>,
        /// Where the widget goes (aboveEditor, belowEditor).
        placement: Option<&'static str>,
    },
    /// The window title.
    SetTitle {
        /// The dialog's title.
        title: String,
    },
    /// The editor's text.
    SetEditorText {
        /// The text (none clears it).
        text: String,
    },
}

impl UiRequest {
    /// How long a dialog waits for its answer (`None` or 0: no limit; only select, confirm and
    /// input have one).
    pub fn timeout_ms(&self) -> Option<u32> {
        match self {
            UiRequest::Select { timeout_ms, .. }
            | UiRequest::Confirm { timeout_ms, .. }
            | UiRequest::Input { timeout_ms, .. } => *timeout_ms,
            _ => None,
        }
    }
}

/// The answer to a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum UiAnswer {
    /// A chosen or typed value.
    Value(String),
    /// A yes/no answer.
    Confirmed(bool),
    /// Cancelled, timed out, or not a dialog.
    Cancelled,
}

/// What an extension's session offers its imports; implemented by the session runtime.
pub trait ExtensionContext: Send + Sync {
    /// The session's sandbox when it is not the host's (a session in another directory).
    fn sandbox(&self) -> Option<std::sync::Arc<crate::sandbox::SandboxPolicy>> {
        None
    }
    /// Shows a UI request; dialogs resolve with the host's answer or the default on timeout.
    fn ui(&self, request: UiRequest) -> BoxFuture<UiAnswer>;
    /// Adds a custom message to the conversation.
    fn send_message(
        &self,
        message: CustomMessage,
        deliver_as: Option<session::Delivery>,
        trigger_turn: bool,
    );
    /// Sends a user message.
    fn send_user_message(&self, content: Vec<Content>, deliver_as: Option<session::Delivery>);
    /// Appends a custom entry to the session file.
    fn append_entry(&self, custom_type: String, data: Option<String>);
    /// Sets the session name.
    fn set_session_name(&self, name: String);
    /// The session name.
    fn session_name(&self) -> Option<String>;
    /// `get_state`'s data, as JSON text.
    fn state(&self) -> String;
    /// The context's messages, as JSON text.
    fn messages(&self) -> String;
    /// Aborts the run.
    fn abort(&self);
    /// True when no run is going on.
    fn is_idle(&self) -> bool;
    /// What the extension may read and change of the session (version 0.2's imports); `None`
    /// outside a session.
    fn access(&self) -> Option<&dyn SessionAccess> {
        None
    }
}

/// The context of an extension that runs outside any session (asked about a project's trust
/// at start-up, or timed in a bench): notices go to stderr, dialogs get no answer, and what
/// would change a session does nothing.
pub struct Sessionless;

impl ExtensionContext for Sessionless {
    fn ui(&self, request: UiRequest) -> BoxFuture<UiAnswer> {
        if let UiRequest::Notify { message, .. } = &request {
            eprintln!("{message}");
        }
        Box::pin(async { UiAnswer::Cancelled })
    }

    fn send_message(&self, _: CustomMessage, _: Option<session::Delivery>, _: bool) {}

    fn send_user_message(&self, _: Vec<Content>, _: Option<session::Delivery>) {}

    fn append_entry(&self, _: String, _: Option<String>) {}

    fn set_session_name(&self, _: String) {}

    fn session_name(&self) -> Option<String> {
        None
    }

    fn state(&self) -> String {
        "{}".into()
    }

    fn messages(&self) -> String {
        "[]".into()
    }

    fn abort(&self) {}

    fn is_idle(&self) -> bool {
        true
    }
}

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
    /// The call that made the tool call `id`, when another tool made it.
    fn tool_call_parent(&self, id: &str) -> Option<String>;
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
    /// Registers (or replaces) a provider for this session's registry (pi's `registerProvider`).
    fn register_provider(
        &self,
        plugin: &str,
        registration: crate::agent::models::provider_config::ProviderRegistration,
    ) -> Result<(), String>;
    /// Removes a provider `plugin` registered (pi's `unregisterProvider`).
    fn unregister_provider(&self, plugin: &str, name: &str);
    /// Registers (or replaces) a virtual model the extension `plugin` routes (pi's
    /// `registerVirtualModel` after start-up); one another extension routes is refused.
    fn register_virtual_model(
        &self,
        plugin: &str,
        model: crate::model::Model,
    ) -> Result<(), String>;
    /// Removes a virtual model `plugin` registered (pi's `unregisterVirtualModel`).
    fn unregister_virtual_model(&self, plugin: &str, provider: &str, id: &str);
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
