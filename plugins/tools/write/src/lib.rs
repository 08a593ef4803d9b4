//! The `write` tool, as pi's: creates parent directories and writes the file.

use pith_sdk::host::resolve_model_path;
use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    path: String,
    content: String,
}

struct Write;

impl Tool for Write {
    const NAME: &'static str = "write";
    const DESCRIPTION: &'static str = "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
                "content": {"type": "string", "description": "Content to write to the file"}
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Create or overwrite files".into())
    }

    fn prompt_guidelines() -> Vec<String> {
        vec!["Use write only for new files or complete rewrites.".into()]
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let path = resolve_model_path(&args.path);
        let fail = |err: std::io::Error| {
            let message =
                pith_sdk::sandbox::explain_write_error(&path, &err).unwrap_or_else(|| {
                    pith_sdk::host::node_error(&err, "open", &path.display().to_string())
                });
            ToolError::new(message).with_details(json!({}))
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&path, &args.content).map_err(fail)?;
        // pi 1.5.2's words.
        Ok(ToolResult::text(format!(
            "Successfully wrote to {}",
            args.path
        )))
    }
}

pith_sdk::export_tools!(Write);
