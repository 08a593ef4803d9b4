//! The `grep` tool, as pi's: lines matching a regular expression (or a literal string) in the
//! files under a path, `.gitignore` respected, as `path:line: text` with optional context lines
//! `path-line- text`, at most `limit` (100) matches, lines cut at 500 characters, 50 KB in all.
//! The host walks and searches (`pith_sdk::search`, ripgrep's searcher); this component parses
//! the arguments and formats the answer.

use pith_sdk::host::resolve_model_path;
use pith_sdk::search::{self, GrepOptions, SearchError};
use pith_sdk::text::{DEFAULT_MAX_BYTES, format_size, truncate_head};
use pith_sdk::tool::*;

/// The longest line shown.
const MAX_LINE: usize = 500;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    ignore_case: Option<bool>,
    literal: Option<bool>,
    context: Option<f64>,
    limit: Option<f64>,
}

struct Grep;

fn shorten(line: &str, cut: &mut bool) -> String {
    if line.chars().count() <= MAX_LINE {
        return line.to_string();
    }
    *cut = true;
    format!(
        "{}... [truncated]",
        line.chars().take(MAX_LINE).collect::<String>()
    )
}

impl Tool for Grep {
    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str = "Search file contents for a pattern. Returns matching lines with file paths and line numbers. Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). Long lines are truncated to 500 chars.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Search file contents for patterns (respects .gitignore)".into())
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let fail = |message: String| ToolError::new(message).with_details(json!({}));
        let root = resolve_model_path(args.path.as_deref().unwrap_or("."));
        let limit = args.limit.map_or(100, |l| l.max(1.0) as usize);
        let context = args.context.map_or(0, |c| c.max(0.0) as usize);
        let files = search::grep(&GrepOptions {
            root: root.to_string_lossy().into_owned(),
            pattern: args.pattern.clone(),
            literal: args.literal == Some(true),
            ignore_case: args.ignore_case == Some(true),
            glob: args.glob.clone(),
            context: u32::try_from(context).unwrap_or(u32::MAX),
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
        })
        .map_err(|err| {
            let reason = match &err {
                SearchError::NotFound(_) => pith_sdk::sandbox::explain_read(&root),
                _ => None,
            };
            fail(reason.unwrap_or_else(|| search::message(&err)))
        })?;
        let mut out: Vec<String> = Vec::new();
        let mut matches = 0;
        let mut cut = false;
        for file in &files {
            for line in &file.lines {
                let (sep, text) = (
                    if line.is_match { ':' } else { '-' },
                    shorten(&line.text, &mut cut),
                );
                out.push(format!("{}{sep}{}{sep} {text}", file.relative, line.number));
                matches += usize::from(line.is_match);
            }
        }
        if matches == 0 {
            return Ok(ToolResult::text("No matches found"));
        }
        let truncation = truncate_head(&out.join("\n"), usize::MAX, DEFAULT_MAX_BYTES);
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = serde_json::Map::new();
        if matches >= limit {
            notices.push(format!(
                "{limit} matches limit reached. Use limit={} for more, or refine pattern",
                limit * 2
            ));
            details.insert("matchLimitReached".into(), json!(limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), json!(truncation));
        }
        if cut {
            notices.push(format!(
                "Some lines truncated to {MAX_LINE} chars. Use read tool to see full lines"
            ));
            details.insert("linesTruncated".into(), json!(true));
        }
        if notices.is_empty() {
            return Ok(ToolResult::text(text));
        }
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        Ok(ToolResult::text(text).with_details(Value::Object(details)))
    }
}

pith_sdk::export_tools!(Grep);
