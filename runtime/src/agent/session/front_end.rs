//! What a front-end reaches besides the commands: the session's open dialogs, a weak handle
//! (for the tasks and watchers that must not keep a closed session alive), readiness, and
//! read-only views of the conversation. The session's shared parts stay inside the engine.

use crate::agent::conversation::messages::Messages as _;
use std::sync::{Arc, Weak};

use serde_json::{Map, Value};

use super::{Session, SessionError, Shared};
use crate::agent::conversation::message::{AgentMessage, AssistantMessage};
use crate::agent::extensions::ui::OpenDialog;
use crate::agent::model::{Model, ThinkingLevel};
use crate::plugin_host::imports::ui::UiAnswer;

/// A handle that does not keep its session alive.
#[derive(Clone, Default)]
pub struct WeakSession(Weak<Shared>);

impl WeakSession {
    /// The session, while it is open.
    pub fn upgrade(&self) -> Option<Session> {
        self.0.upgrade().map(Session::from_shared)
    }
}

impl Session {
    /// A handle that does not keep the session alive.
    pub fn downgrade(&self) -> WeakSession {
        WeakSession(Arc::downgrade(self.shared()))
    }

    /// Every extension dialog still open, oldest first.
    pub fn open_dialogs(&self) -> Vec<OpenDialog> {
        self.shared().ui.open_dialogs()
    }

    /// True while the dialog `id` waits for its answer.
    pub fn dialog_open(&self, id: &str) -> bool {
        self.shared().ui.is_open(id)
    }

    /// Answers the dialog `id`.
    pub fn answer_dialog(&self, id: &str, answer: UiAnswer) -> Result<(), SessionError> {
        self.shared()
            .ui
            .answer(id, answer)
            .map_err(SessionError::Dialog)
    }

    /// Answers a dialog from the host's `extension_ui_response` frame.
    pub fn answer_dialog_frame(&self, frame: &Map<String, Value>) -> Result<(), SessionError> {
        self.shared()
            .ui
            .on_response(frame)
            .map_err(SessionError::Dialog)
    }

    /// Cancels every open dialog (the host went away).
    pub fn cancel_dialogs(&self) {
        self.shared().ui.cancel_all();
    }

    /// Tells the host each dialog answer from now on (an attached client sees them).
    pub fn announce_dialog_answers(&self) {
        self.shared().ui.announce_answers();
    }

    /// Shows the host a notice, as pi's built-ins do (`kind`: `info`, `warning` or `error`).
    pub fn notify(&self, message: &str, kind: &'static str) {
        self.shared().notify(message, kind);
    }

    /// Waits until the extensions have handled the session's first `session_start`, as pi
    /// answers commands only once they have, or until one of them asks the host something
    /// (whose answer needs the commands read).
    pub async fn extensions_started(&self) {
        let shared = self.shared();
        tokio::select! {
            _ = shared.extensions.started() => {}
            _ = shared.ui.a_dialog_opened() => {}
        }
    }

    /// Waits until the plugins still compiling at start-up are in.
    pub async fn plugins_settled(&self) {
        self.shared().host.deferred_settled().await;
    }

    /// Waits until no compaction runs.
    pub async fn wait_compaction(&self) {
        self.shared().wait_compaction().await;
    }

    /// The model and the thinking level now, read together.
    pub fn model_and_thinking(&self) -> (Option<Model>, ThinkingLevel) {
        let state = self.shared().state();
        (state.model().cloned(), state.thinking())
    }

    /// The models that can be used (those with a key).
    pub fn usable_models(&self) -> Vec<Model> {
        self.shared().models().available()
    }

    /// The context window of a model of the registry.
    pub fn context_window(&self, provider: &str, id: &str) -> Option<u64> {
        self.shared()
            .models()
            .find(provider, id)
            .map(|model| model.context_window)
    }

    /// What the conversation's answers cost so far.
    pub fn total_cost(&self) -> f64 {
        let mut total = 0.0;
        self.shared().state().messages().each(&mut |message| {
            if let AgentMessage::Assistant(answer) = message {
                total += answer.usage.cost.total;
            }
        });
        total
    }

    /// Reads the whole conversation under the session's lock (the messages a long session
    /// keeps in its file are read for it).
    pub fn with_messages<R>(&self, read: impl FnOnce(&[AgentMessage]) -> R) -> R {
        read(&self.shared().state().messages().to_vec())
    }

    /// Writes the conversation's messages as JSON, comma-separated, into `out`: read from the
    /// session file a block at a time, so a long conversation is held once, as its text.
    pub fn write_messages(&self, out: &mut Vec<u8>) {
        let state = self.shared().state();
        let mut first = true;
        state.messages().each(&mut |message| {
            if !first {
                out.push(b',');
            }
            first = false;
            if serde_json::to_writer(&mut *out, message).is_err() {
                out.extend_from_slice(b"null");
            }
        });
    }

    /// The conversation's last message when it is an answer.
    pub fn last_answer(&self) -> Option<AssistantMessage> {
        match self.shared().state().messages().last().as_deref() {
            Some(AgentMessage::Assistant(answer)) => Some(answer.clone()),
            _ => None,
        }
    }

    /// Stops the session's MCP servers (the session is closing).
    pub async fn shut_down_mcp(&self) {
        self.shared().mcp().shut_down().await;
    }
}

impl Session {
    /// True when the session runs on `host` (its folder's plugin host).
    pub fn runs_on(&self, host: &std::sync::Weak<crate::plugin_host::PluginHost>) -> bool {
        std::sync::Weak::ptr_eq(&Arc::downgrade(&self.shared().host), host)
    }
}
