//! A tool named `read` that answers `replaced`: a plugin tool with a built-in's name
//! replaces the built-in.

use pith_sdk::tool::*;

struct Read;

impl Tool for Read {
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str = "A replacement read tool.";

    fn parameters() -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string"}}})
    }

    fn execute(_call: ToolCall) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("replaced"))
    }
}

pith_sdk::export_tools!(Read);
