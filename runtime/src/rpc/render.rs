//! Fast rendering of `message_update` frames. A frame carries the whole partial message twice
//! (`assistantMessageEvent.partial` and `message`), so rendering it with a generic serializer
//! costs time and memory proportional to the answer so far on every delta. This renderer keeps
//! each block's JSON and the message's tail JSON cached, appends escaped deltas in place, and
//! builds each frame with a few copies: the cost per delta is a memcpy of the message.
//! pi 1.5's frames carry no snapshot, only the cumulative `usage`, kept rendered while it does
//! not change.

use serde::Serialize;
use serde_json::Value;

use crate::agent::conversation::message::{AssistantBlock, AssistantMessage, StopReason, Usage};
use crate::agent::event::{AssistantUpdate, UpdateKind, UpdatePayload};
use crate::rpc::profile::Protocol;

/// How `message_update` frames are written (`set_event_filter`'s `messageUpdates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateMode {
    /// pi 0.73's frames: the event with `partial`, and the whole `message`.
    Full,
    /// Lean frames for hosts that rebuild messages from deltas: no `partial`, and `message` is
    /// `{"role":"assistant"}`; the output grows linearly with the answer.
    Delta,
    /// pi 1.5's frames: the event (`toolcall_start` with the call's `id` and `toolName`) and the
    /// answer's cumulative `usage`, no message.
    #[default]
    Usage,
}

impl UpdateMode {
    /// The profile's frames.
    pub fn of(protocol: Protocol) -> UpdateMode {
        match protocol {
            Protocol::Pi073 => UpdateMode::Full,
            Protocol::Pi15 => UpdateMode::Usage,
        }
    }

    /// The name `set_event_filter` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateMode::Full => "full",
            UpdateMode::Delta => "delta",
            UpdateMode::Usage => "usage",
        }
    }

    /// Parses a `set_event_filter` name.
    pub fn parse(name: &str) -> Option<UpdateMode> {
        [UpdateMode::Full, UpdateMode::Delta, UpdateMode::Usage]
            .into_iter()
            .find(|mode| mode.as_str() == name)
    }
}

/// The cached JSON of an assistant message being streamed.
#[derive(Default)]
pub struct MessageRender {
    blocks: Vec<String>,
    tail: Option<String>,
    /// The cached JSON of the answer's usage (pi 1.5's frames).
    usage: Option<String>,
    /// What the cached tail was rendered from (usage, response id and stop reason change
    /// without an update of their own).
    tail_of: Option<(Usage, Option<String>, StopReason)>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Tail<'a> {
    api: &'a str,
    provider: &'a str,
    model: &'a str,
    usage: &'a Usage,
    stop_reason: StopReason,
    timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: &'a Option<String>,
}

fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// `text` escaped as the inside of a JSON string.
fn escaped(text: &str) -> String {
    let quoted = json(text);
    quoted[1..quoted.len() - 1].to_string()
}

impl MessageRender {
    /// Forgets the tail (after usage, response id or stop reason changed).
    pub fn tail_changed(&mut self) {
        self.tail = None;
        self.usage = None;
    }

    /// Re-renders block `position` from the message.
    pub fn block_changed(&mut self, message: &AssistantMessage, position: usize) {
        while self.blocks.len() < message.content.len() {
            self.blocks.push(String::new());
        }
        if let Some(block) = message.content.get(position) {
            self.blocks[position] = json(block);
        }
    }

    /// Appends `delta` to the text of a streaming text or thinking block in place, when its JSON
    /// ends with the text (no signature yet); otherwise re-renders the block.
    pub fn text_appended(&mut self, message: &AssistantMessage, position: usize, delta: &str) {
        let plain = matches!(
            message.content.get(position),
            Some(AssistantBlock::Text {
                signature: None,
                ..
            }) | Some(AssistantBlock::Thinking {
                signature: None,
                redacted: false,
                ..
            })
        );
        match self.blocks.get_mut(position) {
            Some(block) if plain && block.ends_with("\"}") => {
                block.truncate(block.len() - 2);
                block.push_str(&escaped(delta));
                block.push_str("\"}");
            }
            _ => self.block_changed(message, position),
        }
    }

    /// Writes the message's JSON.
    fn write_message(&mut self, message: &AssistantMessage, out: &mut Vec<u8>) {
        let tail = self.tail.get_or_insert_with(|| {
            // Full snapshots are pi 0.73's frames: usage without the keys pi 1.5 added.
            let usage = message.usage.without_1_5_keys();
            let tail = json(&Tail {
                api: &message.api,
                provider: &message.provider,
                model: &message.model,
                usage: &usage,
                stop_reason: message.stop_reason,
                timestamp: message.timestamp,
                response_id: &message.response_id,
                error_message: &message.error_message,
            });
            tail[1..].to_string()
        });
        out.extend_from_slice(b"{\"role\":\"assistant\",\"content\":[");
        for (i, block) in self.blocks.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(block.as_bytes());
        }
        out.extend_from_slice(b"],");
        out.extend_from_slice(tail.as_bytes());
    }

    /// Takes one update of the answer (every update, in order, whether or not it is written)
    /// and renders its frame in `mode`.
    pub fn render(&mut self, update: &AssistantUpdate<'_>, mode: UpdateMode) -> Vec<u8> {
        let message = update.message;
        let tail_current = matches!(&self.tail_of, Some((usage, response_id, stop))
            if *usage == message.usage && *response_id == message.response_id && *stop == message.stop_reason);
        if !tail_current {
            self.tail_changed();
            self.tail_of = Some((
                message.usage,
                message.response_id.clone(),
                message.stop_reason,
            ));
        }
        // Lean frames carry no snapshot: the block cache is only kept for full ones (the mode
        // is fixed for the whole answer).
        match update.payload {
            _ if mode != UpdateMode::Full => {}
            UpdatePayload::Delta(delta) if update.kind.appends_text() => {
                self.text_appended(update.message, update.content_index, delta)
            }
            _ => self.block_changed(update.message, update.content_index),
        }
        let extra: Option<(&str, Value)> = match update.payload {
            UpdatePayload::None => None,
            UpdatePayload::Delta(delta) => Some(("delta", Value::String(delta.clone()))),
            UpdatePayload::Content(content) => Some(("content", Value::String(content.clone()))),
            UpdatePayload::ToolCall => update
                .tool_call()
                .and_then(|block| serde_json::to_value(block).ok())
                .map(|block| ("toolCall", block)),
        };
        let extra = extra.as_ref().map(|(key, value)| (*key, value));
        if mode == UpdateMode::Usage {
            return self.usage_frame(update, extra);
        }
        self.update_frame(
            update.message,
            update.kind.as_str(),
            update.content_index,
            extra,
            mode,
        )
    }

    /// Renders pi 1.5's `message_update` frame (with its trailing newline).
    fn usage_frame(
        &mut self,
        update: &AssistantUpdate<'_>,
        extra: Option<(&str, &Value)>,
    ) -> Vec<u8> {
        let usage = self
            .usage
            .get_or_insert_with(|| json(&update.message.usage));
        let mut out = format!(
            "{{\"type\":\"message_update\",\"usage\":{usage},\"assistantMessageEvent\":{{\"type\":\"{}\",\"contentIndex\":{}",
            update.kind.as_str(),
            update.content_index
        );
        if update.kind == UpdateKind::ToolcallStart
            && let Some(AssistantBlock::ToolCall { id, name, .. }) =
                update.message.content.get(update.content_index)
        {
            out.push_str(&format!(",\"id\":{},\"toolName\":{}", json(id), json(name)));
        }
        if let Some((key, value)) = extra {
            out.push_str(&format!(",\"{key}\":{}", json(value)));
        }
        out.push_str("}}\n");
        out.into_bytes()
    }

    /// Renders a `message_update` frame (with its trailing newline).
    pub fn update_frame(
        &mut self,
        message: &AssistantMessage,
        kind: &str,
        position: usize,
        extra: Option<(&str, &Value)>,
        mode: UpdateMode,
    ) -> Vec<u8> {
        let mut head = format!(
            "{{\"type\":\"message_update\",\"assistantMessageEvent\":{{\"type\":\"{kind}\",\"contentIndex\":{position}"
        );
        if let Some((key, value)) = extra {
            head.push_str(&format!(",\"{key}\":{}", json(value)));
        }
        match mode {
            UpdateMode::Delta | UpdateMode::Usage => {
                head.push_str("},\"message\":{\"role\":\"assistant\"}}\n");
                head.into_bytes()
            }
            UpdateMode::Full => {
                // The snapshot is written twice straight into the frame (no intermediate copy:
                // these frames grow with the answer, so every copy counts).
                let blocks: usize = self.blocks.iter().map(String::len).sum();
                let mut out = Vec::with_capacity(head.len() + 2 * (blocks + 512) + 32);
                out.extend_from_slice(head.as_bytes());
                out.extend_from_slice(b",\"partial\":");
                self.write_message(message, &mut out);
                out.extend_from_slice(b"},\"message\":");
                self.write_message(message, &mut out);
                out.extend_from_slice(b"}\n");
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::message::AgentMessage;
    use serde_json::json;

    #[test]
    fn frames_equal_the_generic_serialization() {
        let mut message = AssistantMessage::empty("faux", "faux", "m");
        message.response_id = Some("r\"1".into());
        let mut render = MessageRender::default();
        message.content.push(AssistantBlock::Text {
            text: String::new(),
            signature: None,
        });
        render.block_changed(&message, 0);
        for delta in ["he\"llo", " wörld\n", "\u{2028}"] {
            if let AssistantBlock::Text { text, .. } = &mut message.content[0] {
                text.push_str(delta);
            }
            render.text_appended(&message, 0, delta);
        }
        let frame = render.update_frame(
            &message,
            "text_delta",
            0,
            Some(("delta", &json!("\u{2028}"))),
            UpdateMode::Full,
        );
        let parsed: Value = serde_json::from_slice(&frame).unwrap();
        let snapshot = serde_json::to_value(AgentMessage::Assistant(message.clone())).unwrap();
        assert_eq!(parsed["message"], snapshot);
        assert_eq!(parsed["assistantMessageEvent"]["partial"], snapshot);
        assert_eq!(
            String::from_utf8(frame).unwrap().trim_end(),
            serde_json::to_string(&parsed).unwrap()
        );
        let lean = render.update_frame(
            &message,
            "text_delta",
            0,
            Some(("delta", &json!("x"))),
            UpdateMode::Delta,
        );
        assert_eq!(
            String::from_utf8(lean).unwrap(),
            "{\"type\":\"message_update\",\"assistantMessageEvent\":{\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"x\"},\"message\":{\"role\":\"assistant\"}}\n"
        );
    }
}
