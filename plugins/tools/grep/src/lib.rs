//! The `grep` tool, as pi's: lines matching a regular expression (or a literal string) in the
//! files under a path, `.gitignore` respected, as `path:line: text` with optional context lines
//! `path-line- text`, at most `limit` (100) matches, lines cut at 500 characters, 50 KB in all.

use pith_sdk::host::resolve_model_path;
use pith_sdk::text::{DEFAULT_MAX_BYTES, format_size, truncate_head};
use pith_sdk::tool::*;
use pith_sdk::walk::{glob_match, walk};

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
            "properties": {
                "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
            },
            "required": ["pattern"]
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Search file contents for patterns (respects .gitignore)".into())
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let fail = |message: String| ToolError::new(message).with_details(json!({}));
        let source = if args.literal == Some(true) {
            regex::escape(&args.pattern)
        } else {
            args.pattern.clone()
        };
        let regex = regex::RegexBuilder::new(&source)
            .case_insensitive(args.ignore_case == Some(true))
            .build()
            .map_err(|err| fail(format!("Invalid pattern: {err}")))?;
        // Lines are matched one by one; this multi-line twin finds the files worth splitting.
        let whole_file = regex::RegexBuilder::new(&source)
            .case_insensitive(args.ignore_case == Some(true))
            .multi_line(true)
            .build()
            .map_err(|err| fail(format!("Invalid pattern: {err}")))?;
        let root = resolve_model_path(args.path.as_deref().unwrap_or("."));
        let limit = args.limit.map_or(100, |l| l.max(1.0) as usize);
        let context = args.context.map_or(0, |c| c.max(0.0) as usize);
        let files: Vec<(std::path::PathBuf, String)> = if root.is_file() {
            let name = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            vec![(root.clone(), name)]
        } else if root.is_dir() {
            let mut files = Vec::new();
            walk(&root, |entry| {
                let wanted = args.glob.as_deref().is_none_or(|g| {
                    let name = entry.relative.rsplit('/').next().unwrap_or(&entry.relative);
                    glob_match(
                        g,
                        if g.contains('/') {
                            &entry.relative
                        } else {
                            name
                        },
                    )
                });
                if !entry.is_dir && wanted {
                    files.push((entry.path.clone(), entry.relative.clone()));
                }
                true
            });
            files
        } else {
            return Err(fail(
                pith_sdk::sandbox::explain_read(&root)
                    .unwrap_or_else(|| format!("Path not found: {}", root.display())),
            ));
        };
        let mut out: Vec<String> = Vec::new();
        let mut matches = 0;
        let mut cut = false;
        'files: for (path, shown) in files {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if bytes.contains(&0) {
                continue; // binary
            }
            let text = String::from_utf8_lossy(&bytes);
            // One search over the whole file first: most files have no match.
            if !whole_file.is_match(&text) {
                continue;
            }
            let lines: Vec<&str> = text.lines().collect();
            let mut printed_until = 0usize;
            for (i, line) in lines.iter().enumerate() {
                if !regex.is_match(line) {
                    continue;
                }
                let from = i.saturating_sub(context).max(printed_until);
                for (j, before) in lines.iter().enumerate().take(i).skip(from) {
                    out.push(format!("{shown}-{}- {}", j + 1, shorten(before, &mut cut)));
                }
                out.push(format!("{shown}:{}: {}", i + 1, shorten(line, &mut cut)));
                let to = (i + 1 + context).min(lines.len());
                for (j, after) in lines.iter().enumerate().take(to).skip(i + 1) {
                    if regex.is_match(after) {
                        break;
                    }
                    out.push(format!("{shown}-{}- {}", j + 1, shorten(after, &mut cut)));
                }
                printed_until = to;
                matches += 1;
                if matches >= limit {
                    break 'files;
                }
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
