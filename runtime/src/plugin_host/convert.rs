//! Conversions between the WIT types and pith's own (pi-shaped) types.

use serde_json::Value;

use super::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::content::{Content, ToolOutput};
use crate::model::ThinkingLevel;

impl From<ThinkingLevel> for wit::ThinkingLevel {
    /// A level as plugins get it (`max` is their `xhigh`).
    fn from(level: ThinkingLevel) -> wit::ThinkingLevel {
        match level {
            ThinkingLevel::Off => wit::ThinkingLevel::Off,
            ThinkingLevel::Minimal => wit::ThinkingLevel::Minimal,
            ThinkingLevel::Low => wit::ThinkingLevel::Low,
            ThinkingLevel::Medium => wit::ThinkingLevel::Medium,
            ThinkingLevel::High => wit::ThinkingLevel::High,
            ThinkingLevel::Xhigh | ThinkingLevel::Max => wit::ThinkingLevel::Xhigh,
        }
    }
}

impl From<wit::ThinkingLevel> for ThinkingLevel {
    fn from(level: wit::ThinkingLevel) -> ThinkingLevel {
        match level {
            wit::ThinkingLevel::Off => ThinkingLevel::Off,
            wit::ThinkingLevel::Minimal => ThinkingLevel::Minimal,
            wit::ThinkingLevel::Low => ThinkingLevel::Low,
            wit::ThinkingLevel::Medium => ThinkingLevel::Medium,
            wit::ThinkingLevel::High => ThinkingLevel::High,
            wit::ThinkingLevel::Xhigh => ThinkingLevel::Xhigh,
        }
    }
}

impl From<wit::Content> for Content {
    fn from(content: wit::Content) -> Content {
        match content {
            wit::Content::Text(text) => Content::Text { text },
            wit::Content::Image(image) => Content::Image {
                data: image.data,
                mime_type: image.mime_type,
            },
        }
    }
}

impl From<Content> for wit::Content {
    fn from(content: Content) -> wit::Content {
        match content {
            Content::Text { text } => wit::Content::Text(text),
            Content::Image { data, mime_type } => {
                wit::Content::Image(wit::Image { data, mime_type })
            }
        }
    }
}

/// Parses a plugin's `details` JSON text; text that is not JSON is kept as a JSON string.
pub fn details_value(details: Option<String>) -> Option<Value> {
    details.map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

impl ToolOutput {
    /// A plugin's tool result.
    pub fn from_wit(result: wit::ToolResult, is_error: bool) -> ToolOutput {
        ToolOutput {
            structured: None,
            content: result.content.into_iter().map(Content::from).collect(),
            details: details_value(result.details),
            is_error,
        }
    }

    /// A plugin's tool error; pi gives error results `{}` details when none are set.
    pub fn from_wit_error(error: wit::ToolError) -> ToolOutput {
        ToolOutput {
            structured: None,
            content: vec![Content::text(error.message)],
            details: Some(
                details_value(error.details).unwrap_or_else(|| Value::Object(Default::default())),
            ),
            is_error: true,
        }
    }
}
