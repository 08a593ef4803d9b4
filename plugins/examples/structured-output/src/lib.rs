//! A port of pi's `examples/extensions/structured-output.ts`: the tool `structured_output`
//! (a headline, a summary and action items) whose result ends the run (pi's `terminate: true`):
//! when every call of the batch is one of it, the model is not asked again. Its result says
//! `Saved structured output: <headline>` and carries the three fields as `details`. The host
//! checks the arguments against the schema before the tool runs, as pi does.
//!
//! Differences from pi: pi's `renderResult` draws the details in its terminal (headline,
//! summary, numbered items, in theme colours); that is TUI-only and left out, as is the colour.

use pith_sdk::extension::*;
use serde_json::{Map, Value, json};

const NAME: &str = "structured_output";

/// The tool, as pi's `defineTool` declares it.
fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        label: "Structured Output".into(),
        description: "Return a final structured answer. Use this as your last action when the \
                      user asks for structured output or a machine-readable summary."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "headline": {"type": "string", "description": "Short title for the result"},
                "summary": {"type": "string", "description": "One-paragraph summary"},
                "actionItems": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Concrete next steps or key bullets"
                }
            },
            "required": ["headline", "summary", "actionItems"]
        })
        .to_string(),
        prompt_snippet: Some("Emit a final structured answer as a terminating tool result".into()),
        prompt_guidelines: vec![
            "Use structured_output as your final action when the user asks for structured \
             output, JSON-like output, or a machine-readable summary."
                .into(),
            "After calling structured_output, do not emit another assistant response in the \
             same turn."
                .into(),
        ],
    }
}

/// A value as a JavaScript template literal shows it (`${params.headline}`).
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".into(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(other) => other.to_string(),
    }
}

struct StructuredOutput;

impl Extension for StructuredOutput {
    fn new() -> Self {
        StructuredOutput
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("structured-output").tool(spec())
    }

    fn execute_tool_outcome(
        &mut self,
        name: &str,
        _call_id: &str,
        arguments: Value,
    ) -> Result<ToolOutcome, ToolError> {
        if name != NAME {
            return Err(ToolError::new(format!("Unknown tool: {name}")));
        }
        // `details` as pi's object literal gives them: these three keys in this order, a
        // missing one left out (as `JSON.stringify` leaves out `undefined`).
        let mut details = Map::new();
        for key in ["headline", "summary", "actionItems"] {
            if let Some(value) = arguments.get(key) {
                details.insert(key.into(), value.clone());
            }
        }
        let text = format!(
            "Saved structured output: {}",
            js_string(arguments.get("headline"))
        );
        Ok(ToolOutcome {
            tool_result: ToolResult::text(text).with_details(Value::Object(details)),
            terminate: true,
        })
    }
}

pith_sdk::export_extension!(StructuredOutput);
