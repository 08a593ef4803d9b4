//! The Responses API SSE events as stream events.

use std::collections::HashMap;

use pith_sdk::grammar_tools::GrammarInput;
use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use pith_sdk::sse::SseEvent;

enum Item {
    Text(u32, String),
    Thinking(u32, String),
    Tool(ToolItem),
}

/// A tool call being streamed.
struct ToolItem {
    index: u32,
    id: String,
    name: String,
    /// The arguments' JSON so far.
    json: String,
    /// A custom (grammar) tool call's raw input, turned into `json`.
    custom: Option<GrammarInput>,
}

impl ToolItem {
    /// The JSON text of `piece` (raw input for a custom call), emitted as a delta.
    fn push(&mut self, piece: Option<String>, out: &mut Vec<StreamEvent>) {
        if let Some(piece) = piece.filter(|p| !p.is_empty()) {
            self.json.push_str(&piece);
            out.push(StreamEvent::ToolcallDelta(BlockDelta {
                index: self.index,
                delta: piece,
            }));
        }
    }
}

/// The state of a streaming response.
pub struct Stream {
    /// By output index.
    items: HashMap<u64, Item>,
    next_index: u32,
    any_tool: bool,
    started: bool,
    done: bool,
    /// The grammar tools of the request, by name.
    grammar: crate::request::GrammarTools,
}

impl Stream {
    /// A response about to be read.
    pub fn new(grammar: crate::request::GrammarTools) -> Stream {
        Stream {
            items: HashMap::new(),
            next_index: 0,
            any_tool: false,
            started: false,
            done: false,
            grammar,
        }
    }

    fn index(&mut self) -> u32 {
        self.next_index += 1;
        self.next_index - 1
    }

    fn handle(&mut self, data: &str, out: &mut Vec<StreamEvent>) {
        let Ok(event) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let kind = event["type"].as_str().unwrap_or("");
        let output_index = event["output_index"].as_u64().unwrap_or(0);
        match kind {
            "response.created" => {
                if !self.started {
                    self.started = true;
                    out.push(StreamEvent::Start);
                }
                if let Some(id) = event["response"]["id"].as_str() {
                    out.push(StreamEvent::ResponseId(id.to_string()));
                }
            }
            "response.output_item.added" => {
                let item = &event["item"];
                match item["type"].as_str().unwrap_or("") {
                    "reasoning" => {
                        let index = self.index();
                        self.items
                            .insert(output_index, Item::Thinking(index, String::new()));
                        out.push(StreamEvent::ThinkingStart(BlockStart { index }));
                    }
                    "message" => {
                        let index = self.index();
                        self.items
                            .insert(output_index, Item::Text(index, String::new()));
                        out.push(StreamEvent::TextStart(BlockStart { index }));
                    }
                    kind @ ("function_call" | "custom_tool_call") => {
                        let index = self.index();
                        let id = format!(
                            "{}|{}",
                            item["call_id"].as_str().unwrap_or(""),
                            item["id"].as_str().unwrap_or("")
                        );
                        let name = item["name"].as_str().unwrap_or("").to_string();
                        self.any_tool = true;
                        out.push(StreamEvent::ToolcallStart(ToolCallStart {
                            index,
                            id: id.clone(),
                            name: name.clone(),
                        }));
                        let mut tool = ToolItem {
                            index,
                            id,
                            custom: (kind == "custom_tool_call").then(|| {
                                GrammarInput::new(
                                    self.grammar
                                        .get(&name)
                                        .map_or("input", |g| g.input_property.as_str()),
                                )
                            }),
                            name,
                            json: String::new(),
                        };
                        if let Some(input) = &mut tool.custom {
                            let piece = input.append(item["input"].as_str().unwrap_or(""));
                            if !self.accept(piece.map(|p| tool.push(p, out)), out) {
                                return;
                            }
                        }
                        self.items.insert(output_index, Item::Tool(tool));
                    }
                    _ => {}
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(Item::Thinking(index, text)) = self.items.get_mut(&output_index) {
                    let piece = event["delta"].as_str().unwrap_or("");
                    text.push_str(piece);
                    out.push(StreamEvent::ThinkingDelta(BlockDelta {
                        index: *index,
                        delta: piece.to_string(),
                    }));
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(Item::Thinking(index, text)) = self.items.get_mut(&output_index) {
                    text.push_str("\n\n");
                    out.push(StreamEvent::ThinkingDelta(BlockDelta {
                        index: *index,
                        delta: "\n\n".into(),
                    }));
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(Item::Text(index, text)) = self.items.get_mut(&output_index) {
                    let piece = event["delta"].as_str().unwrap_or("");
                    text.push_str(piece);
                    out.push(StreamEvent::TextDelta(BlockDelta {
                        index: *index,
                        delta: piece.to_string(),
                    }));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Item::Tool(tool)) = self.items.get_mut(&output_index)
                    && tool.custom.is_none()
                {
                    let piece = event["delta"].as_str().unwrap_or("").to_string();
                    tool.push(Some(piece), out);
                }
            }
            "response.custom_tool_call_input.delta" | "response.custom_tool_call_input.done" => {
                let Some(Item::Tool(tool)) = self.items.get_mut(&output_index) else {
                    return;
                };
                let Some(input) = &mut tool.custom else {
                    return;
                };
                let piece = if kind.ends_with(".delta") {
                    input.append(event["delta"].as_str().unwrap_or(""))
                } else {
                    input.close(event["input"].as_str())
                };
                let pushed = piece.map(|p| tool.push(p, out));
                self.accept(pushed, out);
            }
            "response.output_item.done" => {
                let item = &event["item"];
                match self.items.remove(&output_index) {
                    Some(Item::Text(index, streamed)) => {
                        let text: String = item["content"]
                            .as_array()
                            .map(|parts| {
                                parts
                                    .iter()
                                    .filter_map(|p| p["text"].as_str().or(p["refusal"].as_str()))
                                    .collect()
                            })
                            .unwrap_or(streamed);
                        out.push(StreamEvent::TextEnd(TextEnd {
                            index,
                            text,
                            signature: item["id"].as_str().map(str::to_string),
                        }));
                    }
                    Some(Item::Thinking(index, text)) => {
                        out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                            index,
                            block: ThinkingBlock {
                                thinking: text.trim_end().to_string(),
                                signature: Some(item.to_string()),
                                redacted: false,
                            },
                        }))
                    }
                    Some(Item::Tool(mut tool)) => {
                        if let Some(input) = &mut tool.custom {
                            let piece = input.close(item["input"].as_str());
                            let pushed = piece.map(|p| tool.push(p, out));
                            if !self.accept(pushed, out) {
                                return;
                            }
                        }
                        let ToolItem {
                            index,
                            id,
                            name,
                            json,
                            custom,
                        } = tool;
                        let arguments = match custom {
                            Some(_) => json,
                            None => item["arguments"]
                                .as_str()
                                .map(str::to_string)
                                .unwrap_or(json),
                        };
                        let arguments = if arguments.trim().is_empty() {
                            "{}".to_string()
                        } else {
                            arguments
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
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = &event["response"];
                let usage = &response["usage"];
                let n = |v: &Value| v.as_u64().unwrap_or(0);
                let cached = n(&usage["input_tokens_details"]["cached_tokens"]);
                out.push(StreamEvent::Usage(Usage {
                    input: n(&usage["input_tokens"]).saturating_sub(cached),
                    output: n(&usage["output_tokens"]),
                    cache_read: cached,
                    cache_write: 0,
                }));
                self.done = true;
                match response["status"].as_str().unwrap_or("completed") {
                    "completed" => out.push(StreamEvent::Done(if self.any_tool {
                        StopReason::ToolUse
                    } else {
                        StopReason::Stop
                    })),
                    "incomplete" => out.push(StreamEvent::Done(StopReason::Length)),
                    _ => {
                        let message = response["error"]["message"]
                            .as_str()
                            .unwrap_or("The response failed")
                            .to_string();
                        out.push(StreamEvent::Error(message));
                    }
                }
            }
            "error" => {
                self.done = true;
                out.push(StreamEvent::Error(
                    event["message"]
                        .as_str()
                        .unwrap_or("Unknown error")
                        .to_string(),
                ));
            }
            _ => {}
        }
    }
}

impl Stream {
    /// False, with the stream ended by the error, when a custom call's input broke pi's rules.
    fn accept(&mut self, step: Result<(), String>, out: &mut Vec<StreamEvent>) -> bool {
        match step {
            Ok(()) => true,
            Err(error) => {
                self.done = true;
                out.push(StreamEvent::Error(error));
                false
            }
        }
    }
}

impl SseHandler for Stream {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        self.handle(&event.data, out);
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
