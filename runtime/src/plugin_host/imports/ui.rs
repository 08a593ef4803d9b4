//! `pith:plugin/ui` for extensions.
//!
//! A call's store may carry an [`ExtensionContext`] (the session the extension belongs to);
//! without one (a plugin called outside a session, e.g. by `pith plugins`), dialogs resolve to
//! their defaults at once (select/input/editor: none, confirm: false), fire-and-forget calls do
//! nothing, and the session reads as empty and idle.

use crate::plugin_host::bindings::extension_world::pith::plugin0_1_0::ui::{
    self, NotifyKind, WidgetPlacement,
};
use crate::plugin_host::sandbox::StoreState;
pub use crate::plugin_host::session_context::{BoxFuture, ExtensionContext, UiAnswer, UiRequest};

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
