//! Constructors for the shared WIT types.

use crate::bindings::imports::pith::plugin0_1_0::types::{
    Content, Image, ToolError, ToolResult, ToolSpec,
};

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// An image block from base64 data.
    pub fn image(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image(Image {
            data: base64.into(),
            mime_type: mime_type.into(),
        })
    }
}

impl ToolResult {
    /// A result with one text block and no details.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            details: None,
        }
    }

    /// Sets the details hosts see.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details.to_string());
        self
    }
}

impl ToolError {
    /// An error whose message the model sees.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            details: None,
        }
    }

    /// Sets the details hosts see.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details.to_string());
        self
    }
}

impl From<std::io::Error> for ToolError {
    /// The error's text without its WASI error number (`No such file or directory`, not
    /// `… (os error 44)`); [`crate::host::file_error`] also names the path and the cause.
    fn from(err: std::io::Error) -> Self {
        ToolError::new(crate::host::without_errno(&err))
    }
}

impl ToolSpec {
    /// A tool named `name` with `description` and the JSON schema `parameters`.
    pub fn new(name: &str, description: &str, parameters: serde_json::Value) -> Self {
        ToolSpec {
            name: name.to_string(),
            label: name.to_string(),
            description: description.to_string(),
            parameters: parameters.to_string(),
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
        }
    }
}
