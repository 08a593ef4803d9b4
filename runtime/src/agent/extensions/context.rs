//! An extension's messages as the session's: what its `session` import sends becomes pi's
//! `custom` message. (What the imports reach, the session itself, is the session's
//! `SessionContext`.)

use serde_json::Value;

use crate::agent::conversation::message::{AgentMessage, CustomMessage, now_ms};
use crate::content::Content;
pub use crate::plugin_host::bindings::extension_world::pith::plugin0_1_0::session::Delivery;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::convert::details_value;

/// An extension's custom message as pi's `custom` message.
pub fn custom_message(message: wit::CustomMessage) -> AgentMessage {
    let content: Vec<Content> = message.content.into_iter().map(Content::from).collect();
    // One text is a string, as pi's examples send it (`content: "…"`); anything else, blocks.
    let content = match content.as_slice() {
        [Content::Text { text, .. }] => Value::String(text.clone()),
        _ => serde_json::to_value(content).unwrap_or(Value::Array(Vec::new())),
    };
    AgentMessage::Custom(CustomMessage {
        custom_type: message.custom_type,
        content,
        display: message.display,
        details: details_value(message.details),
        timestamp: now_ms(),
    })
}
