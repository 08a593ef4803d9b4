//! Protocol profiles: which pi's frames pith writes. The engine's events and messages are in
//! pi 1.5.2's form; the `0.73` profile renders them as pi 0.73.1 wrote them (no `system`
//! message, no `agent_settled`, no `disposition`, none of the fields 1.5 added), for hosts
//! pinned to older pi. pith's own additions are sent under both.

use serde_json::{Map, Value};

use crate::agent::session::PiBehaviour;

/// A protocol profile (`--pi-protocol`, `PITH_PI_PROTOCOL`, `rpc.protocol` in settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// pi 0.73.1's frames.
    Pi073,
    /// pi 1.5.2's frames: the default.
    #[default]
    Pi15,
}

/// The versions a host may name, the default first.
pub const KNOWN: &[&str] = &["1.5", "0.73"];

impl Protocol {
    /// Parses a version: `1.5` (or `1.5.2`) and `0.73` (or `0.73.1`); the error lists the known
    /// versions.
    pub fn parse(version: &str) -> Result<Protocol, String> {
        match version.trim() {
            "1.5" | "1.5.2" | "1" => Ok(Protocol::Pi15),
            "0.73" | "0.73.1" => Ok(Protocol::Pi073),
            other => Err(format!(
                "unknown pi protocol version {other:?}: the known versions are {} (the default) and {}",
                KNOWN[0], KNOWN[1]
            )),
        }
    }

    /// The version's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Pi073 => "0.73",
            Protocol::Pi15 => "1.5",
        }
    }

    /// The engine behaviour of this profile's pi.
    pub fn behaviour(self) -> PiBehaviour {
        match self {
            Protocol::Pi073 => PiBehaviour::PI_0_73,
            Protocol::Pi15 => PiBehaviour::PI_1_5,
        }
    }

    /// Renders an event frame (in the engine's 1.5 form) for this profile; `None` when the
    /// profile has no such frame.
    pub fn event(self, mut frame: Value) -> Option<Value> {
        if self == Protocol::Pi15 {
            // pi 1.5 reports automatic compactions with `compaction_start` / `compaction_end`
            // only (their `reason` and `willRetry` say what 0.73's `auto_compaction_*` said).
            if matches!(
                frame.get("type").and_then(Value::as_str),
                Some("auto_compaction_start" | "auto_compaction_end")
            ) {
                return None;
            }
            // An answer starts `pending` (pith's engine says `stop` until it knows).
            if answer_begins(&frame) {
                frame["message"]["stopReason"] = Value::from("pending");
            }
            return Some(frame);
        }
        let kind = frame
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match kind.as_str() {
            "agent_settled"
            | "entry_appended"
            | "bash_execution_update"
            | "summarization_retry_scheduled"
            | "summarization_retry_attempt_start"
            | "summarization_retry_finished" => return None,
            _ => {}
        }
        let Some(fields) = frame.as_object_mut() else {
            return Some(frame);
        };
        match kind.as_str() {
            "agent_end" => {
                fields.remove("willRetry");
                if let Some(Value::Array(messages)) = fields.get_mut("messages") {
                    messages_073(messages);
                }
            }
            "message_start" | "message_end" => {
                let message = fields.get_mut("message")?;
                if role(message) == "system" {
                    return None;
                }
                if kind == "message_start" && role(message) == "assistant" && unfinished(message) {
                    // pi 0.73 started an answer before the provider's start was read: no
                    // response id, no usage yet.
                    if let Some(answer) = message.as_object_mut() {
                        answer.remove("responseId");
                        answer.insert("usage".into(), placeholder_usage());
                    }
                }
                message_073(message);
            }
            "turn_end" => {
                if let Some(message) = fields.get_mut("message") {
                    message_073(message);
                }
                if let Some(Value::Array(results)) = fields.get_mut("toolResults") {
                    messages_073(results);
                }
            }
            "tool_execution_end" => {
                fields.remove("durationMs");
                if let Some(Value::Object(result)) = fields.get_mut("result") {
                    result.remove("structuredContent");
                }
            }
            "compaction_end" | "auto_compaction_end" => {
                if let Some(Value::Object(result)) = fields.get_mut("result") {
                    compaction_073(result);
                }
            }
            _ => {}
        }
        Some(frame)
    }

    /// Renders a successful response's data (in the engine's 1.5 form) for this profile;
    /// `None` when the profile's response has no data.
    pub fn response_data(self, command: &str, mut data: Value) -> Option<Value> {
        if self == Protocol::Pi15 {
            return Some(data);
        }
        match command {
            "prompt" | "steer" | "follow_up" | "abort_and_prompt" | "queue_message" => return None,
            "compact" => {
                if let Some(result) = data.as_object_mut() {
                    compaction_073(result);
                }
            }
            "get_messages" => {
                if let Some(Value::Array(messages)) = data.get_mut("messages") {
                    messages_073(messages);
                }
            }
            _ => {}
        }
        Some(data)
    }
}

/// True for the `message_start` of an answer still streaming (an answer that failed before it
/// started is sent whole: its `message_start` has its end already).
fn answer_begins(frame: &Value) -> bool {
    frame["type"] == "message_start"
        && role(&frame["message"]) == "assistant"
        && unfinished(&frame["message"])
}

/// True for an answer that has not ended (only an ended one has its duration).
fn unfinished(message: &Value) -> bool {
    message.get("durationMs").is_none()
}

fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// A list of messages as pi 0.73.1 had them: without `system` messages.
fn messages_073(messages: &mut Vec<Value>) {
    messages.retain(|m| role(m) != "system");
    messages.iter_mut().for_each(message_073);
}

/// One message without the fields pi 1.5 added.
fn message_073(message: &mut Value) {
    let assistant = role(message) == "assistant";
    let Some(fields) = message.as_object_mut() else {
        return;
    };
    fields.remove("durationMs");
    if assistant {
        fields.remove("rawStopReason");
        fields.remove("thinkingLevel");
        if let Some(Value::Object(usage)) = fields.get_mut("usage") {
            usage_073(usage);
        }
    }
}

fn usage_073(usage: &mut Map<String, Value>) {
    usage.remove("cacheWrite1h");
    usage.remove("reasoning");
    if let Some(Value::Object(cost)) = usage.get_mut("cost") {
        cost.remove("totalFromProvider");
    }
}

/// The usage of an answer before any was reported.
fn placeholder_usage() -> Value {
    serde_json::to_value(crate::agent::conversation::message::Usage::default())
        .unwrap_or(Value::Null)
}

fn compaction_073(result: &mut Map<String, Value>) {
    result.remove("estimatedTokensAfter");
    result.remove("usage");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_parse_and_unknown_ones_are_listed() {
        assert_eq!(Protocol::parse("1.5"), Ok(Protocol::Pi15));
        assert_eq!(Protocol::parse("0.73.1"), Ok(Protocol::Pi073));
        assert_eq!(
            Protocol::parse("0.9").unwrap_err(),
            "unknown pi protocol version \"0.9\": the known versions are 1.5 (the default) and 0.73"
        );
    }

    #[test]
    fn the_073_profile_drops_what_1_5_added() {
        let end = json!({"type": "agent_end", "messages": [
            {"role": "system", "content": ""},
            {"role": "assistant", "content": [], "usage": {"input": 1, "cost": {"total": 0, "totalFromProvider": false}, "cacheWrite1h": 0}, "stopReason": "stop", "rawStopReason": "end_turn", "durationMs": 5, "thinkingLevel": "off"},
            {"role": "toolResult", "durationMs": 3, "timestamp": 1}], "willRetry": false});
        assert_eq!(
            Protocol::Pi073.event(end.clone()).unwrap(),
            json!({"type": "agent_end", "messages": [
                {"role": "assistant", "content": [], "usage": {"input": 1, "cost": {"total": 0}}, "stopReason": "stop"},
                {"role": "toolResult", "timestamp": 1}]})
        );
        assert_eq!(Protocol::Pi15.event(end.clone()), Some(end));
        assert_eq!(
            Protocol::Pi073.event(json!({"type": "agent_settled", "aborted": false})),
            None
        );
        assert_eq!(
            Protocol::Pi073.response_data("prompt", json!({"disposition": "started"})),
            None
        );
    }
}
