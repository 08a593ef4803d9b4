//! Text utilities shared by pith and its plugins: pi's output truncation (head or tail,
//! 2,000 lines / 50 KB), sizes as pi prints them, and cleaning terminal output.

use serde::Serialize;

/// pi's default line limit.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// pi's default byte limit (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// The result of a truncation, in pi's shape (it appears as `details.truncation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// What was kept.
    pub content: String,
    /// True when something was cut.
    pub truncated: bool,
    /// Which limit cut it.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the input (a trailing newline counts as an empty last line, as in pi).
    pub total_lines: usize,
    /// Bytes in the input.
    pub total_bytes: usize,
    /// Lines kept.
    pub output_lines: usize,
    /// Bytes kept.
    pub output_bytes: usize,
    /// True when only the end of the last line was kept.
    pub last_line_partial: bool,
    /// True when the first line alone is over the byte limit (head truncation).
    pub first_line_exceeds_limit: bool,
    /// The line limit.
    pub max_lines: usize,
    /// The byte limit.
    pub max_bytes: usize,
}

impl Truncation {
    fn whole(content: &str, max_lines: usize, max_bytes: usize, lines: usize) -> Truncation {
        Truncation {
            content: content.to_string(),
            truncated: false,
            truncated_by: None,
            total_lines: lines,
            total_bytes: content.len(),
            output_lines: lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }
}

/// Keeps whole lines from the start while they fit both limits.
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= max_lines && content.len() <= max_bytes {
        return Truncation::whole(content, max_lines, max_bytes, lines.len());
    }
    let mut result = Truncation::whole("", max_lines, max_bytes, lines.len());
    result.total_bytes = content.len();
    result.truncated = true;
    if lines[0].len() > max_bytes {
        result.first_line_exceeds_limit = true;
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.output_lines = 0;
        result.output_bytes = 0;
        return result;
    }
    let (kept, by) = fit_lines(lines.iter(), max_lines, max_bytes);
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// The lines of `content` as pi counts them (`splitLinesForCounting`): none for an empty text,
/// and a final newline ends the last line rather than starting an empty one.
fn lines_for_counting(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// Keeps whole lines from the end while they fit; when the last line alone is too long, keeps
/// its last `max_bytes` bytes (at a character boundary). Lines are counted as pi counts them
/// (a final newline is no line of its own).
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines: Vec<&str> = lines_for_counting(content);
    if lines.len() <= max_lines && content.len() <= max_bytes {
        return Truncation::whole(content, max_lines, max_bytes, lines.len());
    }
    let mut result = Truncation::whole("", max_lines, max_bytes, lines.len());
    result.total_bytes = content.len();
    result.truncated = true;
    let last = lines[lines.len() - 1];
    if last.len() > max_bytes {
        let mut start = last.len() - max_bytes;
        while !last.is_char_boundary(start) {
            start += 1;
        }
        result.content = last[start..].to_string();
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.last_line_partial = true;
        result.output_lines = 1;
        result.output_bytes = result.content.len();
        return result;
    }
    let (kept, by) = fit_lines(lines.iter().rev(), max_lines, max_bytes);
    result.content = lines[lines.len() - kept..].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// How many whole lines, taken in order, fit both limits (each line after the first costs its
/// joining newline too), and which limit stopped the count.
fn fit_lines<'a>(
    lines: impl Iterator<Item = &'a &'a str>,
    max_lines: usize,
    max_bytes: usize,
) -> (usize, TruncatedBy) {
    let mut bytes = 0;
    let mut kept = 0;
    for (i, line) in lines.enumerate() {
        if kept >= max_lines {
            return (kept, TruncatedBy::Lines);
        }
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > max_bytes {
            return (kept, TruncatedBy::Bytes);
        }
        bytes += cost;
        kept += 1;
    }
    (kept, TruncatedBy::Lines)
}

/// A size as pi prints it: `512B`, `50.0KB`, `1.2MB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Removes ANSI escape sequences (CSI, OSC and two-byte escapes).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' && c != '\u{9b}' {
            out.push(c);
            continue;
        }
        let csi = c == '\u{9b}' || chars.peek() == Some(&'[');
        if c == '\u{1b}' && csi {
            chars.next();
        }
        if csi {
            // Parameters and intermediates, then one final byte in @..~.
            for next in chars.by_ref() {
                if ('@'..='~').contains(&next) {
                    break;
                }
            }
        } else if chars.peek() == Some(&']') {
            chars.next();
            // OSC: until BEL or ESC \.
            while let Some(next) = chars.next() {
                if next == '\u{7}' {
                    break;
                }
                if next == '\u{1b}' && chars.peek() == Some(&'\\') {
                    chars.next();
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

/// Drops control characters other than tab, newline and carriage return, and U+FFF9–U+FFFB,
/// as pi does to terminal output.
pub fn sanitize_binary(text: &str) -> String {
    text.chars()
        .filter(|c| {
            !((*c < ' ' && !matches!(c, '\t' | '\n' | '\r'))
                || ('\u{fff9}'..='\u{fffb}').contains(c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_truncation_under_the_limits() {
        let t = truncate_tail("a\nb\n", 2000, 100);
        assert!(!t.truncated);
        assert_eq!(t.total_lines, 2);
        assert_eq!(t.content, "a\nb\n");
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text = (1..=10)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let t = truncate_tail(&text, 3, 1000);
        assert_eq!(t.content, "8\n9\n10");
        assert_eq!(
            (t.truncated, t.truncated_by, t.output_lines, t.total_lines),
            (true, Some(TruncatedBy::Lines), 3, 10)
        );
        let t = truncate_tail(&text, 100, 5);
        assert_eq!(t.content, "9\n10");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        let t = truncate_tail("short\néééééé", 100, 5);
        assert!(t.last_line_partial);
        assert_eq!(t.content, "éé");
    }

    #[test]
    fn head_keeps_the_first_lines() {
        let text = (1..=10)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(truncate_head(&text, 3, 1000).content, "1\n2\n3");
        let t = truncate_head("0123456789\nx", 100, 5);
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.content, "");
    }

    #[test]
    fn sizes_and_cleaning() {
        assert_eq!(format_size(512), "512B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(3 << 20), "3.0MB");
        assert_eq!(
            strip_ansi("\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}ok"),
            "red ok"
        );
        assert_eq!(sanitize_binary("a\u{0}b\tc\u{fffa}"), "ab\tc");
    }
}
