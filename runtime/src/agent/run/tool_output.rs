//! Bounds what one tool result puts into the conversation. Every result — first-party,
//! third-party plugin, extension and host tools alike — passes through [`OutputLimit::bound`]
//! before hooks, events and the session file see it: text over the limit (pi's 50 KB / 2,000
//! lines by default, never more than a quarter of the model's context window) is cut to its
//! head and its end (where a failing command says why), the whole text is kept in a temp file
//! named in the result, and oversized `details` are replaced by a note. A result its tool cut
//! by its own policy already (`details.truncation`, as bash keeps its tail and read its
//! continuation hint) is left as the tool made it while it is within the limit and its note. Results already in a session (written before the limit, or by another
//! program) are cut again when a request is built ([`OutputLimit::cut_for_model`]), so one huge
//! entry can never make every later request overflow.

use serde_json::json;

use crate::content::{Content, ToolOutput};
use pith_sdk::text::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, Truncation, format_size};

/// Serialized `details` larger than this are replaced by a note (hosts get them in events and
/// they are written to the session file; the model never sees them).
pub const MAX_DETAILS_BYTES: usize = 1 << 20;

/// Room kept for the truncation note (its two blank-line-led lines and a temp file path).
const NOTE_ROOM_BYTES: usize = 512;
const NOTE_ROOM_LINES: usize = 3;

/// What a tool's own notes may add to a result it cut by its own policy.
const OWN_NOTE_BYTES: usize = 4096;
const OWN_NOTE_LINES: usize = 8;

/// The smallest text limit a small context window can bring the limit down to.
const MIN_BYTES: usize = 2 * 1024;

/// Limits on the text of one tool result (settings `toolResults.maxBytes`, `toolResults.maxLines`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimit {
    /// Bytes of text kept.
    pub max_bytes: usize,
    /// Lines of text kept.
    pub max_lines: usize,
}

impl Default for OutputLimit {
    fn default() -> Self {
        OutputLimit {
            max_bytes: DEFAULT_MAX_BYTES,
            max_lines: DEFAULT_MAX_LINES,
        }
    }
}

impl OutputLimit {
    /// The limit for a model with this context window (tokens; 0 when unknown): at most a
    /// quarter of the window, at about four bytes a token.
    pub fn for_window(self, context_window: u64) -> OutputLimit {
        if context_window == 0 {
            return self;
        }
        let quarter = usize::try_from(context_window).unwrap_or(usize::MAX);
        OutputLimit {
            max_bytes: self.max_bytes.min(quarter.max(MIN_BYTES)),
            ..self
        }
    }

    fn fits(&self, text: &str) -> bool {
        text.len() <= self.max_bytes && text.split('\n').count() <= self.max_lines
    }

    /// True when `text` is within the limit but for a tool's own note (its truncation notice,
    /// an exit line).
    fn fits_with_note(&self, text: &str) -> bool {
        text.len() <= self.max_bytes + OWN_NOTE_BYTES
            && text.split('\n').count() <= self.max_lines + OWN_NOTE_LINES
    }

    /// Cuts `output` to the limit; the whole text goes to a temp file named in the note and in
    /// `details.fullOutputPath` (with `details.truncation` in pi's shape). True when it cut.
    pub fn bound(&self, output: &mut ToolOutput) -> bool {
        bound_details(output);
        let texts: Vec<&str> = output
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect();
        let full = texts.join("\n");
        let own_policy = output
            .details
            .as_ref()
            .is_some_and(|d| d.get("truncation").is_some());
        if self.fits(&full) || (own_policy && self.fits_with_note(&full)) {
            return false;
        }
        let (kept, truncation) = self.cut(&full);
        let saved = save_full_output(&full);
        let note = match &saved {
            Ok(path) => format!(
                "\n\n[Output truncated: showing {} of {} lines ({} of {}). Full output: {path}]",
                truncation.output_lines,
                truncation.total_lines,
                format_size(kept.len()),
                format_size(full.len()),
            ),
            Err(err) => format!(
                "\n\n[Output truncated: showing {} of {} lines ({} of {}); the full output could not be saved: {err}]",
                truncation.output_lines,
                truncation.total_lines,
                format_size(kept.len()),
                format_size(full.len()),
            ),
        };
        let images = output
            .content
            .drain(..)
            .filter(|c| matches!(c, Content::Image { .. }));
        let mut content = vec![Content::text(format!("{kept}{note}"))];
        content.extend(images);
        output.content = content;
        let details = output.details.get_or_insert_with(|| json!({}));
        if let Some(fields) = details.as_object_mut() {
            fields
                .entry("truncation")
                .or_insert_with(|| json!(truncation));
            if let Ok(path) = saved {
                fields.insert("fullOutputPath".into(), json!(path));
            }
        }
        true
    }

    /// The text a request carries for a result above the limit (cut, with a note), or `None`
    /// when it fits.
    pub fn cut_for_model(&self, text: &str) -> Option<String> {
        if self.fits(text) {
            return None;
        }
        let (kept, truncation) = self.cut(text);
        Some(format!(
            "{kept}\n\n[Output truncated: showing {} of {} lines ({} of {})]",
            truncation.output_lines,
            truncation.total_lines,
            format_size(kept.len()),
            format_size(text.len()),
        ))
    }

    /// The head and the end of `text`, half the room each, with the count of the lines left
    /// out between them, leaving room for the note so that the result is within the limit
    /// (bounding it again changes nothing); a line over its half of the bytes is cut inside.
    fn cut(&self, text: &str) -> (String, Truncation) {
        let max_bytes = self.max_bytes.saturating_sub(NOTE_ROOM_BYTES).max(2);
        let max_lines = self.max_lines.saturating_sub(NOTE_ROOM_LINES).max(2);
        let lines: Vec<&str> = text.split('\n').collect();
        let (head_bytes, tail_bytes) = (max_bytes / 2, max_bytes - max_bytes / 2);
        let (head_lines, tail_lines) = (max_lines / 2, max_lines - max_lines / 2);
        // Whole lines from the start, then from the end, while they fit their half.
        let mut head: Vec<String> = Vec::new();
        let mut used = 0;
        for line in &lines {
            if head.len() == head_lines || used + line.len() + 1 > head_bytes {
                break;
            }
            used += line.len() + 1;
            head.push((*line).to_string());
        }
        let first_line_exceeds_limit = head.is_empty();
        if first_line_exceeds_limit {
            head.push(prefix_within(lines[0], head_bytes).to_string());
        }
        let mut tail: Vec<String> = Vec::new();
        let mut used = 0;
        for line in lines.iter().skip(head.len()).rev() {
            if tail.len() == tail_lines || used + line.len() + 1 > tail_bytes {
                break;
            }
            used += line.len() + 1;
            tail.push((*line).to_string());
        }
        let last_line_partial = tail.is_empty() && lines.len() > head.len();
        if last_line_partial {
            let last = lines[lines.len() - 1];
            tail.push(suffix_within(last, tail_bytes).to_string());
        }
        tail.reverse();
        let omitted = lines.len().saturating_sub(head.len() + tail.len());
        let kept = if omitted > 0 || first_line_exceeds_limit || last_line_partial {
            format!(
                "{}\n\n[… {omitted} lines left out …]\n\n{}",
                head.join("\n"),
                tail.join("\n")
            )
        } else {
            [head.join("\n"), tail.join("\n")].join("\n")
        };
        let truncated_by = if text.len() > self.max_bytes {
            TruncatedBy::Bytes
        } else {
            TruncatedBy::Lines
        };
        let truncation = Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some(truncated_by),
            total_lines: lines.len(),
            total_bytes: text.len(),
            output_lines: head.len() + tail.len(),
            output_bytes: kept.len(),
            last_line_partial,
            first_line_exceeds_limit,
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
        };
        (kept, truncation)
    }
}

/// The longest start of `line` within `bytes` (at a character boundary).
fn prefix_within(line: &str, bytes: usize) -> &str {
    let mut end = bytes.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// The longest end of `line` within `bytes` (at a character boundary).
fn suffix_within(line: &str, bytes: usize) -> &str {
    let mut start = line.len().saturating_sub(bytes);
    while !line.is_char_boundary(start) {
        start += 1;
    }
    &line[start..]
}

/// Replaces `details` too large to keep with a note saying so.
fn bound_details(output: &mut ToolOutput) {
    let Some(details) = &output.details else {
        return;
    };
    let size = serde_json::to_vec(details).map_or(0, |bytes| bytes.len());
    if size > MAX_DETAILS_BYTES {
        output.details = Some(json!({
            "omitted": format!(
                "the tool's details were {} (over the {} kept) and were dropped",
                format_size(size),
                format_size(MAX_DETAILS_BYTES)
            )
        }));
    }
}

/// Writes the whole output to a new file in the temp directory; returns its path.
fn save_full_output(text: &str) -> Result<String, std::io::Error> {
    let path = std::env::temp_dir().join(format!(
        "pith-tool-{}.txt",
        &uuid::Uuid::new_v4().simple().to_string()[..16]
    ));
    std::fs::write(&path, text)?;
    Ok(path.display().to_string())
}

/// The text of a tool result message as a request carries it: each text block over the limit
/// is cut (see [`OutputLimit::cut_for_model`]).
pub fn content_for_model(limit: &OutputLimit, content: &[Content]) -> Vec<Content> {
    content
        .iter()
        .map(|block| match block {
            Content::Text { text } => match limit.cut_for_model(text) {
                Some(cut) => Content::text(cut),
                None => block.clone(),
            },
            image => image.clone(),
        })
        .collect()
}

/// The limit in settings (`toolResults`), or pi's defaults.
pub fn limit_from_settings(settings: &crate::settings::Settings) -> OutputLimit {
    let defaults = OutputLimit::default();
    let number = |key: &str| {
        settings
            .number("toolResults", key)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
    };
    OutputLimit {
        max_bytes: number("maxBytes").unwrap_or(defaults.max_bytes),
        max_lines: number("maxLines").unwrap_or(defaults.max_lines),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(text: &str) -> ToolOutput {
        ToolOutput {
            structured: None,
            content: vec![Content::text(text)],
            details: None,
            is_error: false,
        }
    }

    #[test]
    fn small_results_are_untouched() {
        let mut out = output("hello\nworld");
        assert!(!OutputLimit::default().bound(&mut out));
        assert_eq!(out, output("hello\nworld"));
    }

    #[test]
    fn large_results_are_cut_and_kept_whole_in_a_file() {
        let text = "x".repeat(100) + "\n";
        let big = text.repeat(5_000);
        let mut out = output(&big);
        assert!(OutputLimit::default().bound(&mut out));
        let kept = out.text();
        assert!(kept.len() < DEFAULT_MAX_BYTES + 200, "{}", kept.len());
        assert!(kept.contains("[Output truncated: showing"), "{kept}");
        // Bounding again changes nothing.
        let mut again = out.clone();
        assert!(!OutputLimit::default().bound(&mut again));
        assert_eq!(again, out);
        let details = out.details.unwrap();
        let path = details["fullOutputPath"].as_str().unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), big);
        assert_eq!(details["truncation"]["truncated"], true);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn one_long_line_is_cut_inside_at_a_char_boundary() {
        let big = "é".repeat(60_000);
        let limit = OutputLimit::default();
        let cut = limit.cut_for_model(&big).unwrap();
        assert!(cut.starts_with("éé"));
        assert!(cut.len() < DEFAULT_MAX_BYTES + 200);
    }

    #[test]
    fn the_end_of_a_cut_text_is_kept() {
        let text: String = (1..=5000)
            .map(|n| format!("line {n}\n"))
            .collect::<String>()
            + "LAST_LINE_MARKER";
        let mut out = output(&text);
        assert!(OutputLimit::default().bound(&mut out));
        let kept = out.text();
        assert!(kept.starts_with("line 1\nline 2\n"), "{}", &kept[..40]);
        assert!(kept.contains("line 4999\nline 5000\nLAST_LINE_MARKER\n\n[Output truncated"));
        assert!(kept.contains("lines left out"));
        if let Some(path) = out.details.unwrap()["fullOutputPath"].as_str() {
            std::fs::remove_file(path).unwrap();
        }
    }

    #[test]
    fn a_result_its_tool_cut_already_is_left_as_it_is() {
        // bash's own tail of 2,000 lines, its notice and the exit line: just over the limit.
        let tail: String = (1002..=3001).map(|n| format!("{n}\n")).collect();
        let text = format!(
            "{tail}\n\n[Showing lines 1002-3001 of 3001. Full output: /tmp/x]\n\nCommand exited with code 3"
        );
        let mut out = output(&text);
        out.details = Some(json!({"truncation": {"truncated": true}}));
        assert!(!OutputLimit::default().bound(&mut out));
        assert_eq!(out.text(), text);
    }

    #[test]
    fn the_window_lowers_the_limit() {
        let limit = OutputLimit::default().for_window(8_192);
        assert_eq!(limit.max_bytes, 8_192);
        assert_eq!(OutputLimit::default().for_window(0), OutputLimit::default());
        assert_eq!(
            OutputLimit::default().for_window(1_000_000),
            OutputLimit::default()
        );
    }

    #[test]
    fn huge_details_are_replaced_by_a_note() {
        let mut out = output("ok");
        out.details = Some(json!({"blob": "y".repeat(MAX_DETAILS_BYTES + 1)}));
        OutputLimit::default().bound(&mut out);
        assert!(
            out.details.unwrap()["omitted"]
                .as_str()
                .unwrap()
                .contains("dropped")
        );
    }

    #[test]
    fn settings_override_the_defaults() {
        let settings = crate::settings::Settings::from_value(
            json!({"toolResults": {"maxBytes": 1000, "maxLines": 0}}),
        );
        let limit = limit_from_settings(&settings);
        assert_eq!(limit.max_bytes, 1000);
        assert_eq!(limit.max_lines, DEFAULT_MAX_LINES);
    }
}
