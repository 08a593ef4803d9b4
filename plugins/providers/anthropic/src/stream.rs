//! The SSE response as stream events.

use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use pith_sdk::sse::SseEvent;

/// The state of a streaming response.
pub struct Stream {
    usage: Usage,
    done: bool,
    /// Per Anthropic block index: thinking text, signature, or tool-call id/name/json.
    blocks: std::collections::HashMap<u32, Block>,
    stop: Option<StopReason>,
    /// A subscription token's request: the request's tool names, to map Claude Code's back.
    tool_names: Option<Vec<String>>,
}

enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
        redacted: bool,
    },
    Tool {
        id: String,
        name: String,
        json: String,
    },
}

impl Stream {
    /// A response about to be read; `tool_names` when the request named its tools as Claude
    /// Code does.
    pub fn new(tool_names: Option<Vec<String>>) -> Stream {
        Stream {
            usage: Usage {
                input: 0,
                output: 0,
                cache_read: 0,
                cache_write: 0,
            },
            done: false,
            tool_names,
            blocks: Default::default(),
            stop: None,
        }
    }

    fn usage_from(&mut self, usage: &Value) {
        let get = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(v) = get("input_tokens") {
            self.usage.input = v;
        }
        if let Some(v) = get("output_tokens") {
            self.usage.output = v;
        }
        if let Some(v) = get("cache_read_input_tokens") {
            self.usage.cache_read = v;
        }
        if let Some(v) = get("cache_creation_input_tokens") {
            self.usage.cache_write = v;
        }
    }

    fn handle(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return;
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_str())
            .to_string();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0) as u32;
        match kind.as_str() {
            "message_start" => {
                if let Some(id) = data["message"]["id"].as_str() {
                    out.push(StreamEvent::ResponseId(id.to_string()));
                }
                self.usage_from(&data["message"]["usage"]);
                out.push(StreamEvent::Usage(self.usage));
                // pi 1.5 starts the answer once the response's id and first usage are known.
                out.push(StreamEvent::Start);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                match block["type"].as_str().unwrap_or("") {
                    "text" => {
                        self.blocks.insert(index, Block::Text(String::new()));
                        out.push(StreamEvent::TextStart(BlockStart { index }));
                    }
                    "thinking" => {
                        self.blocks.insert(
                            index,
                            Block::Thinking {
                                text: String::new(),
                                signature: String::new(),
                                redacted: false,
                            },
                        );
                        out.push(StreamEvent::ThinkingStart(BlockStart { index }));
                    }
                    "redacted_thinking" => {
                        let data = block["data"].as_str().unwrap_or("").to_string();
                        self.blocks.insert(
                            index,
                            Block::Thinking {
                                text: "[Reasoning redacted]".into(),
                                signature: data,
                                redacted: true,
                            },
                        );
                        out.push(StreamEvent::ThinkingStart(BlockStart { index }));
                    }
                    "tool_use" => {
                        let id = block["id"].as_str().unwrap_or("").to_string();
                        let name = block["name"].as_str().unwrap_or("");
                        let name = match &self.tool_names {
                            Some(tools) => crate::oauth::from_claude_code(name, tools),
                            None => name.to_string(),
                        };
                        self.blocks.insert(
                            index,
                            Block::Tool {
                                id: id.clone(),
                                name: name.clone(),
                                json: String::new(),
                            },
                        );
                        out.push(StreamEvent::ToolcallStart(ToolCallStart {
                            index,
                            id,
                            name,
                        }));
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (
                    delta["type"].as_str().unwrap_or(""),
                    self.blocks.get_mut(&index),
                ) {
                    ("text_delta", Some(Block::Text(text))) => {
                        let piece = delta["text"].as_str().unwrap_or("").to_string();
                        text.push_str(&piece);
                        out.push(StreamEvent::TextDelta(BlockDelta {
                            index,
                            delta: piece,
                        }));
                    }
                    ("thinking_delta", Some(Block::Thinking { text, .. })) => {
                        let piece = delta["thinking"].as_str().unwrap_or("").to_string();
                        text.push_str(&piece);
                        out.push(StreamEvent::ThinkingDelta(BlockDelta {
                            index,
                            delta: piece,
                        }));
                    }
                    ("signature_delta", Some(Block::Thinking { signature, .. })) => {
                        signature.push_str(delta["signature"].as_str().unwrap_or(""));
                    }
                    ("input_json_delta", Some(Block::Tool { json, .. })) => {
                        let piece = delta["partial_json"].as_str().unwrap_or("").to_string();
                        json.push_str(&piece);
                        out.push(StreamEvent::ToolcallDelta(BlockDelta {
                            index,
                            delta: piece,
                        }));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => match self.blocks.remove(&index) {
                Some(Block::Text(text)) => out.push(StreamEvent::TextEnd(TextEnd {
                    index,
                    text,
                    signature: None,
                })),
                Some(Block::Thinking {
                    text,
                    signature,
                    redacted,
                }) => out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                    index,
                    block: ThinkingBlock {
                        thinking: text,
                        signature: Some(signature),
                        redacted,
                    },
                })),
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
            },
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(pith_sdk::provider::anthropic_stop_reason(reason));
                }
                self.usage_from(&data["usage"]);
                out.push(StreamEvent::Usage(self.usage));
            }
            "message_stop" => {
                self.done = true;
                match self.stop {
                    Some(StopReason::Error) => {
                        out.push(StreamEvent::Error("The model refused to answer".into()))
                    }
                    reason => out.push(StreamEvent::Done(reason.unwrap_or(StopReason::Stop))),
                }
            }
            "error" => {
                self.done = true;
                let message = data["error"]["message"]
                    .as_str()
                    .unwrap_or("Unknown error")
                    .to_string();
                out.push(StreamEvent::Error(message));
            }
            _ => {}
        }
    }
}

impl SseHandler for Stream {
    fn begin(&mut self, _out: &mut Vec<StreamEvent>) {
        // The answer starts at the response's `message_start` (with its id and usage).
    }

    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        self.handle(event, out);
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.done = true;
        out.push(StreamEvent::Error(
            "The connection closed before the response was complete".into(),
        ));
    }

    fn done(&self) -> bool {
        self.done
    }
}
