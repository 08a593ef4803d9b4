//! What an extension's `ui` and `session` imports reach: the session it belongs to.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::agent::event::SessionEvent;
use crate::agent::message::{AgentMessage, CustomMessage, now_ms};
use crate::agent::session::{Session, Shared};
use crate::content::Content;
pub use crate::plugin_host::bindings::extension_world::pith::plugin::session::Delivery;
use crate::plugin_host::bindings::imports::pith::plugin::types as wit;
use crate::plugin_host::convert::details_value;
use crate::plugin_host::imports::ui::{BoxFuture, ExtensionContext, UiAnswer, UiRequest};

/// The session as its extensions see it; holds the session weakly (the session owns its
/// extensions).
pub struct SessionContext {
    shared: Weak<Shared>,
}

impl SessionContext {
    /// The context of the session `shared`.
    pub fn new(shared: &Arc<Shared>) -> SessionContext {
        SessionContext {
            shared: Arc::downgrade(shared),
        }
    }

    fn session(&self) -> Option<Session> {
        self.shared.upgrade().map(Session::from_shared)
    }
}

/// An extension's custom message as pi's `custom` message.
pub fn custom_message(message: wit::CustomMessage) -> AgentMessage {
    let content: Vec<Content> = message.content.into_iter().map(Content::from).collect();
    AgentMessage::Custom(CustomMessage {
        custom_type: message.custom_type,
        content: serde_json::to_value(content).unwrap_or(Value::Array(Vec::new())),
        display: message.display,
        details: details_value(message.details),
        timestamp: now_ms(),
    })
}

impl ExtensionContext for SessionContext {
    fn sandbox(&self) -> Option<Arc<crate::sandbox::SandboxPolicy>> {
        self.shared
            .upgrade()
            .and_then(|shared| shared.call_sandbox())
    }

    fn ui(&self, request: UiRequest) -> BoxFuture<UiAnswer> {
        let shared = self.shared.upgrade();
        Box::pin(async move {
            match shared {
                Some(shared) => shared.ui.request(request).await,
                None => UiAnswer::Cancelled,
            }
        })
    }

    fn send_message(
        &self,
        message: wit::CustomMessage,
        deliver_as: Option<Delivery>,
        trigger_turn: bool,
    ) {
        if let Some(session) = self.session() {
            session.send_extension_message(custom_message(message), deliver_as, trigger_turn);
        }
    }

    fn send_user_message(&self, content: Vec<wit::Content>, deliver_as: Option<Delivery>) {
        if let Some(session) = self.session() {
            let content: Vec<Content> = content.into_iter().map(Content::from).collect();
            let text = content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let images = content
                .into_iter()
                .filter(|c| matches!(c, Content::Image { .. }))
                .collect();
            session.send_extension_message(
                AgentMessage::user(&text, images),
                deliver_as.or(Some(Delivery::Steer)),
                true,
            );
        }
    }

    fn append_entry(&self, custom_type: String, data: Option<String>) {
        if let Some(shared) = self.shared.upgrade() {
            let mut fields = serde_json::Map::new();
            fields.insert("customType".into(), json!(custom_type));
            if let Some(data) = details_value(data) {
                fields.insert("data".into(), data);
            }
            let entry = shared.state().append_entry("custom", fields);
            shared.emit(&SessionEvent::EntryAppended { entry });
        }
    }

    fn set_session_name(&self, name: String) {
        if let Some(session) = self.session() {
            let _ = session.set_session_name(&name);
        }
    }

    fn session_name(&self) -> Option<String> {
        self.shared
            .upgrade()
            .and_then(|shared| shared.state().session_name().map(str::to_string))
    }

    fn state(&self) -> String {
        self.session()
            .map_or_else(|| "{}".into(), |s| s.state_json().to_string())
    }

    fn messages(&self) -> String {
        self.session().map_or_else(
            || "[]".into(),
            |s| s.messages_json()["messages"].to_string(),
        )
    }

    fn abort(&self) {
        if let Some(shared) = self.shared.upgrade() {
            let cancel = shared.state().run_cancel();
            if let Some(cancel) = cancel {
                cancel.cancel();
            }
        }
    }

    fn is_idle(&self) -> bool {
        self.shared
            .upgrade()
            .is_none_or(|shared| !shared.state().is_streaming())
    }
}
