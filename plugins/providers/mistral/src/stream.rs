//! The streamed chunks as stream events, as pi's `consumeChatStream` reads them: text and
//! thinking chunks in one open block at a time, tool calls gathered by index and ended only
//! when the stream ends, usage from any chunk, the finish reason of the last.

use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use pith_sdk::sse::SseEvent;

use crate::ids::derive;

/// The text or thinking block receiving content.
enum Open {
    Text(u32, String),
    Thinking(u32, String),
}

/// A tool call being gathered.
struct Call {
    key: String,
    index: u32,
    id: String,
    name: String,
    json: String,
}

/// The state of a streaming response.
pub struct Stream {
    open: Option<Open>,
    calls: Vec<Call>,
    next_index: u32,
    stop: Option<Result<StopReason, String>>,
    usage: Option<Usage>,
    started: bool,
    done: bool,
}

impl Stream {
    /// A response about to be read.
    pub fn new() -> Stream {
        Stream {
            open: None,
            calls: Vec::new(),
            next_index: 0,
            stop: None,
            usage: None,
            started: false,
            done: false,
        }
    }

    fn index(&mut self) -> u32 {
        self.next_index += 1;
        self.next_index - 1
    }

    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        match self.open.take() {
            Some(Open::Text(index, text)) => out.push(StreamEvent::TextEnd(TextEnd {
                index,
                text,
                signature: None,
            })),
            Some(Open::Thinking(index, thinking)) => {
                out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                    index,
                    block: ThinkingBlock {
                        thinking,
                        signature: None,
                        redacted: false,
                    },
                }))
            }
            None => {}
        }
    }

    fn append(&mut self, thinking: bool, piece: &str, out: &mut Vec<StreamEvent>) {
        if piece.is_empty() {
            return;
        }
        let same = matches!(
            (&self.open, thinking),
            (Some(Open::Thinking(..)), true) | (Some(Open::Text(..)), false)
        );
        if !same {
            self.close(out);
            let index = self.index();
            if thinking {
                self.open = Some(Open::Thinking(index, String::new()));
                out.push(StreamEvent::ThinkingStart(BlockStart { index }));
            } else {
                self.open = Some(Open::Text(index, String::new()));
                out.push(StreamEvent::TextStart(BlockStart { index }));
            }
        }
        if let Some(Open::Text(index, whole) | Open::Thinking(index, whole)) = &mut self.open {
            whole.push_str(piece);
            let delta = BlockDelta {
                index: *index,
                delta: piece.to_string(),
            };
            out.push(if thinking {
                StreamEvent::ThinkingDelta(delta)
            } else {
                StreamEvent::TextDelta(delta)
            });
        }
    }

    fn tool_call(&mut self, call: &Value, out: &mut Vec<StreamEvent>) {
        self.close(out);
        let position = call["index"].as_u64();
        let id = call["id"]
            .as_str()
            .filter(|id| !id.is_empty() && *id != "null")
            .map(str::to_string)
            .unwrap_or_else(|| derive(&format!("toolcall:{}", position.unwrap_or(0)), 0));
        let key = position.map_or_else(|| id.clone(), |p| p.to_string());
        let at = match self.calls.iter().position(|c| c.key == key) {
            Some(at) => at,
            None => {
                let index = self.index();
                let name = call["function"]["name"].as_str().unwrap_or("").to_string();
                out.push(StreamEvent::ToolcallStart(ToolCallStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                }));
                self.calls.push(Call {
                    key,
                    index,
                    id,
                    name,
                    json: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let piece = match &call["function"]["arguments"] {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if !piece.is_empty() {
            let gathered = &mut self.calls[at];
            gathered.json.push_str(&piece);
            out.push(StreamEvent::ToolcallDelta(BlockDelta {
                index: gathered.index,
                delta: piece,
            }));
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        self.close(out);
        for call in self.calls.drain(..) {
            let arguments = if call.json.trim().is_empty() {
                "{}".to_string()
            } else {
                call.json
            };
            out.push(StreamEvent::ToolcallEnd(ToolCallEnd {
                index: call.index,
                call: ToolCall {
                    id: call.id,
                    name: call.name,
                    arguments,
                    thought_signature: None,
                },
            }));
        }
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        self.done = true;
        out.push(match self.stop.take() {
            Some(Ok(reason)) => StreamEvent::Done(reason),
            Some(Err(message)) => StreamEvent::Error(message),
            None => StreamEvent::Error("Mistral stream ended without a finish reason".into()),
        });
    }

    fn chunk(&mut self, data: &str, out: &mut Vec<StreamEvent>) {
        let chunk: Value = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(err) => {
                self.done = true;
                out.push(StreamEvent::Error(err.to_string()));
                return;
            }
        };
        if !chunk["choices"].is_array() {
            self.done = true;
            out.push(StreamEvent::Error("Invalid Mistral streaming event".into()));
            return;
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start);
            if let Some(id) = chunk["id"].as_str().filter(|id| !id.is_empty()) {
                out.push(StreamEvent::ResponseId(id.to_string()));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let prompt = n(&usage["prompt_tokens"]);
            let cached = [
                &usage["prompt_tokens_details"]["cached_tokens"],
                &usage["prompt_token_details"]["cached_tokens"],
                &usage["num_cached_tokens"],
            ]
            .into_iter()
            .find_map(Value::as_u64)
            .unwrap_or(0)
            .min(prompt);
            self.usage = Some(Usage {
                input: prompt - cached,
                output: n(&usage["completion_tokens"]),
                cache_read: cached,
                cache_write: 0,
            });
        }
        let Some(choice) = chunk["choices"].get(0) else {
            return;
        };
        if let Some(reason) = choice["finish_reason"].as_str().filter(|r| !r.is_empty()) {
            self.stop = Some(match reason {
                "stop" => Ok(StopReason::Stop),
                "length" | "model_length" => Ok(StopReason::Length),
                "tool_calls" => Ok(StopReason::ToolUse),
                "error" => Err("Provider stopped with: error (server error)".into()),
                other => Err(format!("Provider stopped with: {other}")),
            });
        }
        let delta = &choice["delta"];
        match &delta["content"] {
            Value::String(text) => self.append(false, text, out),
            Value::Array(parts) => {
                for part in parts {
                    match (part.as_str(), part["type"].as_str()) {
                        (Some(text), _) => self.append(false, text, out),
                        (None, Some("text")) => {
                            self.append(false, part["text"].as_str().unwrap_or(""), out)
                        }
                        (None, Some("thinking")) => {
                            let text: String = part["thinking"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(|t| t["text"].as_str())
                                .collect();
                            self.append(true, &text, out);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            self.tool_call(call, out);
        }
    }
}

impl SseHandler for Stream {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        let data = event.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.finish(out);
        } else {
            self.chunk(data, out);
        }
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if !self.done {
            self.finish(out);
        }
    }

    fn done(&self) -> bool {
        self.done
    }
}
