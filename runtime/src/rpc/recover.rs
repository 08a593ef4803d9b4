//! Making the most of a line that does not parse: lone UTF-16 surrogate escapes (which
//! JavaScript's `JSON.stringify` writes for a string cut inside an emoji, and pi's `JSON.parse`
//! accepts) are repaired to U+FFFD, and the top-level `"id"` of a line that still fails is read
//! without parsing the rest, so the host's error response carries the id it waits on.

use serde_json::Value;

/// `text` with every lone surrogate escape (`\uD800`–`\uDFFF` not part of a valid pair)
/// replaced by `\uFFFD`; `None` when it has none.
pub fn repair_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            // Any other escape (`\\`, `\"`, …): skip both characters.
            i += 2;
            continue;
        }
        let Some(unit) = hex4(bytes, i + 2) else {
            i += 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let low = (0xDC00..0xE000).contains(&unit);
        if high {
            let paired = bytes.get(i + 6) == Some(&b'\\')
                && bytes.get(i + 7) == Some(&b'u')
                && hex4(bytes, i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next));
            if paired {
                i += 12;
                continue;
            }
        }
        if high || low {
            out.push_str(&text[copied..i]);
            out.push_str("\\uFFFD");
            i += 6;
            copied = i;
            changed = true;
            continue;
        }
        i += 6;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The four hex digits at `at`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// The value of the top-level `"id"` key of a JSON object text that may not parse as a whole
/// (too deep, a number out of range, cut short): a string or a number read where it stands.
/// When the key appears twice, the last one counts, as in `JSON.parse`.
pub fn top_level_id(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut found = None;
    let mut depth = 0usize;
    let mut i = 0;
    // Whether the string just read at depth 1 was a key named "id".
    let mut expecting_key = false;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                depth += 1;
                expecting_key = depth == 1;
                i += 1;
            }
            b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b',' => {
                expecting_key = depth == 1;
                i += 1;
            }
            b'"' => {
                // A string cut short ends the scan (a line's head kept from an overlong line).
                let Some(end) = string_end(bytes, i) else {
                    break;
                };
                if depth == 1 && expecting_key {
                    expecting_key = false;
                    let key = serde_json::from_str::<String>(&text[i..=end]).ok();
                    if key.as_deref() == Some("id")
                        && let Some(value) = value_after_colon(text, end + 1)
                    {
                        found = Some(value);
                    }
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The string or number after the `:` that follows `from`.
fn value_after_colon(text: &str, from: usize) -> Option<Value> {
    let rest = text[from..].trim_start().strip_prefix(':')?.trim_start();
    if rest.starts_with('"') {
        let end = string_end(rest.as_bytes(), 0)?;
        return serde_json::from_str(&rest[..=end]).ok();
    }
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        .collect();
    serde_json::from_str::<Value>(&number)
        .ok()
        .filter(Value::is_number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let line = r#"{"id":"1","message":"cut \ud83d","ok":"\ud83d\ude00","low":"\ude00","esc":"\\ud83d"}"#;
        let repaired = repair_lone_surrogates(line).unwrap();
        let value: Value = serde_json::from_str(&repaired).unwrap();
        assert_eq!(value["message"], "cut \u{FFFD}");
        assert_eq!(value["ok"], "😀");
        assert_eq!(value["low"], "\u{FFFD}");
        assert_eq!(value["esc"], "\\ud83d");
        assert_eq!(repair_lone_surrogates(r#"{"a":"\ud83d\ude00"}"#), None);
    }

    #[test]
    fn the_id_is_read_from_lines_that_do_not_parse() {
        let deep = format!(
            r#"{{"type":"prompt","id":"deep-1","x":{}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert_eq!(top_level_id(&deep), Some(json!("deep-1")));
        assert_eq!(top_level_id(r#"{"id": 7, "n": 1e400}"#), Some(json!(7)));
        assert_eq!(
            top_level_id(r#"{"nested":{"id":"no"},"id":"yes""#),
            Some(json!("yes"))
        );
        assert_eq!(
            top_level_id(r#"{"type":"x","message":"\"id\":\"fake\""}"#),
            None
        );
        assert_eq!(top_level_id(r#"{"a":["id","x"],"b":1}"#), None);
        assert_eq!(
            top_level_id(r#"{"i\u0064":"escaped","id":"last"}"#),
            Some(json!("last"))
        );
    }
}
