//! `faux`: a provider that replays scripted turns, for tests and demos (`--provider faux`).
//!
//! The script is JSON in the config value `PITH_FAUX_SCRIPT` (granted to this first-party
//! plugin; it falls back to pith's environment variable of that name): a list of turns, or
//! `{"turns": [...], "defaults": {...}}`, in the fake LLM server's format:
//!
//! ```json
//! {"text": "answer", "chunks": 4, "thinking": "…", "thinking_chunks": 2,
//!  "tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": "ls"}}], "json_chunks": 2,
//!  "text_deltas": ["He", "llo"], "repeat": {"text": "word ", "count": 5000},
//!  "delay_ms": 0, "first_delay_ms": 0, "stop_reason": "stop",
//!  "usage": {"input": 100, "output": 20, "cache_read": 0, "cache_write": 0},
//!  "error": "message before any output", "stream_error": "message after the output"}
//! ```
//!
//! A request is answered with the turn whose index is the number of assistant messages in its
//! conversation (so turn 0 answers the first prompt, turn 1 the request after it, and so on);
//! past the end of the script, or with no script, it answers with a short echo.

use std::collections::VecDeque;
use std::time::Duration;

use pith_sdk::provider::*;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct Turn {
    text: Option<String>,
    text_deltas: Option<Vec<String>>,
    repeat: Option<Repeat>,
    thinking: Option<String>,
    thinking_chunks: Option<usize>,
    signature: Option<String>,
    tool_calls: Vec<ScriptedCall>,
    json_chunks: Option<usize>,
    chunks: Option<usize>,
    delay_ms: Option<u64>,
    first_delay_ms: Option<u64>,
    stop_reason: Option<String>,
    usage: Option<ScriptedUsage>,
    error: Option<Value>,
    stream_error: Option<String>,
}

#[derive(Deserialize, Clone)]
struct Repeat {
    text: String,
    count: usize,
}

#[derive(Deserialize, Clone)]
struct ScriptedCall {
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct ScriptedUsage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Script {
    turns: Vec<Turn>,
    defaults: Turn,
}

fn load_script() -> Result<Script, String> {
    let Ok(Some(text)) = pith_sdk::host::config("PITH_FAUX_SCRIPT") else {
        return Ok(Script::default());
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| format!("faux: PITH_FAUX_SCRIPT is not JSON: {err}"))?;
    let value = if value.is_array() {
        serde_json::json!({ "turns": value })
    } else {
        value
    };
    serde_json::from_value(value).map_err(|err| format!("faux: bad script: {err}"))
}

/// Splits `text` into `n` nearly equal pieces (no empty ones), on char boundaries.
fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(1, chars.len());
    let (size, rem) = (chars.len() / n, chars.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut pos = 0;
    for i in 0..n {
        let step = size + usize::from(i < rem);
        out.push(chars[pos..pos + step].iter().collect());
        pos += step;
    }
    out
}

fn stop_reason(name: &str) -> StopReason {
    match name {
        "length" | "max_tokens" => StopReason::Length,
        "toolUse" | "tool_use" | "tool_calls" => StopReason::ToolUse,
        "error" => StopReason::Error,
        "aborted" => StopReason::Aborted,
        _ => StopReason::Stop,
    }
}

struct Faux;

impl Provider for Faux {
    fn describe() -> ProviderInfo {
        let model = |id: &str, name: &str, reasoning: bool| Model {
            id: id.into(),
            name: name.into(),
            api: "faux".into(),
            provider: "faux".into(),
            base_url: "faux://local".into(),
            reasoning,
            input: vec![InputKind::Text, InputKind::Image],
            cost: ModelCost {
                input: 0.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
            },
            context_window: 200_000,
            max_tokens: 16_384,
            headers: Vec::new(),
            compat: None,
        };
        ProviderInfo {
            apis: vec!["faux".into()],
            models: vec![
                model("faux-model", "Faux Model", false),
                model("faux-reasoner", "Faux Reasoner", true),
            ],
            key_env_vars: vec![("faux".into(), vec!["PITH_FAUX_SCRIPT".into()])],
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let script = load_script()?;
        let index = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Assistant(_)))
            .count();
        let turn = match script.turns.get(index) {
            Some(turn) => turn.clone(),
            None => Turn {
                text: Some(echo(&request)),
                ..Turn::default()
            },
        };
        Ok(Box::new(Replay::new(turn, &script.defaults, index)))
    }
}

fn echo(request: &Request) -> String {
    let last_user = request.messages.iter().rev().find_map(|m| match m {
        Message::User(content) => content.iter().find_map(|c| match c {
            Content::Text(text) => Some(text.clone()),
            Content::Image(_) => None,
        }),
        _ => None,
    });
    match last_user {
        Some(text) => format!("(faux) You said: {text}"),
        None => "(faux) Hello.".to_string(),
    }
}

/// The events of one turn, handed out one at a time with the scripted delays.
struct Replay {
    events: VecDeque<StreamEvent>,
    delay: Duration,
    first_delay: Duration,
    started: bool,
}

impl Replay {
    fn new(turn: Turn, defaults: &Turn, index: usize) -> Replay {
        let chunks = turn.chunks.or(defaults.chunks).unwrap_or(4);
        let json_chunks = turn.json_chunks.or(defaults.json_chunks).unwrap_or(2);
        let usage = turn.usage.or(defaults.usage).unwrap_or(ScriptedUsage {
            input: 100,
            output: 20,
            ..Default::default()
        });
        let delay = Duration::from_millis(turn.delay_ms.or(defaults.delay_ms).unwrap_or(0));
        let first_delay =
            Duration::from_millis(turn.first_delay_ms.or(defaults.first_delay_ms).unwrap_or(0));
        let mut events = VecDeque::new();
        if let Some(error) = &turn.error {
            let message = match error {
                Value::String(s) => s.clone(),
                other => other
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("faux error")
                    .to_string(),
            };
            events.push_back(StreamEvent::Error(message));
            return Replay {
                events,
                delay,
                first_delay,
                started: false,
            };
        }
        // Like pi 1.5's Anthropic provider: the response id and input usage, then `start`.
        events.push_back(StreamEvent::ResponseId(format!("faux-{index}")));
        let usage_of = |output| Usage {
            input: usage.input,
            output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
        };
        events.push_back(StreamEvent::Usage(usage_of(1)));
        events.push_back(StreamEvent::Start);
        let mut block = 0u32;
        if let Some(thinking) = turn.thinking.as_deref().filter(|t| !t.is_empty()) {
            events.push_back(StreamEvent::ThinkingStart(BlockStart { index: block }));
            for delta in split(
                thinking,
                turn.thinking_chunks
                    .or(defaults.thinking_chunks)
                    .unwrap_or(2),
            ) {
                events.push_back(StreamEvent::ThinkingDelta(BlockDelta {
                    index: block,
                    delta,
                }));
            }
            events.push_back(StreamEvent::ThinkingEnd(ThinkingEnd {
                index: block,
                block: ThinkingBlock {
                    thinking: thinking.to_string(),
                    signature: turn.signature.clone(),
                    redacted: false,
                },
            }));
            block += 1;
        }
        let deltas: Vec<String> = if let Some(deltas) = &turn.text_deltas {
            deltas.clone()
        } else if let Some(repeat) = &turn.repeat {
            vec![repeat.text.clone(); repeat.count]
        } else {
            turn.text
                .as_deref()
                .map(|t| split(t, chunks))
                .unwrap_or_default()
        };
        if !deltas.is_empty() {
            events.push_back(StreamEvent::TextStart(BlockStart { index: block }));
            let mut whole = String::new();
            for delta in deltas {
                whole.push_str(&delta);
                events.push_back(StreamEvent::TextDelta(BlockDelta {
                    index: block,
                    delta,
                }));
            }
            events.push_back(StreamEvent::TextEnd(TextEnd {
                index: block,
                text: whole,
                signature: None,
            }));
            block += 1;
        }
        for (n, call) in turn.tool_calls.iter().enumerate() {
            let id = call
                .id
                .clone()
                .unwrap_or_else(|| format!("faux_call_{index}_{n}"));
            events.push_back(StreamEvent::ToolcallStart(ToolCallStart {
                index: block,
                id: id.clone(),
                name: call.name.clone(),
            }));
            let arguments = if call.arguments.is_null() {
                "{}".to_string()
            } else {
                call.arguments.to_string()
            };
            for delta in split(&arguments, json_chunks) {
                events.push_back(StreamEvent::ToolcallDelta(BlockDelta {
                    index: block,
                    delta,
                }));
            }
            events.push_back(StreamEvent::ToolcallEnd(ToolCallEnd {
                index: block,
                call: ToolCall {
                    id,
                    name: call.name.clone(),
                    arguments,
                    thought_signature: None,
                },
            }));
            block += 1;
        }
        events.push_back(StreamEvent::Usage(usage_of(usage.output)));
        match &turn.stream_error {
            Some(message) => events.push_back(StreamEvent::Error(message.clone())),
            None => {
                let reason = match &turn.stop_reason {
                    Some(name) => stop_reason(name),
                    None if !turn.tool_calls.is_empty() => StopReason::ToolUse,
                    None => StopReason::Stop,
                };
                events.push_back(StreamEvent::Done(reason));
            }
        }
        Replay {
            events,
            delay,
            first_delay,
            started: false,
        }
    }
}

impl Completion for Replay {
    fn next(&mut self) -> Option<Vec<StreamEvent>> {
        if !self.started {
            self.started = true;
            if !self.first_delay.is_zero() {
                std::thread::sleep(self.first_delay);
            }
        } else if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        if self.delay.is_zero() {
            // Without delays, hand out everything at once: one host call per response.
            let all: Vec<StreamEvent> = self.events.drain(..).collect();
            return (!all.is_empty()).then_some(all);
        }
        // With delays, one content event per batch (stream metadata rides along).
        let mut batch = Vec::new();
        while let Some(event) = self.events.pop_front() {
            let metadata = matches!(
                event,
                StreamEvent::Start | StreamEvent::ResponseId(_) | StreamEvent::Usage(_)
            );
            batch.push(event);
            if !metadata {
                break;
            }
        }
        (!batch.is_empty()).then_some(batch)
    }
}

pith_sdk::export_provider!(Faux);
