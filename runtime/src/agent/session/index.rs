//! The sessions on disk as a host lists them (`list_sessions`): a summary per pi-format file,
//! read without building the session. Only the header and the lines a summary needs are
//! parsed; the other lines are recognised by their first bytes, so a page of summaries costs a
//! read of its files, not a parse.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::{Value, json};

/// The most sessions one `list_sessions` page holds.
pub const MAX_PAGE: usize = 1000;

/// What a host shows for one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// The session id (from the header).
    pub id: String,
    /// The file.
    pub path: PathBuf,
    /// The working directory it was started in.
    pub cwd: String,
    /// Its name (the last `session_info` entry's), if it was given one.
    pub name: Option<String>,
    /// The text of its first user message, if any (at most 200 characters).
    pub first_message: Option<String>,
    /// The file's modification time, ms since the epoch.
    pub modified: i64,
    /// How many message entries it holds.
    pub message_count: usize,
}

impl SessionSummary {
    /// The summary as `list_sessions` shows it.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "path": self.path.display().to_string(),
            "cwd": self.cwd,
            "name": self.name,
            "firstMessage": self.first_message,
            "modified": crate::time::iso(self.modified),
            "messageCount": self.message_count,
        })
    }
}

/// The `.jsonl` files in `dirs`, newest first (by modification time, then path).
pub fn session_files(dirs: &[PathBuf]) -> Vec<(i64, PathBuf)> {
    let mut files: Vec<(i64, PathBuf)> = dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|path| {
            let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
            let ms = modified.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64;
            Some((ms, path))
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files
}

/// The summary of the session file at `path` (modified at `modified`), or `None` when it is not
/// a pi session file (no session header on its first line).
pub fn summarize(path: &Path, modified: i64) -> Option<SessionSummary> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header.get("type").and_then(Value::as_str) != Some("session") {
        return None;
    }
    let mut summary = SessionSummary {
        id: header.get("id").and_then(Value::as_str)?.to_string(),
        path: path.to_path_buf(),
        cwd: header
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        name: None,
        first_message: None,
        modified,
        message_count: 0,
    };
    for line in lines {
        // pith and pi write `type` first: other writers' lines are parsed to find it.
        let parsed;
        let kind = match line.strip_prefix("{\"type\":\"") {
            Some(rest) => rest.split('"').next().unwrap_or_default(),
            None => {
                parsed = serde_json::from_str::<Value>(line).ok();
                parsed
                    .as_ref()
                    .and_then(|entry| entry.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            }
        };
        match kind {
            "message" => {
                summary.message_count += 1;
                if summary.first_message.is_none() && line.contains("\"user\"") {
                    summary.first_message = serde_json::from_str::<Value>(line)
                        .ok()
                        .filter(|entry| entry["message"]["role"] == "user")
                        .and_then(|entry| user_text(&entry["message"]["content"]));
                }
            }
            "session_info" => {
                let name = serde_json::from_str::<Value>(line).ok().and_then(|entry| {
                    entry
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::trim)
                        .filter(|name| !name.is_empty())
                        .map(str::to_string)
                });
                if name.is_some() {
                    summary.name = name;
                }
            }
            _ => {}
        }
    }
    Some(summary)
}

/// The text of a user message's content (a string, or its text blocks), cut at 200 characters.
fn user_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    Some(text.chars().take(200).collect())
}
