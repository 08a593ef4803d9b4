//! A codemode script's source as pi 1.5.2 reads it: an optional first line
//! `// @options: {"max_output_tokens": …, "timeout_ms": …}` and the JavaScript after it.

use serde_json::Value;

/// The options line's prefix.
const OPTIONS_PREFIX: &str = "// @options:";

/// A script and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSource {
    /// The JavaScript (line numbers kept: the options line stays as an empty line).
    pub code: String,
    /// `max_output_tokens`.
    pub max_output_tokens: Option<u64>,
    /// `timeout_ms`.
    pub timeout_ms: Option<u64>,
}

/// pi's `parseCodemodeSource`.
pub fn parse_source(input: &str) -> Result<ScriptSource, String> {
    if input.trim().is_empty() {
        return Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into());
    }
    let lines: Vec<&str> = input.split('\n').collect();
    if let Some(misplaced) = lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.trim_start().starts_with(OPTIONS_PREFIX))
        .map(|(index, _)| index)
    {
        return Err(format!(
            "The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {}",
            misplaced + 1
        ));
    }
    let first = lines[0].strip_suffix('\r').unwrap_or(lines[0]).trim_start();
    let Some(options) = first.strip_prefix(OPTIONS_PREFIX) else {
        return Ok(ScriptSource {
            code: input.to_string(),
            max_output_tokens: None,
            timeout_ms: None,
        });
    };
    let code = input.find('\n').map_or("", |at| &input[at..]);
    if code.trim().is_empty() {
        return Err(
            "The @options line must be followed by JavaScript source on subsequent lines".into(),
        );
    }
    let options: Value = serde_json::from_str(options.trim())
        .map_err(|err| format!("Invalid @options JSON: {err}"))?;
    let Value::Object(options) = options else {
        return Err("@options must be a JSON object".into());
    };
    let mut source = ScriptSource {
        code: code.to_string(),
        max_output_tokens: None,
        timeout_ms: None,
    };
    for (key, value) in &options {
        let number = value
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0 && n.fract() == 0.0)
            .map(|n| n as u64);
        match key.as_str() {
            "max_output_tokens" => {
                source.max_output_tokens = Some(number.ok_or_else(|| {
                    "@options max_output_tokens must be a positive integer".to_string()
                })?)
            }
            "timeout_ms" => {
                source.timeout_ms =
                    Some(number.ok_or_else(|| {
                        "@options timeout_ms must be a positive integer".to_string()
                    })?)
            }
            other => return Err(format!("Unknown @options key \"{other}\"")),
        }
    }
    Ok(source)
}
