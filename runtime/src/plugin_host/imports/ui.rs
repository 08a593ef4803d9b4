//! `pith:plugin/ui` and `pith:plugin/session` for extensions.
//!
//! A call's store may carry an [`ExtensionContext`] (the session the extension belongs to);
//! without one (a plugin called outside a session, e.g. by `pith plugins`), dialogs resolve to
//! their defaults at once (select/input/editor: none, confirm: false), fire-and-forget calls do
//! nothing, and the session reads as empty and idle.

use std::future::Future;
use std::pin::Pin;

use crate::plugin_host::bindings::extension_world::pith::plugin0_1_0::session;
use crate::plugin_host::bindings::extension_world::pith::plugin0_1_0::ui::{
    self, NotifyKind, WidgetPlacement,
};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::{Content, CustomMessage};
use crate::plugin_host::sandbox::StoreState;

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
    fn access(&self) -> Option<&dyn super::session_access::SessionAccess> {
        None
    }
}

impl StoreState {
    async fn ask(&mut self, request: UiRequest) -> UiAnswer {
        let Some(context) = self.extension.clone() else {
            return UiAnswer::Cancelled;
        };
        let _host_time = self.clock.enter_host();
        context.ui(request).await
    }
}

fn placement(p: WidgetPlacement) -> &'static str {
    match p {
        WidgetPlacement::AboveEditor => "aboveEditor",
        WidgetPlacement::BelowEditor => "belowEditor",
    }
}

fn notify_kind(k: NotifyKind) -> &'static str {
    match k {
        NotifyKind::Info => "info",
        NotifyKind::Warning => "warning",
        NotifyKind::Error => "error",
    }
}

impl ui::Host for StoreState {
    async fn select(
        &mut self,
        title: String,
        options: Vec<String>,
        timeout_ms: Option<u32>,
    ) -> Option<String> {
        match self
            .ask(UiRequest::Select {
                title,
                options,
                timeout_ms,
            })
            .await
        {
            UiAnswer::Value(value) => Some(value),
            _ => None,
        }
    }

    async fn confirm(&mut self, title: String, message: String, timeout_ms: Option<u32>) -> bool {
        matches!(
            self.ask(UiRequest::Confirm {
                title,
                message,
                timeout_ms
            })
            .await,
            UiAnswer::Confirmed(true)
        )
    }

    async fn input(
        &mut self,
        title: String,
        placeholder: Option<String>,
        timeout_ms: Option<u32>,
    ) -> Option<String> {
        match self
            .ask(UiRequest::Input {
                title,
                placeholder,
                timeout_ms,
            })
            .await
        {
            UiAnswer::Value(value) => Some(value),
            _ => None,
        }
    }

    async fn editor(&mut self, title: String, prefill: Option<String>) -> Option<String> {
        match self.ask(UiRequest::Editor { title, prefill }).await {
            UiAnswer::Value(value) => Some(value),
            _ => None,
        }
    }

    async fn notify(&mut self, message: String, kind: Option<NotifyKind>) {
        self.ask(UiRequest::Notify {
            message,
            kind: kind.map(notify_kind),
        })
        .await;
    }

    async fn set_status(&mut self, key: String, text: Option<String>) {
        self.ask(UiRequest::SetStatus { key, text }).await;
    }

    async fn set_widget(
        &mut self,
        key: String,
        lines: Option<Vec<String>>,
        placement_: Option<WidgetPlacement>,
    ) {
        self.ask(UiRequest::SetWidget {
            key,
            lines,
            placement: placement_.map(placement),
        })
        .await;
    }

    async fn set_title(&mut self, title: String) {
        self.ask(UiRequest::SetTitle { title }).await;
    }

    async fn set_editor_text(&mut self, text: String) {
        self.ask(UiRequest::SetEditorText { text }).await;
    }
}

impl session::Host for StoreState {
    async fn send_message(
        &mut self,
        message: CustomMessage,
        deliver_as: Option<session::Delivery>,
        trigger_turn: bool,
    ) {
        if let Some(context) = &self.extension {
            context.send_message(message, deliver_as, trigger_turn);
        }
    }

    async fn send_user_message(
        &mut self,
        content: Vec<Content>,
        deliver_as: Option<session::Delivery>,
    ) {
        if let Some(context) = &self.extension {
            context.send_user_message(content, deliver_as);
        }
    }

    async fn append_entry(&mut self, custom_type: String, data: Option<String>) {
        if let Some(context) = &self.extension {
            context.append_entry(custom_type, data);
        }
    }

    async fn set_session_name(&mut self, name: String) {
        if let Some(context) = &self.extension {
            context.set_session_name(name);
        }
    }

    async fn session_name(&mut self) -> Option<String> {
        self.extension.as_ref().and_then(|c| c.session_name())
    }

    async fn state(&mut self) -> String {
        self.extension
            .as_ref()
            .map_or_else(|| "{}".to_string(), |c| c.state())
    }

    async fn messages(&mut self) -> String {
        self.extension
            .as_ref()
            .map_or_else(|| "[]".to_string(), |c| c.messages())
    }

    async fn abort(&mut self) {
        if let Some(context) = &self.extension {
            context.abort();
        }
    }

    async fn is_idle(&mut self) -> bool {
        self.extension.as_ref().is_none_or(|c| c.is_idle())
    }
}
