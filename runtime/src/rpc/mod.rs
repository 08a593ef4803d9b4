//! The stdio RPC mode: framing, the single stdout writer, command dispatch and response
//! envelopes. Every response echoes the request's `id`, errors included.

pub mod framing;
pub mod writer;

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::plugin_host::PluginHost;
use framing::{Line, LineReader};
use writer::FrameSink;

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

/// Serves the protocol on stdin/stdout until stdin closes.
pub async fn serve(host: PluginHost) -> ExitCode {
    let (sink, writer) = writer::spawn(tokio::io::stdout());
    let mut reader = LineReader::new(tokio::io::stdin());
    let _host = host;
    loop {
        match reader.next_line().await {
            Ok(Some(line)) => handle_line(&sink, line),
            Ok(None) => break,
            Err(err) => {
                tracing::error!("reading stdin failed: {err}");
                break;
            }
        }
    }
    drop(sink);
    let _ = writer.await;
    ExitCode::SUCCESS
}

fn parse_error(sink: &FrameSink, message: String) {
    sink.send(&response(
        None,
        "parse",
        Err(format!("Failed to parse command: {message}")),
    ));
}

fn handle_line(sink: &FrameSink, line: Line) {
    let text = match line {
        Line::Text(text) => text,
        Line::InvalidUtf8 => return parse_error(sink, "the line is not valid UTF-8".into()),
        Line::TooLong(len) => {
            return parse_error(
                sink,
                format!(
                    "the line is {len} bytes, over the {} byte limit",
                    framing::MAX_LINE
                ),
            );
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(err) => return parse_error(sink, err.to_string()),
    };
    let Value::Object(command) = value else {
        return parse_error(
            sink,
            format!("expected a JSON object, got {}", kind_of(&value)),
        );
    };
    let id = command.get("id");
    let kind = command
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("undefined");
    sink.send(&response(id, kind, Err(format!("Unknown command: {kind}"))));
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
