//! An example third-party tool, written with `pith-sdk`: counts the lines, words and bytes of a
//! file in the workspace.

use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    path: String,
}

struct WordCount;

impl Tool for WordCount {
    const NAME: &'static str = "word_count";
    const DESCRIPTION: &'static str =
        "Count the lines, words and bytes of a file in the workspace.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Path of the file (relative or absolute)"}},
            "required": ["path"]
        })
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let text = std::fs::read_to_string(resolve_path(&args.path))
            .map_err(|err| ToolError::new(pith_sdk::host::file_error(&args.path, &err)))?;
        let (lines, words, bytes) = (
            text.lines().count(),
            text.split_whitespace().count(),
            text.len(),
        );
        Ok(
            ToolResult::text(format!("{lines} lines, {words} words, {bytes} bytes"))
                .with_details(json!({"lines": lines, "words": words, "bytes": bytes})),
        )
    }
}

pith_sdk::export_tools!(WordCount);
