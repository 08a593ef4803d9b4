//! `pith:plugin/session` (version 0.1): an extension's messages, entries and session name,
//! through the store's [`ExtensionContext`](crate::plugin_host::session_context::ExtensionContext).

use crate::plugin_host::bindings::extension_world::pith::plugin0_1_0::session;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::{Content, CustomMessage};
use crate::plugin_host::sandbox::StoreState;

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
