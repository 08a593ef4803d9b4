//! The SSE chunks as stream events: one current block at a time; a change of kind or a new
//! tool-call id ends it.

use pith_sdk::grammar_tools::GrammarInput;
use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use pith_sdk::sse::SseEvent;

/// A block still receiving content; pi 0.73 keeps every block open until the answer ends and
/// then ends them in order.
enum Open {
    Text(u32, String),
    Thinking(u32, String, String),
    Tool {
        index: u32,
        id: String,
        name: String,
        json: String,
        stream_index: u64,
        /// A custom (grammar) tool call's raw input, turned into `json`.
        custom: Option<GrammarInput>,
    },
}

/// The state of a streaming response.
pub struct Stream {
    open: Vec<Open>,
    next_index: u32,
    stop: Option<StopReason>,
    usage: Option<Usage>,
    started: bool,
    done: bool,
    /// False when the server never sends `finish_reason` (`compat.supportsFinishReason`): the
    /// end of the stream then stops with `toolUse` after a tool call, else `stop`.
    finish_reasons: bool,
    saw_tool_call: bool,
    /// The string argument each grammar tool's raw input fills, by tool name.
    grammar: crate::request::GrammarTools,
}

impl Stream {
    /// A response about to be read (`finish_reasons`: the server sends them).
    pub fn new(finish_reasons: bool, grammar: crate::request::GrammarTools) -> Stream {
        Stream {
            open: Vec::new(),
            next_index: 0,
            stop: None,
            usage: None,
            started: false,
            done: false,
            finish_reasons,
            saw_tool_call: false,
            grammar,
        }
    }

    /// The stop reason pi infers at the end of a stream without `finish_reason`.
    fn inferred_stop(&mut self) {
        if self.stop.is_none() && !self.finish_reasons {
            self.stop = Some(if self.saw_tool_call {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            });
        }
    }

    fn close_all(&mut self, out: &mut Vec<StreamEvent>) {
        for block in self.open.drain(..) {
            match block {
                Open::Text(index, text) => out.push(StreamEvent::TextEnd(TextEnd {
                    index,
                    text,
                    signature: None,
                })),
                Open::Thinking(index, thinking, field) => {
                    out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                        index,
                        block: ThinkingBlock {
                            thinking,
                            signature: Some(field),
                            redacted: false,
                        },
                    }))
                }
                Open::Tool {
                    index,
                    id,
                    name,
                    mut json,
                    custom,
                    ..
                } => {
                    if let Some(mut input) = custom {
                        match input.close(None) {
                            Ok(Some(piece)) => {
                                json.push_str(&piece);
                                out.push(StreamEvent::ToolcallDelta(BlockDelta {
                                    index,
                                    delta: piece,
                                }));
                            }
                            Ok(None) => {}
                            Err(error) => out.push(StreamEvent::Error(error)),
                        }
                    }
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
            }
        }
    }

    fn open_index(&mut self) -> u32 {
        self.next_index += 1;
        self.next_index - 1
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        self.inferred_stop();
        self.close_all(out);
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        self.done = true;
        match self.stop {
            Some(StopReason::Error) => out.push(StreamEvent::Error(
                "The provider stopped the answer (content filter)".into(),
            )),
            Some(reason) => out.push(StreamEvent::Done(reason)),
            None => out.push(StreamEvent::Error(
                "Stream ended without finish_reason".into(),
            )),
        }
    }

    fn handle(&mut self, data: &str, out: &mut Vec<StreamEvent>) {
        if data.trim() == "[DONE]" {
            self.finish(out);
            return;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            return;
        };
        if let Some(error) = chunk.get("error") {
            self.done = true;
            out.push(StreamEvent::Error(
                error["message"]
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_string),
            ));
            return;
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start);
            if let Some(id) = chunk["id"].as_str() {
                out.push(StreamEvent::ResponseId(id.to_string()));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let cached = n(&usage["prompt_tokens_details"]["cached_tokens"]);
            let reasoning = n(&usage["completion_tokens_details"]["reasoning_tokens"]);
            self.usage = Some(Usage {
                input: n(&usage["prompt_tokens"]).saturating_sub(cached),
                output: n(&usage["completion_tokens"]) + reasoning,
                cache_read: cached,
                cache_write: 0,
            });
        }
        let Some(choice) = chunk["choices"].get(0) else {
            return;
        };
        let delta = &choice["delta"];
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find_map(|field| {
                delta[field]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .map(|t| (field, t))
            });
        if let Some((field, text)) = reasoning {
            if !self.open.iter().any(|b| matches!(b, Open::Thinking(..))) {
                let index = self.open_index();
                self.open
                    .push(Open::Thinking(index, String::new(), field.to_string()));
                out.push(StreamEvent::ThinkingStart(BlockStart { index }));
            }
            if let Some(Open::Thinking(index, whole, _)) = self
                .open
                .iter_mut()
                .rev()
                .find(|b| matches!(b, Open::Thinking(..)))
            {
                whole.push_str(text);
                out.push(StreamEvent::ThinkingDelta(BlockDelta {
                    index: *index,
                    delta: text.to_string(),
                }));
            }
        }
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            if !self.open.iter().any(|b| matches!(b, Open::Text(..))) {
                let index = self.open_index();
                self.open.push(Open::Text(index, String::new()));
                out.push(StreamEvent::TextStart(BlockStart { index }));
            }
            if let Some(Open::Text(index, whole)) = self
                .open
                .iter_mut()
                .rev()
                .find(|b| matches!(b, Open::Text(..)))
            {
                whole.push_str(text);
                out.push(StreamEvent::TextDelta(BlockDelta {
                    index: *index,
                    delta: text.to_string(),
                }));
            }
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let stream_index = call["index"].as_u64().unwrap_or(0);
            let new_id = call["id"].as_str().filter(|id| !id.is_empty());
            let existing = self.open.iter().position(|b| match b {
                Open::Tool {
                    id,
                    stream_index: si,
                    ..
                } => *si == stream_index && new_id.is_none_or(|n| n == id),
                _ => false,
            });
            let position = match existing {
                Some(position) => position,
                None => {
                    let index = self.open_index();
                    self.saw_tool_call = true;
                    let id = new_id.unwrap_or("").to_string();
                    let name = call["function"]["name"]
                        .as_str()
                        .or(call["custom"]["name"].as_str())
                        .unwrap_or("")
                        .to_string();
                    out.push(StreamEvent::ToolcallStart(ToolCallStart {
                        index,
                        id: id.clone(),
                        name: name.clone(),
                    }));
                    self.open.push(Open::Tool {
                        index,
                        id,
                        name,
                        json: String::new(),
                        stream_index,
                        custom: None,
                    });
                    self.open.len() - 1
                }
            };
            let Open::Tool {
                index,
                name,
                json,
                custom,
                ..
            } = &mut self.open[position]
            else {
                continue;
            };
            if name.is_empty()
                && let Some(named) = call["function"]["name"]
                    .as_str()
                    .or(call["custom"]["name"].as_str())
            {
                *name = named.to_string();
            }
            // A custom tool call's raw input fills the tool's string argument (pi's).
            if call["custom"].is_object() && call["function"].is_null() && custom.is_none() {
                let property = self
                    .grammar
                    .get(name.as_str())
                    .map_or("input", |tool| tool.input_property.as_str());
                *custom = Some(GrammarInput::new(property));
            }
            let piece = match custom {
                Some(input) => match call["custom"]["input"]
                    .as_str()
                    .map(|raw| input.append(raw))
                {
                    Some(Ok(piece)) => piece,
                    Some(Err(error)) => {
                        self.done = true;
                        out.push(StreamEvent::Error(error));
                        return;
                    }
                    None => None,
                },
                None => call["function"]["arguments"].as_str().map(str::to_string),
            };
            if let Some(piece) = piece {
                json.push_str(&piece);
                out.push(StreamEvent::ToolcallDelta(BlockDelta {
                    index: *index,
                    delta: piece,
                }));
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.stop = Some(match reason {
                "length" => StopReason::Length,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                "content_filter" => StopReason::Error,
                _ => StopReason::Stop,
            });
        }
    }
}
impl SseHandler for Stream {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        self.handle(&event.data, out);
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.inferred_stop();
        // Servers that end the body without `[DONE]` but gave a finish reason are complete.
        if self.stop.is_none() {
            self.done = true;
            out.push(StreamEvent::Error(
                "Stream ended without finish_reason".into(),
            ));
        } else {
            self.finish(out);
        }
    }

    fn done(&self) -> bool {
        self.done
    }
}
