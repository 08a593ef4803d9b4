//! Calling tool plugins.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bindings::imports::pith::plugin0_1_0::types as wit;
use super::convert::details_value;

/// A tool as the model and hosts see it (from the plugin's `describe()`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: String,
    /// A label for UIs.
    pub label: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON schema of the arguments.
    pub parameters: Value,
    /// A one-line summary for the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    /// Guideline lines for the system prompt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_guidelines: Vec<String>,
}

impl ToolSpec {
    /// Converts a plugin's spec; a schema that is not JSON is an error naming the tool.
    pub fn from_wit(spec: wit::ToolSpec) -> Result<ToolSpec, String> {
        let parameters = match details_value(Some(spec.parameters)) {
            Some(Value::String(_)) | None => {
                return Err(format!(
                    "tool {:?}: its parameters are not a JSON schema",
                    spec.name
                ));
            }
            Some(value) => value,
        };
        Ok(ToolSpec {
            name: spec.name,
            label: spec.label,
            description: spec.description,
            parameters,
            prompt_snippet: spec.prompt_snippet,
            prompt_guidelines: spec.prompt_guidelines,
        })
    }
}
