//! Content blocks and tool outputs in pi's JSON shapes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A block of user or tool-result content: `{"type":"text","text"}` or
/// `{"type":"image","data","mimeType"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Base64 data.
        data: String,
        /// Its MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text { text: text.into() }
    }
}

/// What a tool call produced: content for the model, details for hosts, and whether it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<Content>,
    /// pi's `details`.
    pub details: Option<Value>,
    /// True for an error result.
    pub is_error: bool,
    /// pi's `structuredContent` as the tool reported it (an MCP tool's whole result); events
    /// carry it, the tool result message does not.
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// An error result with one text block.
    pub fn error(message: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: vec![Content::text(message)],
            details: None,
            is_error: true,
            structured: None,
        }
    }

    /// The text blocks joined (for logs, tests and `get_last_assistant_text`-like uses).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
