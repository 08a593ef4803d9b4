//! The `find` tool, as pi's: files (and directories) whose name — or path, when the pattern
//! has a `/` — matches a glob, relative to the search directory, `.gitignore` respected,
//! dotfiles included, at most `limit` (1,000) results or 50 KB. The host walks the tree
//! (`pith_sdk::search`); this component parses the arguments and formats the answer.

use pith_sdk::host::resolve_model_path;
use pith_sdk::search::{self, SearchError, WalkOptions};
use pith_sdk::text::{DEFAULT_MAX_BYTES, format_size, truncate_head};
use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
    limit: Option<f64>,
}

struct Find;

impl Tool for Find {
    const NAME: &'static str = "find";
    const DESCRIPTION: &'static str = "Search for files by glob pattern. Returns matching file paths relative to the search directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is hit first).";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
                "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Find files by glob pattern (respects .gitignore)".into())
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let root = resolve_model_path(args.path.as_deref().unwrap_or("."));
        let limit = args.limit.map_or(1000, |l| l.max(1.0) as usize);
        let listed = search::walk(&WalkOptions {
            root: root.to_string_lossy().into_owned(),
            glob: Some(args.pattern.clone()),
            directories: true,
            limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
        })
        .map_err(|err| {
            let reason = match &err {
                SearchError::NotFound(_) => pith_sdk::sandbox::explain_read(&root),
                _ => None,
            };
            ToolError::new(reason.unwrap_or_else(|| search::message(&err))).with_details(json!({}))
        })?;
        let found: Vec<String> = listed
            .into_iter()
            .map(|entry| {
                if entry.is_dir {
                    format!("{}/", entry.relative)
                } else {
                    entry.relative
                }
            })
            .collect();
        if found.is_empty() {
            return Ok(ToolResult::text("No files found matching pattern"));
        }
        let truncation = truncate_head(&found.join("\n"), usize::MAX, DEFAULT_MAX_BYTES);
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = serde_json::Map::new();
        if found.len() >= limit {
            notices.push(format!(
                "{limit} results limit reached. Use limit={} for more, or refine pattern",
                limit * 2
            ));
            details.insert("resultLimitReached".into(), json!(limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), json!(truncation));
        }
        if notices.is_empty() {
            return Ok(ToolResult::text(text));
        }
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        Ok(ToolResult::text(text).with_details(Value::Object(details)))
    }
}

pith_sdk::export_tools!(Find);
