//! The `ls` tool, as pi's: entries sorted case-insensitively, `/` after directories, dotfiles
//! included, at most `limit` (500) entries or 50 KB.

use pith_sdk::host::resolve_model_path;
use pith_sdk::text::{DEFAULT_MAX_BYTES, format_size, truncate_head};
use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    path: Option<String>,
    limit: Option<f64>,
}

struct Ls;

impl Tool for Ls {
    const NAME: &'static str = "ls";
    const DESCRIPTION: &'static str = "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is hit first).";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: current directory)"},
                "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"}
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("List directory contents".into())
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let path = resolve_model_path(args.path.as_deref().unwrap_or("."));
        let shown = path.display().to_string();
        let fail = |message: String| ToolError::new(message).with_details(json!({}));
        let meta = std::fs::metadata(&path).map_err(|err| {
            fail(
                pith_sdk::sandbox::explain_read_error(&path, &err)
                    .unwrap_or_else(|| format!("Path not found: {shown}")),
            )
        })?;
        if !meta.is_dir() {
            return Err(fail(format!("Not a directory: {shown}")));
        }
        let limit = args.limit.map_or(500, |l| l.max(1.0) as usize);
        let mut entries: Vec<String> = std::fs::read_dir(&path)
            .map_err(|err| fail(format!("Cannot read directory: {err}")))?
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let is_dir = std::fs::metadata(entry.path()).ok()?.is_dir();
                Some(if is_dir { format!("{name}/") } else { name })
            })
            .collect();
        entries.sort_by_cached_key(|name| collation_key(name));
        if entries.is_empty() {
            return Ok(ToolResult::text("(empty directory)"));
        }
        let limited = entries.len() > limit;
        entries.truncate(limit);
        let truncation = truncate_head(&entries.join("\n"), usize::MAX, DEFAULT_MAX_BYTES);
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = serde_json::Map::new();
        if limited {
            notices.push(format!(
                "{limit} entries limit reached. Use limit={} for more",
                limit * 2
            ));
            details.insert("entryLimitReached".into(), json!(limit));
        }
        if truncation.truncated {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert("truncation".into(), json!(truncation));
        }
        if !notices.is_empty() {
            text.push_str(&format!("\n\n[{}]", notices.join(". ")));
            return Ok(ToolResult::text(text).with_details(Value::Object(details)));
        }
        Ok(ToolResult::text(text))
    }
}

/// A sort key that orders names as pi's `localeCompare` of the lowercased names does (the
/// Unicode root collation for ASCII): punctuation and symbols first, in the collation's order
/// (`_` before `-` before `.`), then digits, then letters, case ignored; characters by
/// character, so `file10` comes before `file2`.
fn collation_key(name: &str) -> Vec<(u8, u32)> {
    const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    name.to_lowercase()
        .chars()
        .map(|c| match PUNCTUATION.find(c) {
            Some(rank) => (0, rank as u32),
            None if c.is_ascii_digit() => (1, c as u32),
            None if c.is_alphabetic() => (2, c as u32),
            None => (3, c as u32),
        })
        .collect()
}

pith_sdk::export_tools!(Ls);
