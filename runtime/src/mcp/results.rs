//! An MCP result as the model and the host get it, as pi 1.5.2 converts it: text and images as
//! they are; audio as a note; resource links as a line naming the resource (and how to read
//! it); embedded resources as their text, their image, or a temporary file for other binary
//! data; structured content as JSON text when there is nothing else. Text past 20 KB keeps its
//! first and last 10 KB with the whole saved to a temporary file.

use std::io::Write;

use base64::Engine;
use serde_json::{Value, json};

use crate::content::{Content, ToolOutput};

/// The text past which a result is cut (pi's `MCP_OUTPUT_LIMIT_BYTES`).
pub const OUTPUT_LIMIT: usize = 20 * 1024;

/// What a result's conversion needs to know about its server.
pub struct Origin<'a> {
    /// The server's name.
    pub server: &'a str,
    /// True when the server offers resources (links then say how to read them).
    pub has_resources: bool,
}

/// pi's size text: `512B`, `2.0KB`, `1.5MB`.
pub fn format_size(bytes: u64) -> String {
    pith_sdk::text::format_size(usize::try_from(bytes).unwrap_or(usize::MAX))
}

fn text_like(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
}

/// A new temporary file `pi-mcp-<16 hex>.<ext>` (mode 0600) holding `bytes`.
fn save_temp(bytes: &[u8], ext: &str) -> std::io::Result<std::path::PathBuf> {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let path = std::env::temp_dir().join(format!("pi-mcp-{}.{ext}", &id[..16]));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&path)?.write_all(bytes)?;
    Ok(path)
}

/// The extension of a URI's path (`.pdf`), else `bin`.
fn extension_of(uri: &str) -> String {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let last = path.rsplit('/').next().unwrap_or(path);
    match last.rsplit_once('.') {
        Some((_, ext))
            if (1..=8).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            ext.to_string()
        }
        _ => "bin".into(),
    }
}

/// One embedded resource's contents as blocks.
pub fn resource_blocks(resource: &Value) -> Vec<Content> {
    let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
    let mime = resource.get("mimeType").and_then(Value::as_str);
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return vec![Content::text(text)];
    }
    let Some(blob) = resource.get("blob").and_then(Value::as_str) else {
        return vec![Content::text(format!("[Resource {uri} has no contents]"))];
    };
    if let Some(mime) = mime.filter(|m| m.starts_with("image/")) {
        return vec![Content::Image {
            data: blob.to_string(),
            mime_type: mime.to_string(),
        }];
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap_or_default();
    if mime.is_some_and(text_like) {
        return vec![Content::text(String::from_utf8_lossy(&bytes).into_owned())];
    }
    let what = format!(
        "{uri} ({}, {})",
        mime.unwrap_or("unknown type"),
        format_size(bytes.len() as u64)
    );
    vec![Content::text(match save_temp(&bytes, &extension_of(uri)) {
        Ok(path) => format!("[Binary resource {what} saved to {}]", path.display()),
        Err(err) => format!("[Binary resource {what} could not be saved: {err}]"),
    })]
}

/// One content block as the model gets it.
fn block(block: &Value, origin: &Origin<'_>) -> Vec<Content> {
    let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    match text("type") {
        "text" => vec![Content::text(text("text"))],
        "image" => vec![Content::Image {
            data: text("data").to_string(),
            mime_type: text("mimeType").to_string(),
        }],
        "audio" => vec![Content::text(format!(
            "[audio {} omitted]",
            text("mimeType")
        ))],
        "resource_link" => {
            let title = block
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(text("name"));
            let mut line = format!("[Resource {} \"{title}\"", text("uri"));
            let facts: Vec<String> = [
                block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                block.get("size").and_then(Value::as_u64).map(format_size),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !facts.is_empty() {
                line.push_str(&format!(" ({})", facts.join(", ")));
            }
            if let Some(description) = block.get("description").and_then(Value::as_str) {
                line.push_str(&format!(": {description}"));
            }
            if origin.has_resources {
                line.push_str(&format!(
                    ". Read it with read_mcp_resource (server \"{}\")",
                    origin.server
                ));
            }
            line.push(']');
            vec![Content::text(line)]
        }
        "resource" => block
            .get("resource")
            .map(resource_blocks)
            .unwrap_or_default(),
        other => vec![Content::text(format!("[unsupported MCP content {other}]"))],
    }
}

/// A `tools/call` result (as JSON) as the tool's output: content, `details` `{server, tool}`,
/// the result itself as `structuredContent`, and `isError`.
pub fn tool_output(result: &Value, origin: &Origin<'_>, tool: &str) -> ToolOutput {
    let mut structured = result.clone();
    if let Some(object) = structured.as_object_mut() {
        object.remove("_meta");
        object.entry("content").or_insert_with(|| json!([]));
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut content: Vec<Content> = blocks.iter().flat_map(|b| block(b, origin)).collect();
    if content.is_empty()
        && let Some(value) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        content.push(Content::text(
            serde_json::to_string_pretty(value).unwrap_or_default(),
        ));
    }
    if is_error && !content.iter().any(|c| matches!(c, Content::Text { .. })) {
        content.push(Content::text(format!(
            "MCP tool {}/{tool} returned an error",
            origin.server
        )));
    }
    let mut details = json!({"server": origin.server, "tool": tool});
    let content = limit(content, &mut details);
    ToolOutput {
        content,
        details: Some(details),
        is_error,
        structured: Some(structured),
    }
}

/// pi's `limitMcpContent`: text past [`OUTPUT_LIMIT`] keeps its first and last halves of the
/// limit, the whole saved to a temporary file named in the text and in `details.fullOutputPath`.
pub fn limit(content: Vec<Content>, details: &mut Value) -> Vec<Content> {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            Content::Image { .. } => None,
        })
        .collect();
    let combined = texts.join("\n");
    if combined.len() <= OUTPUT_LIMIT {
        return content;
    }
    let half = OUTPUT_LIMIT / 2;
    let mut head_end = half;
    while !combined.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = combined.len() - half;
    while !combined.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = combined[head_end..tail_start].chars().count();
    let mut lines = combined.split('\n').count();
    if combined.ends_with('\n') {
        lines -= 1;
    }
    let saved = match save_temp(combined.as_bytes(), "txt") {
        Ok(path) => {
            if let Some(object) = details.as_object_mut() {
                object.insert("fullOutputPath".into(), json!(path.display().to_string()));
            }
            format!(
                "\n\n[Full output: {} (read it with offset/limit)]",
                path.display()
            )
        }
        Err(err) => format!("\n\n[Could not save the full output: {err}]"),
    };
    let text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {lines}\n\n{}…{removed} chars truncated…{}{saved}",
        combined.len().div_ceil(4),
        &combined[..head_end],
        &combined[tail_start..],
    );
    let mut limited = vec![Content::text(text)];
    limited.extend(
        content
            .into_iter()
            .filter(|c| matches!(c, Content::Image { .. })),
    );
    limited
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: Origin<'static> = Origin {
        server: "fake",
        has_resources: true,
    };

    #[test]
    fn blocks_as_pi_converts_them() {
        let result = json!({"content": [
            {"type": "audio", "data": "", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///data/report.csv", "name": "r", "title": "Quarterly report", "mimeType": "text/csv", "size": 2048, "description": "Numbers"},
            {"type": "resource_link", "uri": "file:///data/plain", "name": "plain-link"},
            {"type": "resource", "resource": {"uri": "file:///x.json", "mimeType": "application/json", "blob": "eyJhIjoxfQ=="}},
            {"type": "widget"},
        ]});
        let output = tool_output(&result, &ORIGIN, "blocks");
        let texts: Vec<String> = output
            .content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.clone(),
                Content::Image { .. } => "image".into(),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "[audio audio/wav omitted]",
                "[Resource file:///data/report.csv \"Quarterly report\" (text/csv, 2.0KB): Numbers. Read it with read_mcp_resource (server \"fake\")]",
                "[Resource file:///data/plain \"plain-link\". Read it with read_mcp_resource (server \"fake\")]",
                "{\"a\":1}",
                "[unsupported MCP content widget]",
            ]
        );
        assert_eq!(
            output.details,
            Some(json!({"server": "fake", "tool": "blocks"}))
        );
    }

    #[test]
    fn errors_and_structured_content() {
        let output = tool_output(&json!({"content": [], "isError": true}), &ORIGIN, "e");
        assert!(output.is_error);
        assert_eq!(output.text(), "MCP tool fake/e returned an error");
        let output = tool_output(&json!({"structuredContent": {"a": 1}}), &ORIGIN, "s");
        assert_eq!(output.text(), "{\n  \"a\": 1\n}");
        assert_eq!(
            output.structured,
            Some(json!({"structuredContent": {"a": 1}, "content": []}))
        );
    }

    #[test]
    fn big_text_keeps_both_ends_as_pi_does() {
        // pi 1.5.2's golden: 3,000 lines and a second block, 54,012 bytes → 13,503 tokens,
        // 3,001 lines, 33,532 characters cut.
        let lines: Vec<String> = (1..=3000).map(|i| format!("line {i:04} abcdefg")).collect();
        let result = json!({"content": [
            {"type": "text", "text": lines.join("\n")},
            {"type": "text", "text": "second block"},
        ]});
        let output = tool_output(&result, &ORIGIN, "big");
        let shown = output.text();
        assert!(shown.starts_with(
            "Warning: truncated output (original token count: 13503)\nTotal output lines: 3001\n\nline 0001"
        ));
        assert!(shown.contains("…33532 chars truncated…"));
        assert!(shown.contains("abcdefg\nsecond block\n\n[Full output: "));
        let path = output
            .details
            .as_ref()
            .and_then(|d| d["fullOutputPath"].as_str())
            .map(str::to_string);
        let path = path.expect("full output saved");
        assert_eq!(
            std::fs::read_to_string(&path).expect("saved"),
            format!("{}\nsecond block", lines.join("\n"))
        );
        let _ = std::fs::remove_file(path);
    }
}
