//! The `google-generative-ai` provider: Gemini's `streamGenerateContent` with SSE, thoughts as
//! thinking blocks and function calls as tool calls.

use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Map, Value, json};
use pith_sdk::sse::SseEvent;

struct Google;

/// Thinking budgets for minimal, low, medium and high.
const BUDGETS: [u32; 4] = [1024, 2048, 8192, 24576];

fn part(content: &Content) -> Value {
    match content {
        Content::Text(text) => json!({"text": text}),
        Content::Image(image) => {
            json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
        }
    }
}

fn body(request: &Request) -> Value {
    let model = &request.model;
    let mut contents: Vec<Value> = Vec::new();
    let mut push = |role: &str, parts: Vec<Value>| {
        if parts.is_empty() {
            return;
        }
        match contents.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(existing) = last["parts"].as_array_mut() {
                    existing.extend(parts);
                }
            }
            _ => contents.push(json!({"role": role, "parts": parts})),
        }
    };
    for message in context_messages(&request.messages) {
        match &message {
            Message::User(content) => push("user", content.iter().map(part).collect()),
            Message::Assistant(a) => {
                let same_model = a.provider == model.provider && a.model == model.id;
                let parts = a
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Text(t) if !t.text.is_empty() => Some(json!({"text": t.text})),
                        AssistantBlock::Thinking(t) if same_model && !t.thinking.is_empty() => {
                            let mut p = json!({"text": t.thinking, "thought": true});
                            if let Some(sig) = &t.signature {
                                p["thoughtSignature"] = json!(sig);
                            }
                            Some(p)
                        }
                        AssistantBlock::Thinking(t) if !t.thinking.is_empty() && !t.redacted => Some(json!({"text": t.thinking})),
                        AssistantBlock::ToolCall(call) => {
                            let args: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                            let mut p = json!({"functionCall": {"name": call.name, "args": args, "id": call.id}});
                            if let Some(sig) = call.thought_signature.as_ref().filter(|_| same_model) {
                                p["thoughtSignature"] = json!(sig);
                            }
                            Some(p)
                        }
                        _ => None,
                    })
                    .collect();
                push("model", parts);
            }
            Message::ToolResult(result) => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| {
                        if let Content::Text(t) = c {
                            Some(t.as_str())
                        } else {
                            None
                        }
                    })
                    .collect();
                let key = if result.is_error { "error" } else { "output" };
                push(
                    "user",
                    vec![
                        json!({"functionResponse": {"name": result.tool_name, "id": result.tool_call_id, "response": {key: text.join("\n")}}}),
                    ],
                );
            }
        }
    }
    let mut config = Map::new();
    config.insert(
        "maxOutputTokens".into(),
        json!(request.max_tokens.unwrap_or(model.max_tokens)),
    );
    if let Some(temperature) = request.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if model.reasoning {
        let budget = match request.thinking {
            ThinkingLevel::Off => Some(0),
            ThinkingLevel::Minimal => Some(BUDGETS[0]),
            ThinkingLevel::Low => Some(BUDGETS[1]),
            ThinkingLevel::Medium => Some(BUDGETS[2]),
            _ => Some(BUDGETS[3]),
        };
        if let Some(budget) = budget {
            let thinking = if budget == 0 {
                json!({"thinkingBudget": 0})
            } else {
                json!({"includeThoughts": true, "thinkingBudget": budget})
            };
            config.insert("thinkingConfig".into(), thinking);
        }
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(system) = &request.system_prompt {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": serde_json::from_str::<Value>(&t.parameters).unwrap_or_else(|_| json!({"type": "object"}))}))
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    body.insert("generationConfig".into(), Value::Object(config));
    Value::Object(body)
}

impl Provider for Google {
    fn describe() -> ProviderInfo {
        ProviderInfo {
            apis: vec!["google-generative-ai".into()],
            // The models and the variables of their keys are pi's catalog, held by the runtime.
            models: Vec::new(),
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let url = format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            request.model.base_url.trim_end_matches('/'),
            request.model.id
        );
        let mut http = HttpRequest::post(&url)
            .header("content-type", "application/json")
            .header("x-goog-api-key", request.api_key.as_deref().unwrap_or(""));
        for header in &request.model.headers {
            http = http.header(&header.name, &header.value);
        }
        let response = http.json(&body(&request)).send_ok()?;
        let stream = Stream {
            open: None,
            next_index: 0,
            calls: 0,
            stop: None,
            usage: None,
            started: false,
            done: false,
        };
        Ok(Box::new(SseCompletion::new(response, stream)))
    }
}

enum Open {
    Text(u32, String, Option<String>),
    Thinking(u32, String, Option<String>),
}

struct Stream {
    open: Option<Open>,
    next_index: u32,
    calls: u32,
    stop: Option<StopReason>,
    usage: Option<Usage>,
    started: bool,
    done: bool,
}

impl Stream {
    fn close(&mut self, out: &mut Vec<StreamEvent>) {
        match self.open.take() {
            Some(Open::Text(index, text, signature)) => out.push(StreamEvent::TextEnd(TextEnd {
                index,
                text,
                signature,
            })),
            Some(Open::Thinking(index, thinking, signature)) => {
                out.push(StreamEvent::ThinkingEnd(ThinkingEnd {
                    index,
                    block: ThinkingBlock {
                        thinking,
                        signature,
                        redacted: false,
                    },
                }))
            }
            None => {}
        }
    }

    fn index(&mut self) -> u32 {
        self.next_index += 1;
        self.next_index - 1
    }

    fn handle(&mut self, data: &str, out: &mut Vec<StreamEvent>) {
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            return;
        };
        if let Some(error) = chunk.get("error") {
            self.done = true;
            out.push(StreamEvent::Error(
                error["message"]
                    .as_str()
                    .unwrap_or("Unknown error")
                    .to_string(),
            ));
            return;
        }
        if !self.started {
            self.started = true;
            out.push(StreamEvent::Start);
            if let Some(id) = chunk["responseId"].as_str() {
                out.push(StreamEvent::ResponseId(id.to_string()));
            }
        }
        if let Some(meta) = chunk.get("usageMetadata").filter(|m| m.is_object()) {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let cached = n(&meta["cachedContentTokenCount"]);
            self.usage = Some(Usage {
                input: n(&meta["promptTokenCount"]).saturating_sub(cached),
                output: n(&meta["candidatesTokenCount"]) + n(&meta["thoughtsTokenCount"]),
                cache_read: cached,
                cache_write: 0,
            });
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let signature = part["thoughtSignature"].as_str().map(str::to_string);
            if let Some(call) = part.get("functionCall") {
                self.close(out);
                let index = self.index();
                self.calls += 1;
                let name = call["name"].as_str().unwrap_or("").to_string();
                let id = call["id"]
                    .as_str()
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("{name}_{}", self.calls), str::to_string);
                let arguments = call
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| json!({}))
                    .to_string();
                out.push(StreamEvent::ToolcallStart(ToolCallStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                }));
                out.push(StreamEvent::ToolcallDelta(BlockDelta {
                    index,
                    delta: arguments.clone(),
                }));
                out.push(StreamEvent::ToolcallEnd(ToolCallEnd {
                    index,
                    call: ToolCall {
                        id,
                        name,
                        arguments,
                        thought_signature: signature,
                    },
                }));
                continue;
            }
            let Some(text) = part["text"].as_str() else {
                continue;
            };
            let thought = part["thought"].as_bool() == Some(true);
            let matches = matches!(
                (&self.open, thought),
                (Some(Open::Thinking(..)), true) | (Some(Open::Text(..)), false)
            );
            if !matches {
                self.close(out);
                let index = self.index();
                if thought {
                    self.open = Some(Open::Thinking(index, String::new(), None));
                    out.push(StreamEvent::ThinkingStart(BlockStart { index }));
                } else {
                    self.open = Some(Open::Text(index, String::new(), None));
                    out.push(StreamEvent::TextStart(BlockStart { index }));
                }
            }
            match &mut self.open {
                Some(Open::Thinking(index, whole, sig)) => {
                    whole.push_str(text);
                    if signature.is_some() {
                        *sig = signature;
                    }
                    out.push(StreamEvent::ThinkingDelta(BlockDelta {
                        index: *index,
                        delta: text.to_string(),
                    }));
                }
                Some(Open::Text(index, whole, sig)) => {
                    whole.push_str(text);
                    if signature.is_some() {
                        *sig = signature;
                    }
                    out.push(StreamEvent::TextDelta(BlockDelta {
                        index: *index,
                        delta: text.to_string(),
                    }));
                }
                None => {}
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.stop = Some(match reason {
                "STOP" => StopReason::Stop,
                "MAX_TOKENS" => StopReason::Length,
                _ => StopReason::Error,
            });
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        self.close(out);
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        self.done = true;
        match self.stop {
            Some(StopReason::Error) => out.push(StreamEvent::Error(
                "The model stopped the answer (safety or another reason)".into(),
            )),
            Some(_) if self.calls > 0 => out.push(StreamEvent::Done(StopReason::ToolUse)),
            Some(reason) => out.push(StreamEvent::Done(reason)),
            None => out.push(StreamEvent::Error(
                "The connection closed before the response was complete".into(),
            )),
        }
    }
}

impl SseHandler for Stream {
    fn event(&mut self, event: SseEvent, out: &mut Vec<StreamEvent>) {
        self.handle(&event.data, out);
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.finish(out);
    }

    fn done(&self) -> bool {
        self.done
    }
}

pith_sdk::export_provider!(Google);
