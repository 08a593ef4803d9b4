//! How a tool call looks to an ACP client: its kind (read, edit, execute, search, …), a title,
//! the files it touches, the diffs an `edit` or `write` proposes, and its output (a `bash`
//! call's as terminal text).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use crate::content::Content;

/// The first-party tools pith knows the shape of; any other is `other` (or `fetch`).
fn kind(name: &str) -> acp::ToolKind {
    match name {
        "read" | "ls" => acp::ToolKind::Read,
        "edit" | "write" => acp::ToolKind::Edit,
        "bash" | "powershell" => acp::ToolKind::Execute,
        "grep" | "find" => acp::ToolKind::Search,
        "todo" => acp::ToolKind::Think,
        other if other.contains("fetch") => acp::ToolKind::Fetch,
        _ => acp::ToolKind::Other,
    }
}

fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A path the model gave, made absolute against the workspace (pi's tools accept `@path`).
fn absolute(cwd: &Path, path: &str) -> PathBuf {
    cwd.join(path.strip_prefix('@').unwrap_or(path))
}

/// One-line title for the call.
fn title(name: &str, args: &Value) -> String {
    let path = text(args, "path");
    match name {
        "read" => match args.get("offset").and_then(Value::as_u64) {
            Some(offset) => format!("Read {}:{offset}", path.unwrap_or("?")),
            None => format!("Read {}", path.unwrap_or("?")),
        },
        "ls" => format!("List {}", path.unwrap_or(".")),
        "edit" => format!("Edit {}", path.unwrap_or("?")),
        "write" => format!("Write {}", path.unwrap_or("?")),
        "bash" | "powershell" => format!("`{}`", text(args, "command").unwrap_or("")),
        "grep" => format!(
            "grep {:?} in {}",
            text(args, "pattern").unwrap_or(""),
            path.unwrap_or(".")
        ),
        "find" => format!(
            "find {} in {}",
            text(args, "pattern").unwrap_or(""),
            path.unwrap_or(".")
        ),
        "todo" => "Update plan".to_string(),
        other => other.to_string(),
    }
}

/// The files the call touches (a `read` from its offset).
fn locations(name: &str, args: &Value, cwd: &Path) -> Vec<acp::ToolCallLocation> {
    let Some(path) = text(args, "path") else {
        return match name {
            "ls" | "grep" | "find" => vec![acp::ToolCallLocation::new(cwd.to_path_buf())],
            _ => Vec::new(),
        };
    };
    let location = acp::ToolCallLocation::new(absolute(cwd, path));
    let line = (name == "read")
        .then(|| args.get("offset").and_then(Value::as_u64))
        .flatten()
        .and_then(|line| u32::try_from(line).ok());
    vec![location.line(line)]
}

/// The change an `edit` or `write` call proposes, as diffs (an edit's: one per replacement).
pub(super) fn proposed(name: &str, args: &Value, cwd: &Path) -> Vec<acp::ToolCallContent> {
    let Some(path) = text(args, "path").map(|p| absolute(cwd, p)) else {
        return Vec::new();
    };
    match name {
        "write" => text(args, "content")
            .map(|content| vec![acp::ToolCallContent::Diff(acp::Diff::new(path, content))])
            .unwrap_or_default(),
        "edit" => args
            .get("edits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|edit| {
                let old = text(edit, "oldText")?;
                let new = text(edit, "newText")?;
                Some(acp::ToolCallContent::Diff(
                    acp::Diff::new(path.clone(), new).old_text(old.to_string()),
                ))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The tool call as announced, before it runs.
pub(super) fn announce(id: &str, name: &str, args: &Value, cwd: &Path) -> acp::ToolCall {
    acp::ToolCall::new(id.to_string(), title(name, args))
        .kind(kind(name))
        .status(acp::ToolCallStatus::Pending)
        .locations(locations(name, args, cwd))
        .content(proposed(name, args, cwd))
        .raw_input(args.clone())
}

/// The fields of an update naming the call's title, kind and locations (for a permission request
/// about a call the client may not have seen yet).
pub(super) fn describe(name: &str, args: &Value, cwd: &Path) -> acp::ToolCallUpdateFields {
    acp::ToolCallUpdateFields::new()
        .title(title(name, args))
        .kind(kind(name))
        .locations(locations(name, args, cwd))
        .raw_input(args.clone())
}

/// Blocks of tool output as ACP content; a shell call's text as a terminal transcript.
pub(super) fn output(name: &str, content: &[Content]) -> Vec<acp::ToolCallContent> {
    content
        .iter()
        .map(|block| match block {
            Content::Text { text } if name == "bash" || name == "powershell" => console(text),
            Content::Text { text } => acp::ContentBlock::from(text.clone()),
            Content::Image { data, mime_type } => {
                acp::ContentBlock::Image(acp::ImageContent::new(data.clone(), mime_type.clone()))
            }
        })
        .map(|block| acp::ToolCallContent::Content(acp::Content::new(block)))
        .collect()
}

/// `text` as a markdown code block of `language`, fenced longer than any run of backticks
/// inside it.
pub(super) fn fenced(text: &str, language: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{language}\n{}\n{fence}", text.trim_end())
}

/// Text shown as a terminal's output: a `console` code block.
fn console(text: &str) -> acp::ContentBlock {
    acp::ContentBlock::from(fenced(text, "console"))
}

/// The update that closes a call: its status, its output, and for `edit` and `write` the diffs
/// again (the client keeps showing them), with the first changed line as the location.
pub(super) fn finish(
    name: &str,
    args: &Value,
    content: &[Content],
    details: Option<&Value>,
    is_error: bool,
    cwd: &Path,
) -> acp::ToolCallUpdateFields {
    let mut shown = if is_error {
        Vec::new()
    } else {
        proposed(name, args, cwd)
    };
    if shown.is_empty() || is_error {
        shown.extend(output(name, content));
    }
    let mut fields = acp::ToolCallUpdateFields::new()
        .status(if is_error {
            acp::ToolCallStatus::Failed
        } else {
            acp::ToolCallStatus::Completed
        })
        .content(shown)
        .raw_output(details.cloned());
    let first_line = details
        .and_then(|d| d.get("firstChangedLine"))
        .and_then(Value::as_u64)
        .and_then(|line| u32::try_from(line).ok());
    if let (Some(line), Some(path)) = (first_line, text(args, "path")) {
        fields = fields.locations(vec![
            acp::ToolCallLocation::new(absolute(cwd, path)).line(line),
        ]);
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_is_announced_with_a_diff_per_replacement() {
        let args = json!({"path": "src/a.rs", "edits": [
            {"oldText": "one", "newText": "two"}, {"oldText": "x", "newText": "y"}]});
        let call = serde_json::to_value(announce("c1", "edit", &args, Path::new("/w"))).unwrap();
        assert_eq!(call["kind"], "edit");
        assert_eq!(call["title"], "Edit src/a.rs");
        assert_eq!(call["locations"][0]["path"], "/w/src/a.rs");
        assert_eq!(call["content"][0]["type"], "diff");
        assert_eq!(call["content"][0]["oldText"], "one");
        assert_eq!(call["content"][1]["newText"], "y");
    }

    #[test]
    fn bash_output_is_fenced_beyond_its_own_backticks() {
        let block = serde_json::to_value(console("a ``` b\n")).unwrap();
        assert_eq!(block["text"], "````console\na ``` b\n````");
        assert_eq!(kind("bash"), acp::ToolKind::Execute);
        assert_eq!(kind("web_fetch"), acp::ToolKind::Fetch);
    }

    #[test]
    fn a_failed_edit_shows_the_error_not_the_diff() {
        let args = json!({"path": "a", "edits": [{"oldText": "o", "newText": "n"}]});
        let content = vec![Content::Text {
            text: "no match".into(),
        }];
        let fields =
            serde_json::to_value(finish("edit", &args, &content, None, true, Path::new("/w")))
                .unwrap();
        assert_eq!(fields["status"], "failed");
        assert_eq!(fields["content"][0]["content"]["text"], "no match");
        assert_eq!(fields["content"].as_array().unwrap().len(), 1);
    }
}
