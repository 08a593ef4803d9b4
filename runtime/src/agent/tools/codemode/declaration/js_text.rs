//! The JavaScript behaviour that shows in pi 1.5.2's codemode declarations: how
//! `JSON.stringify` prints values (numbers as `Number#toString` prints them, integer-like keys
//! first), what `String#trim` removes, how `String#length` counts, and pi's small helpers
//! `propertyKey` and `union`.

use serde_json::Value;

/// The length of `text` as JavaScript counts it (UTF-16 code units).
pub(super) fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Whether `c` is a JavaScript line terminator (pi's `LINE_TERMINATORS`).
pub(super) fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Whether `String#trim` removes `c`: JavaScript's white space (Unicode `Zs`, tab, vertical
/// tab, form feed, U+FEFF) and line terminators. Unlike Rust's `trim`, U+0085 stays.
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}'
            | '\u{c}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    ) || ('\u{2000}'..='\u{200a}').contains(&c)
        || is_line_terminator(c)
}

/// JavaScript's `text.trim()`.
pub(super) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// pi's `IDENTIFIER` test: an ASCII JavaScript identifier.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// pi's `propertyKey`: a member name as is when it is an identifier, else as a JSON string.
pub(super) fn property_key(name: &str) -> String {
    if is_identifier(name) {
        name.to_string()
    } else {
        json_string(name)
    }
}

/// pi's `union`: the types without repeats, joined with ` | `; `unknown` if one is, `never`
/// if there are none.
pub(super) fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::with_capacity(types.len());
    for kind in types {
        if !unique.contains(&kind) {
            unique.push(kind);
        }
    }
    if unique.iter().any(|kind| kind == "unknown") {
        "unknown".into()
    } else if unique.is_empty() {
        "never".into()
    } else {
        unique.join(" | ")
    }
}

/// JavaScript's `Number#toString` (and `JSON.stringify` of a finite number): the shortest
/// digits that read back as `value`, in plain notation from 1e-6 up to below 1e21, else as
/// `1.5e+21`; `-0` prints as `0`.
pub(super) fn js_number(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value == 0.0 {
        return "0".into();
    }
    if value.is_infinite() {
        let infinity = if value > 0.0 { "Infinity" } else { "-Infinity" };
        return infinity.into();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-tripping digits, like JavaScript: `1.2345e-7`.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    // As in ECMA-262 `Number::toString`: `k` digits, the point after `n` of them.
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!(
            "{digits}{}",
            "0".repeat(usize::try_from(n - k).unwrap_or(0))
        )
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{whole}.{fraction}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-n).unwrap_or(0)))
    } else {
        let power = n - 1;
        let power_sign = if power < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{power_sign}{}", power.abs())
        } else {
            format!("{first}.{rest}e{power_sign}{}", power.abs())
        }
    };
    format!("{sign}{body}")
}

/// `JSON.stringify` of a string (serde_json escapes exactly the characters JavaScript does,
/// with the same lower-case `\u00XX` escapes).
fn json_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// The array index a key is, when it is one (`"0"`, `"17"`, below 2^32 - 1, no leading zero):
/// JavaScript lists such keys of an object first, in numeric order.
fn array_index(key: &str) -> Option<u32> {
    if key.is_empty()
        || key.len() > 10
        || !key.bytes().all(|b| b.is_ascii_digit())
        || (key.len() > 1 && key.starts_with('0'))
    {
        return None;
    }
    let index: u64 = key.parse().ok()?;
    u32::try_from(index).ok().filter(|index| *index != u32::MAX)
}

/// `JSON.stringify(value)`: compact, numbers as JavaScript prints them, object keys in
/// JavaScript's order (array indices ascending, then the rest as they come).
pub(super) fn js_stringify(value: &Value) -> String {
    let mut text = String::new();
    write_json(value, &mut text);
    text
}

/// Appends `JSON.stringify(value)` to `text`.
fn write_json(value: &Value, text: &mut String) {
    match value {
        Value::Null => text.push_str("null"),
        Value::Bool(flag) => text.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => match number.as_f64() {
            Some(n) if n.is_finite() => text.push_str(&js_number(n)),
            _ => text.push_str("null"),
        },
        Value::String(string) => text.push_str(&json_string(string)),
        Value::Array(items) => {
            text.push('[');
            for (at, item) in items.iter().enumerate() {
                if at > 0 {
                    text.push(',');
                }
                write_json(item, text);
            }
            text.push(']');
        }
        Value::Object(object) => {
            let mut indexed: Vec<(u32, &String, &Value)> = Vec::new();
            let mut named: Vec<(&String, &Value)> = Vec::new();
            for (key, item) in object {
                match array_index(key) {
                    Some(index) => indexed.push((index, key, item)),
                    None => named.push((key, item)),
                }
            }
            indexed.sort_by_key(|(index, _, _)| *index);
            let ordered = indexed
                .into_iter()
                .map(|(_, key, item)| (key, item))
                .chain(named);
            text.push('{');
            for (at, (key, item)) in ordered.enumerate() {
                if at > 0 {
                    text.push(',');
                }
                text.push_str(&json_string(key));
                text.push(':');
                write_json(item, text);
            }
            text.push('}');
        }
    }
}
