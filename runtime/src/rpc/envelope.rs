//! The protocol's envelopes: a line read as a command frame (a JSON object), and the response
//! frame that answers a command, echoing its `id`.

use serde_json::{Map, Value, json};

use super::fields;
use super::framing::{self, Line};
use super::recover;

/// A response frame: `{"id"?, "type":"response", "command", "success", "data"? | "error"}`.
pub fn response(id: Option<&Value>, command: &str, result: Result<Option<Value>, String>) -> Value {
    let mut frame = Map::new();
    if let Some(id) = id {
        frame.insert("id".into(), id.clone());
    }
    frame.insert("type".into(), json!("response"));
    frame.insert("command".into(), json!(command));
    match result {
        Ok(data) => {
            frame.insert("success".into(), json!(true));
            if let Some(data) = data {
                frame.insert("data".into(), data);
            }
        }
        Err(error) => {
            frame.insert("success".into(), json!(false));
            frame.insert("error".into(), json!(error));
        }
    }
    Value::Object(frame)
}

/// The response to a line that is not a command; `id` is the line's top-level id when it
/// could be read.
pub(crate) fn parse_error_frame(id: Option<&Value>, message: &str) -> Value {
    response(
        id,
        "parse",
        Err(format!("Failed to parse command: {message}")),
    )
}

/// A line read as a command frame (a JSON object), or why not with the line's top-level id
/// when it could be read.
pub(crate) fn parse_frame(line: Line) -> Result<Map<String, Value>, (Option<Value>, String)> {
    let text = match line {
        Line::Text(text) => text,
        Line::InvalidUtf8 => return Err((None, "the line is not valid UTF-8".into())),
        Line::TooLong(len, head) => {
            let id = recover::top_level_id(&String::from_utf8_lossy(&head));
            return Err((
                id,
                format!(
                    "the line is {len} bytes, over the {} byte limit",
                    framing::MAX_LINE
                ),
            ));
        }
    };
    if text.trim().is_empty() {
        return Err((None, "empty line".into()));
    }
    let parsed = serde_json::from_str::<Value>(&text).or_else(|err| {
        // A lone surrogate escape (a string cut inside an emoji) is read as U+FFFD, as
        // JavaScript's JSON.parse reads it into a string.
        match recover::repair_lone_surrogates(&text) {
            Some(repaired) => serde_json::from_str(&repaired).map_err(|_| err),
            None => Err(err),
        }
    });
    match parsed {
        Ok(Value::Object(frame)) => Ok(frame),
        Ok(other) => Err((
            None,
            format!("expected a JSON object, got {}", fields::kind(&other)),
        )),
        Err(err) => Err((recover::top_level_id(&text), err.to_string())),
    }
}
