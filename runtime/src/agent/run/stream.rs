//! Assembles an assistant message from a provider's stream events and turns each into the
//! `message_start` / `message_update` events of the answer. The snapshots are taken at the event
//! (pi serializes them later, so its frames can already hold later deltas and leak in-progress
//! fields such as `index` and `partialJson`; pith's are exact).

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::agent::conversation::message::{
    AssistantBlock, AssistantMessage, Cost, StopReason, Usage,
};
use crate::agent::event::{UpdateKind, UpdatePayload};
use crate::agent::model::Model;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::provider::StreamEvent;

/// What one stream event produced.
#[derive(Debug)]
pub enum Produced {
    /// Nothing to emit.
    Nothing,
    /// The stream started: emit `message_start` with this snapshot.
    Started(Box<AssistantMessage>),
    /// A content event: emit a `message_update` for the block at `index`
    /// ([`StreamAssembler::message`] is the answer after it).
    Update {
        /// What changed.
        kind: UpdateKind,
        /// The block.
        index: usize,
        /// What the update carries.
        payload: UpdatePayload,
    },
    /// The stream ended (done or error).
    Finished,
}

/// Builds the assistant message of one response.
pub struct StreamAssembler {
    message: AssistantMessage,
    model: Model,
    /// Provider block index → position in `content`.
    positions: HashMap<u32, usize>,
    /// Tool-call argument JSON received so far, by position.
    partial_json: HashMap<usize, String>,
    started: bool,
    finished: bool,
}

impl StreamAssembler {
    /// Starts an empty answer from `model`.
    pub fn new(model: &Model) -> StreamAssembler {
        StreamAssembler {
            message: AssistantMessage::empty(&model.api, &model.provider, &model.id),
            model: model.clone(),
            positions: HashMap::new(),
            partial_json: HashMap::new(),
            started: false,
            finished: false,
        }
    }

    /// True once `message_start` was produced.
    pub fn started(&self) -> bool {
        self.started
    }

    /// True once the stream ended.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The message so far.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// Ends the message as failed (`error`) or aborted, keeping what arrived.
    pub fn fail(&mut self, reason: StopReason, error: String) -> AssistantMessage {
        self.message.stop_reason = reason;
        self.message.error_message = Some(error);
        self.finished = true;
        self.message.clone()
    }

    /// Takes the finished message.
    pub fn finish(self) -> AssistantMessage {
        self.message
    }

    /// Starts the message if the provider skipped `start`; returns the `message_start` snapshot.
    pub fn ensure_started(&mut self) -> Option<AssistantMessage> {
        if self.started {
            return None;
        }
        self.started = true;
        Some(self.message.clone())
    }

    fn update(kind: UpdateKind, index: usize, payload: UpdatePayload) -> Produced {
        Produced::Update {
            kind,
            index,
            payload,
        }
    }

    fn open(&mut self, index: u32, block: AssistantBlock) -> usize {
        let position = self.message.content.len();
        self.message.content.push(block);
        self.positions.insert(index, position);
        position
    }

    fn position(&mut self, index: u32, make: impl FnOnce() -> AssistantBlock) -> usize {
        match self.positions.get(&index) {
            Some(position) => *position,
            None => self.open(index, make()),
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, event: StreamEvent) -> Produced {
        if self.finished {
            return Produced::Nothing;
        }
        match event {
            // The snapshot holds what the provider knew when it started (a response id and
            // first usage it reported before `start`).
            StreamEvent::Start => match self.ensure_started() {
                Some(snapshot) => Produced::Started(Box::new(snapshot)),
                None => Produced::Nothing,
            },
            StreamEvent::ResponseId(id) => {
                self.message.response_id = Some(id);
                Produced::Nothing
            }
            StreamEvent::Usage(usage) => {
                self.message.usage = usage_with_cost(&usage, &self.model);
                Produced::Nothing
            }
            StreamEvent::TextStart(start) => {
                let position = self.open(
                    start.index,
                    AssistantBlock::Text {
                        text: String::new(),
                        signature: None,
                    },
                );
                Self::update(UpdateKind::TextStart, position, UpdatePayload::None)
            }
            StreamEvent::TextDelta(delta) => {
                let position = self.position(delta.index, || AssistantBlock::Text {
                    text: String::new(),
                    signature: None,
                });
                if let Some(AssistantBlock::Text { text, .. }) =
                    self.message.content.get_mut(position)
                {
                    text.push_str(&delta.delta);
                }
                Self::update(
                    UpdateKind::TextDelta,
                    position,
                    UpdatePayload::Delta(delta.delta),
                )
            }
            StreamEvent::TextEnd(end) => {
                let position = self.position(end.index, || AssistantBlock::Text {
                    text: String::new(),
                    signature: None,
                });
                if let Some(AssistantBlock::Text { text, signature }) =
                    self.message.content.get_mut(position)
                {
                    *text = end.text.clone();
                    *signature = end.signature;
                }
                Self::update(
                    UpdateKind::TextEnd,
                    position,
                    UpdatePayload::Content(end.text),
                )
            }
            StreamEvent::ThinkingStart(start) => {
                let position = self.open(start.index, empty_thinking());
                Self::update(UpdateKind::ThinkingStart, position, UpdatePayload::None)
            }
            StreamEvent::ThinkingDelta(delta) => {
                let position = self.position(delta.index, empty_thinking);
                if let Some(AssistantBlock::Thinking { thinking, .. }) =
                    self.message.content.get_mut(position)
                {
                    thinking.push_str(&delta.delta);
                }
                Self::update(
                    UpdateKind::ThinkingDelta,
                    position,
                    UpdatePayload::Delta(delta.delta),
                )
            }
            StreamEvent::ThinkingEnd(end) => {
                let position = self.position(end.index, empty_thinking);
                let content = end.block.thinking.clone();
                if let Some(block) = self.message.content.get_mut(position) {
                    *block = AssistantBlock::Thinking {
                        thinking: end.block.thinking,
                        signature: end.block.signature,
                        redacted: end.block.redacted,
                    };
                }
                Self::update(
                    UpdateKind::ThinkingEnd,
                    position,
                    UpdatePayload::Content(content),
                )
            }
            StreamEvent::ToolcallStart(start) => {
                let block = AssistantBlock::ToolCall {
                    id: start.id,
                    name: start.name,
                    arguments: json!({}),
                    thought_signature: None,
                };
                let position = self.open(start.index, block);
                self.partial_json.insert(position, String::new());
                Self::update(UpdateKind::ToolcallStart, position, UpdatePayload::None)
            }
            StreamEvent::ToolcallDelta(delta) => {
                let position = self.position(delta.index, || AssistantBlock::ToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: json!({}),
                    thought_signature: None,
                });
                let buffer = self.partial_json.entry(position).or_default();
                buffer.push_str(&delta.delta);
                let parsed = parse_streaming_json(buffer);
                if let Some(AssistantBlock::ToolCall { arguments, .. }) =
                    self.message.content.get_mut(position)
                {
                    *arguments = parsed;
                }
                Self::update(
                    UpdateKind::ToolcallDelta,
                    position,
                    UpdatePayload::Delta(delta.delta),
                )
            }
            StreamEvent::ToolcallEnd(end) => {
                let position = self.position(end.index, || AssistantBlock::ToolCall {
                    id: String::new(),
                    name: String::new(),
                    arguments: json!({}),
                    thought_signature: None,
                });
                self.partial_json.remove(&position);
                let arguments = parse_streaming_json(&end.call.arguments);
                let block = AssistantBlock::ToolCall {
                    id: end.call.id,
                    name: end.call.name,
                    arguments,
                    thought_signature: end.call.thought_signature,
                };
                if let Some(slot) = self.message.content.get_mut(position) {
                    *slot = block;
                }
                Self::update(UpdateKind::ToolcallEnd, position, UpdatePayload::ToolCall)
            }
            StreamEvent::Done(reason) => {
                self.message.stop_reason = stop_reason(reason);
                if self.message.stop_reason == StopReason::Stop
                    && self.message.tool_calls().next().is_some()
                {
                    self.message.stop_reason = StopReason::ToolUse;
                }
                self.finished = true;
                Produced::Finished
            }
            StreamEvent::Error(message) => {
                self.fail(StopReason::Error, message);
                Produced::Finished
            }
        }
    }
}

fn empty_thinking() -> AssistantBlock {
    AssistantBlock::Thinking {
        thinking: String::new(),
        signature: None,
        redacted: false,
    }
}

fn stop_reason(reason: wit::StopReason) -> StopReason {
    match reason {
        wit::StopReason::Stop => StopReason::Stop,
        wit::StopReason::Length => StopReason::Length,
        wit::StopReason::ToolUse => StopReason::ToolUse,
        wit::StopReason::Error => StopReason::Error,
        wit::StopReason::Aborted => StopReason::Aborted,
    }
}

/// Token counts with their cost at the model's prices (dollars per million tokens).
pub fn usage_with_cost(usage: &wit::Usage, model: &Model) -> Usage {
    let price = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
    let (input, output, cache_read, cache_write) = model
        .cost
        .rates_for(usage.input + usage.cache_read + usage.cache_write);
    let cost = Cost {
        input: price(usage.input, input),
        output: price(usage.output, output),
        cache_read: price(usage.cache_read, cache_read),
        cache_write: price(usage.cache_write, cache_write),
        total: 0.0,
        total_from_provider: Some(false),
    };
    Usage {
        cost: Cost {
            total: cost.input + cost.output + cost.cache_read + cost.cache_write,
            ..cost
        },
        cache_write_1h: (model.api == "anthropic-messages").then_some(0),
        reasoning: model.api.starts_with("openai").then_some(0),
        ..unpriced(usage)
    }
}

/// Token counts without a cost (no model's prices known).
pub fn unpriced(usage: &wit::Usage) -> Usage {
    Usage {
        input: usage.input,
        output: usage.output,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
        total_tokens: usage.input + usage.output + usage.cache_read + usage.cache_write,
        ..Usage::default()
    }
}

/// The wire format's own name for `reason` (pi 1.5's `rawStopReason`); `None` for failures
/// and aborts, which have none. The provider interface reports pi's reason, so this is the
/// name the api uses for it.
pub fn raw_stop_reason(api: &str, reason: StopReason) -> Option<&'static str> {
    let anthropic = api.starts_with("anthropic");
    let google = api.starts_with("google");
    let responses = api == "openai-responses" || api == "openai-codex-responses";
    Some(match reason {
        StopReason::Error | StopReason::Aborted => return None,
        _ if responses => "completed",
        StopReason::Stop if anthropic => "end_turn",
        StopReason::Stop if google => "STOP",
        StopReason::Stop => "stop",
        StopReason::Length if anthropic => "max_tokens",
        StopReason::Length if google => "MAX_TOKENS",
        StopReason::Length => "length",
        StopReason::ToolUse if anthropic => "tool_use",
        StopReason::ToolUse if google => "STOP",
        StopReason::ToolUse => "tool_calls",
    })
}

/// Parses tool-call JSON that may still be arriving: complete JSON as is; otherwise the text
/// closed as far as it goes (open strings, arrays and objects closed, a dangling key or comma
/// dropped); `{}` when nothing sensible remains.
pub fn parse_streaming_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    let mut closers = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => closers.push('}'),
            '[' => closers.push(']'),
            '}' | ']' => {
                closers.pop();
            }
            _ => {}
        }
    }
    let mut repaired = text.to_string();
    if in_string {
        if escaped {
            repaired.pop();
        }
        repaired.push('"');
    }
    for attempt in 0..3 {
        let mut candidate = repaired.trim_end().to_string();
        if candidate.ends_with(',') {
            candidate.pop();
        }
        if candidate.ends_with(':') {
            candidate.push_str("null");
        }
        for closer in closers.iter().rev() {
            candidate.push(*closer);
        }
        if let Ok(value) = serde_json::from_str(&candidate) {
            return value;
        }
        // Drop the last incomplete member and try again.
        match repaired.rfind([',', '{', '[']) {
            Some(cut) if attempt < 2 => {
                let keep = if repaired.as_bytes()[cut] == b',' {
                    cut
                } else {
                    cut + 1
                };
                repaired.truncate(keep);
            }
            _ => break,
        }
    }
    json!({})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_json_closes_what_is_open() {
        assert_eq!(
            parse_streaming_json(r#"{"command": "ec"#),
            json!({"command": "ec"})
        );
        assert_eq!(
            parse_streaming_json(r#"{"a": 1, "b": [1, 2"#),
            json!({"a": 1, "b": [1, 2]})
        );
        assert_eq!(parse_streaming_json(r#"{"a": 1, "#), json!({"a": 1}));
        assert_eq!(parse_streaming_json(r#"{"a": "#), json!({"a": null}));
        assert_eq!(parse_streaming_json(""), json!({}));
        assert_eq!(
            parse_streaming_json(r#"{"command": "echo hi"}"#),
            json!({"command": "echo hi"})
        );
    }
}
