//! A script's result as pi 1.5.2 lays it out: `Script completed`/`Script failed`, the wall
//! time, then the output items (`==> text N/M <==` when there are several texts, images after
//! a line naming the temp file they were saved to, `console` lines in one
//! `<console_output>` block), the error with the tool calls made before it, and the output cut
//! to `max_output_tokens` with the whole text saved to a temp file.

use base64::Engine as _;

use crate::content::Content;

/// Characters per estimated token.
const CHARS_PER_TOKEN: usize = 4;
/// pi's default output budget in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;

/// One output item of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `text()` or the returned value; `console` for a console line.
    Text {
        /// The text.
        text: String,
        /// True for a `console.*` line.
        console: bool,
    },
    /// `image()`.
    Image {
        /// Base64 data.
        data: String,
        /// Its type.
        mime_type: String,
    },
}

/// pi's `formatOutput`: numbered texts when there are several, console lines in one block last.
pub fn format_output(output: &[Item]) -> Vec<Content> {
    let total = output
        .iter()
        .filter(|i| matches!(i, Item::Text { console: false, .. }))
        .count();
    let mut items = Vec::new();
    let mut console_lines: Vec<&str> = Vec::new();
    let mut index = 0;
    for item in output {
        match item {
            Item::Image { data, mime_type } => items.push(Content::Image {
                data: data.clone(),
                mime_type: mime_type.clone(),
            }),
            Item::Text {
                text,
                console: true,
            } => console_lines.push(text),
            Item::Text { text, .. } => {
                index += 1;
                items.push(Content::text(if total > 1 {
                    format!("==> text {index}/{total} <==\n{text}")
                } else {
                    text.clone()
                }));
            }
        }
    }
    if !console_lines.is_empty() {
        items.push(Content::text(format!(
            "<console_output>\n{}\n</console_output>",
            console_lines.join("\n")
        )));
    }
    items
}

/// pi's `joinAdjacentText`: adjacent texts become one, each part on its own line.
pub fn join_adjacent_text(items: Vec<Content>) -> Vec<Content> {
    let mut joined = Vec::new();
    let mut parts = String::new();
    let mut open = false;
    let mut last_ends_line = true;
    for item in items {
        match item {
            Content::Text { text } => {
                if open && !last_ends_line {
                    parts.push('\n');
                    last_ends_line = true;
                }
                parts.push_str(&text);
                if !text.is_empty() {
                    last_ends_line = text.ends_with('\n');
                }
                open = true;
            }
            other => {
                if open {
                    joined.push(Content::text(std::mem::take(&mut parts)));
                    open = false;
                    last_ends_line = true;
                }
                joined.push(other);
            }
        }
    }
    if open {
        joined.push(Content::text(parts));
    }
    joined
}

/// Writes `bytes` to a new temp file `pi-codemode-….<extension>`; its path.
fn write_output_file(extension: &str, bytes: &[u8]) -> std::io::Result<String> {
    let path = std::env::temp_dir().join(format!(
        "pi-codemode-{}{extension}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&path, bytes)?;
    Ok(path.display().to_string())
}

/// The first `chars` characters of `text`.
fn head(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// The last `chars` characters of `text`.
fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    if chars >= count {
        return text;
    }
    match text.char_indices().nth(count - chars) {
        Some((at, _)) => &text[at..],
        None => "",
    }
}

/// pi's `truncateOutput`: past `max_tokens`, the texts become one item keeping their start and
/// end, the whole text saved to a temp file; the images follow. The file's path, if saved.
pub fn truncate_output(items: Vec<Content>, max_tokens: u64) -> (Vec<Content>, Option<String>) {
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|item| match item {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let combined = texts.join("\n");
    let length = combined.chars().count();
    let budget = (max_tokens as usize).saturating_mul(CHARS_PER_TOKEN);
    if texts.is_empty() || length <= budget {
        return (items, None);
    }
    let head_chars = budget / 2;
    let tail_chars = budget - head_chars;
    let removed = length - head_chars - tail_chars;
    let mut text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}…{} tokens truncated…{}",
        length.div_ceil(CHARS_PER_TOKEN),
        combined.split('\n').count(),
        head(&combined, head_chars),
        removed.div_ceil(CHARS_PER_TOKEN),
        tail(&combined, tail_chars)
    );
    let saved = write_output_file(".txt", combined.as_bytes());
    match &saved {
        Ok(path) => text.push_str(&format!(
            "\n\n[Full output: {path} (read with offset/limit)]"
        )),
        Err(err) => text.push_str(&format!("\n\n[Could not save the full output: {err}]")),
    }
    let mut kept = vec![Content::text(text)];
    kept.extend(
        items
            .into_iter()
            .filter(|item| matches!(item, Content::Image { .. })),
    );
    (kept, saved.ok())
}

/// The file extension of an image type `image()` accepts.
fn extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        _ => ".webp",
    }
}

/// pi's `saveImages`: each image saved to a temp file once, a line naming it before the image.
pub fn save_images(items: Vec<Content>) -> Vec<Content> {
    let mut labels: std::collections::HashMap<String, String> = Default::default();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if let Content::Image { data, mime_type } = &item {
            let label = labels.entry(data.clone()).or_insert_with(|| {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default();
                let kind = format!("{mime_type}, {}", pith_sdk::text::format_size(bytes.len()));
                match write_output_file(extension(mime_type), &bytes) {
                    Ok(path) => format!("[Image saved to {path} ({kind})]"),
                    Err(err) => format!("[Image ({kind}) could not be saved: {err}]"),
                }
            });
            out.push(Content::text(label.clone()));
        }
        out.push(item);
    }
    out
}

/// The result's first block: `Script completed` or `Script failed`, and the wall time.
pub fn header(ok: bool, wall: std::time::Duration) -> Content {
    Content::text(format!(
        "{}\nWall time {:.1} seconds\nOutput:\n",
        if ok {
            "Script completed"
        } else {
            "Script failed"
        },
        wall.as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(text: &str) -> Item {
        Item::Text {
            text: text.into(),
            console: false,
        }
    }

    #[test]
    fn several_texts_are_numbered_and_console_lines_come_last() {
        let items = format_output(&[
            text("a"),
            Item::Text {
                text: "log".into(),
                console: true,
            },
            text("b"),
        ]);
        let joined = join_adjacent_text(items);
        assert_eq!(
            joined,
            vec![Content::text(
                "==> text 1/2 <==\na\n==> text 2/2 <==\nb\n<console_output>\nlog\n</console_output>"
            )]
        );
    }

    #[test]
    fn output_past_the_budget_keeps_its_start_and_end() {
        let long = "x".repeat(100);
        let (items, path) = truncate_output(vec![Content::text(&long)], 10);
        let Content::Text { text } = &items[0] else {
            panic!("text")
        };
        assert!(text.starts_with("Warning: truncated output (original token count: 25)"));
        assert!(text.contains("…15 tokens truncated…"));
        let path = path.expect("saved");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), long);
        let _ = std::fs::remove_file(path);
    }
}
