//! A codemode script's source as pi 1.5.2 reads it (`parseCodemodeSource`, `parseOptions`): an
//! optional first line `// @options: {"max_output_tokens": …, "timeout_ms": …}`, then the
//! JavaScript. Errors are pi's `CodemodeSourceError` messages, word for word; a bad options
//! JSON's message ends with the `SyntaxError` message node 22's `JSON.parse` gives (see
//! `json_parse`).

mod json_parse;
#[cfg(test)]
mod json_tests;
#[cfg(test)]
mod tests;

use json_parse::Parsed;

/// pi's `CODEMODE_OPTIONS_PREFIX`: how the options line starts (after white space).
pub const OPTIONS_PREFIX: &str = "// @options:";
/// pi's `SUPPORTED_FIELDS`: the options there are.
const SUPPORTED_FIELDS: [&str; 2] = ["max_output_tokens", "timeout_ms"];
/// pi's `SUPPORTED_FIELDS_TEXT`.
const SUPPORTED_FIELDS_TEXT: &str = "`max_output_tokens` and `timeout_ms`";
/// The largest `timeout_ms` (2^31 - 1, what a JavaScript timer takes).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;
/// JavaScript's `Number.MAX_SAFE_INTEGER` (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// pi's `CODEMODE_SOURCE_GRAMMAR`: the Lark grammar of the tool's input, offered to models that
/// take grammar tools (`compat.supportsOpenAIGrammarTools`) so they write the script raw rather
/// than as an escaped JSON string.
pub const SOURCE_GRAMMAR: &str = r"
start: options_source | plain_source
options_source: OPTIONS_LINE NEWLINE SOURCE
plain_source: SOURCE

OPTIONS_LINE: /[ \t]*\/\/ @options:[^\r\n]*/
NEWLINE: /\r?\n/
SOURCE: /[\s\S]+/
";

/// The tool's constrained-sampling request (pi's `constrainedSampling`): the source grammar.
pub fn constrained_sampling() -> serde_json::Value {
    serde_json::json!({"type": "grammar", "variants": {"openai_lark": SOURCE_GRAMMAR}})
}

/// A script and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSource {
    /// The JavaScript. After an options line it starts with that line's line break, so line
    /// numbers stay those of the input; without one it is the input as it is.
    pub code: String,
    /// `max_output_tokens`: a non-negative safe integer (0 included).
    pub max_output_tokens: Option<u64>,
    /// `timeout_ms`: 1 to 2147483647.
    pub timeout_ms: Option<u64>,
}

/// Whether JavaScript's `trim` removes `c` (Unicode `Zs`, tab, vertical tab, form feed,
/// U+FEFF and the line terminators; not U+0085, which Rust's `trim` removes).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    ) || ('\u{2000}'..='\u{200a}').contains(&c)
}

/// JavaScript's `text.trim()`.
fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// JavaScript's `text.trimStart()`.
fn js_trim_start(text: &str) -> &str {
    text.trim_start_matches(is_js_whitespace)
}

/// pi's `parseCodemodeSource`: the script in `input` and its options, or pi's error message.
///
/// The input must have more than white space; an options line may only be the first line
/// (white space before it allowed), and must be followed by JavaScript.
pub fn parse_source(input: &str) -> Result<ScriptSource, String> {
    if js_trim(input).is_empty() {
        return Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into());
    }
    if let Some(misplaced) = input
        .split('\n')
        .skip(1)
        .position(|line| js_trim_start(line).starts_with(OPTIONS_PREFIX))
    {
        return Err(format!(
            "The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {}",
            misplaced + 2
        ));
    }
    let newline = input.find('\n');
    let first_line = newline.map_or(input, |at| &input[..at]);
    let first_line = js_trim_start(first_line.strip_suffix('\r').unwrap_or(first_line));
    let Some(directive) = first_line.strip_prefix(OPTIONS_PREFIX) else {
        return Ok(ScriptSource {
            code: input.to_string(),
            max_output_tokens: None,
            timeout_ms: None,
        });
    };
    let code = newline.map_or("", |at| &input[at..]);
    if js_trim(code).is_empty() {
        return Err(
            "The @options line must be followed by JavaScript source on subsequent lines".into(),
        );
    }
    let (max_output_tokens, timeout_ms) = parse_options(js_trim(directive))?;
    Ok(ScriptSource {
        code: code.to_string(),
        max_output_tokens,
        timeout_ms,
    })
}

/// Whether `value` is what pi's `isSafeInteger` accepts: an integer from 0 (or `-0`) to 2^53 - 1.
fn is_safe_integer(value: f64) -> bool {
    value.is_finite() && value.trunc() == value && value.abs() <= MAX_SAFE_INTEGER && value >= 0.0
}

/// pi's `parseOptions`: `max_output_tokens` and `timeout_ms` from the options line's JSON.
fn parse_options(directive: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let not_an_object =
        || format!("@options must be a JSON object with supported fields {SUPPORTED_FIELDS_TEXT}");
    if directive.is_empty() {
        return Err(not_an_object());
    }
    let parsed = json_parse::parse(directive).map_err(|error| {
        format!(
            "@options must be valid JSON with supported fields {SUPPORTED_FIELDS_TEXT}: {error}"
        )
    })?;
    let Parsed::Object(fields) = parsed else {
        return Err(not_an_object());
    };
    if let Some((key, _)) = fields
        .iter()
        .find(|(key, _)| !SUPPORTED_FIELDS.contains(&key.as_str()))
    {
        return Err(format!(
            "@options only supports {SUPPORTED_FIELDS_TEXT}; got `{key}`"
        ));
    }
    // `None`: absent; `Some(None)`: present but not a number.
    let field = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| *value)
    };
    let max_output_tokens = match field("max_output_tokens") {
        None => None,
        Some(Some(tokens)) if is_safe_integer(tokens) => Some(tokens as u64),
        Some(_) => {
            return Err(
                "@options field `max_output_tokens` must be a non-negative safe integer".into(),
            );
        }
    };
    let timeout_ms = match field("timeout_ms") {
        None => None,
        Some(Some(ms)) if is_safe_integer(ms) && ms != 0.0 && ms <= MAX_TIMEOUT_MS => {
            Some(ms as u64)
        }
        Some(_) => {
            return Err(
                "@options field `timeout_ms` must be a positive integer up to 2147483647".into(),
            );
        }
    };
    Ok((max_output_tokens, timeout_ms))
}
