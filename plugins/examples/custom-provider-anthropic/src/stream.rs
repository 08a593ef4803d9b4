//! The streamed response as the example reads it: the answer starts before the first event;
//! text, thinking (with its signature) and tool calls by Anthropic block index; usage from
//! `message_start` and `message_delta`; a stream without a stop reason fails.

use std::collections::HashMap;

use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use pith_sdk::sse::SseEvent;

/// The open blocks and what the response said so far.
#[derive(Default)]
pub struct Stream {
    blocks: HashMap<u32, Block>,
    stop: Option<StopReason>,
    done: bool,
}

enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Tool {
        id: String,
        name: String,
        json: String,
    },
}

impl Stream {
    fn usage_from(&mut self, usage: &Value, out: &mut Vec<StreamEvent>) {
        let get = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let usage = Usage {
            input: get("input_tokens"),
            output: get("output_tokens"),
            cache_read: get("cache_read_input_tokens"),
            cache_write: get("cache_creation_input_tokens"),
        };
        out.push(StreamEvent::Usage(usage));
    }

    fn start(&mut self, index: u32, block: &Value, out: &mut Vec<StreamEvent>) {
        let (open, event) = match block["type"].as_str().unwrap_or("") {
            "text" => (
                Block::Text(String::new()),
                StreamEvent::TextStart(BlockStart { index }),
            ),
            "thinking" => (
                Block::Thinking {
                    text: String::new(),
                    signature: String::new(),
                },
                StreamEvent::ThinkingStart(BlockStart { index }),
            ),
            "tool_use" => {
                let id = block["id"].as_str().unwrap_or("").to_string();
                let name = block["name"].as_str().unwrap_or("").to_string();
                let event = StreamEvent::ToolcallStart(ToolCallStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                });
                (
                    Block::Tool {
                        id,
                        name,
                        json: String::new(),
                    },
                    event,
                )
            }
            _ => return,
        };
        self.blocks.insert(index, open);
        out.push(event);
    }

    fn delta(&mut self, index: u32, delta: &Value, out: &mut Vec<StreamEvent>) {
        let piece = |key: &str| delta[key].as_str().unwrap_or("").to_string();
        match (
            delta["type"].as_str().unwrap_or(""),
            self.blocks.get_mut(&index),
        ) {
            ("text_delta", Some(Block::Text(text))) => {
                let delta = piece("text");
                text.push_str(&delta);
                out.push(StreamEvent::TextDelta(BlockDelta { index, delta }));
            }
            ("thinking_delta", Some(Block::Thinking { text, .. })) => {
                let delta = piece("thinking");
                text.push_str(&delta);
                out.push(StreamEvent::ThinkingDelta(BlockDelta { index, delta }));
            }
            ("signature_delta", Some(Block::Thinking { signature, .. })) => {
                signature.push_str(&piece("signature"));
            }
            ("input_json_delta", Some(Block::Tool { json, .. })) => {
                let delta = piece("partial_json");
                json.push_str(&delta);
                out.push(StreamEvent::ToolcallDelta(BlockDelta { index, delta }));
            }
            _ => {}
        }
    }

    fn stop(&mut self, index: u32, out: &mut Vec<StreamEvent>) {
        match self.blocks.remove(&index) {
            Some(Block::Text(text)) => {
                out.push(StreamEvent::TextEnd(TextEnd {
                    index,
                    text,
                    signature: None,
                }));
            }
            Some(Block::Thinking { text, signature }) => {
                out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                    index,
                    block: ThinkingBlock {
                        thinking: text,
                        signature: Some(signature),
                        redacted: false,
                    },
                }));
            }
            Some(Block::Tool { id, name, json }) => {
                let arguments = if json.trim().is_empty() {
                    "{}".to_string()
                } else {
                    json
                };
                out.push(StreamEvent::ToolcallEnd(ToolCallEnd {
                    index,
                    call: ToolCall {
                        id,
                        name,
                        arguments,
                        thought_signature: None,
                    },
                }));
            }
            None => {}
        }
    }

    /// The end of the response: done with its stop reason, or the example's errors.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        self.done = true;
        out.push(match self.stop {
            None => StreamEvent::Error("Anthropic stream ended without a stop reason".into()),
            Some(StopReason::Error) => StreamEvent::Error("An unknown error occurred".into()),
            Some(reason) => StreamEvent::Done(reason),
        });
    }
}

impl SseHandler for Stream {
    fn begin(&mut self, out: &mut Vec<StreamEvent>) {
        // The example starts the answer as soon as the request is sent.
        out.push(StreamEvent::Start);
    }

    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return;
        };
        let index = data["index"].as_u64().unwrap_or(0) as u32;
        match data["type"].as_str().unwrap_or(event.event.as_str()) {
            "message_start" => self.usage_from(&data["message"]["usage"], out),
            "content_block_start" => self.start(index, &data["content_block"], out),
            "content_block_delta" => self.delta(index, &data["delta"], out),
            "content_block_stop" => self.stop(index, out),
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(pith_sdk::provider::anthropic_stop_reason(reason));
                }
                self.usage_from(&data["usage"], out);
            }
            "message_stop" => self.finish(out),
            "error" => {
                self.done = true;
                let message = data["error"]["message"].as_str().unwrap_or("Unknown error");
                out.push(StreamEvent::Error(message.to_string()));
            }
            _ => {}
        }
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.finish(out);
    }

    fn done(&self) -> bool {
        self.done
    }
}
