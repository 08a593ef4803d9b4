//! The Messages API request body, as pi builds it.

use pith_sdk::compat::{Compat, level_name};
use pith_sdk::provider::*;
use pith_sdk::serde_json::{Map, Value, json};

/// Thinking budgets for minimal, low, medium and high.
const BUDGETS: [u32; 4] = [1024, 2048, 8192, 16384];

/// The effort for models with adaptive thinking (Opus and Sonnet 4.6, and any model whose
/// compat says `forceAdaptiveThinking`), `None` for the others.
pub fn adaptive(model: &Model) -> Option<()> {
    (model.id.contains("opus-4-6")
        || model.id.contains("sonnet-4-6")
        || model.id.contains("opus-4.6")
        || model.id.contains("sonnet-4.6")
        || Compat::of(model).flag("forceAdaptiveThinking") == Some(true))
    .then_some(())
}

/// True when tools stream their input eagerly (`supportsEagerToolInputStreaming`, on by
/// default); otherwise the fine-grained tool streaming beta is asked for.
pub fn eager_tool_input(model: &Model) -> bool {
    Compat::of(model).flag("supportsEagerToolInputStreaming") != Some(false)
}

/// An id as Anthropic accepts it: `[a-zA-Z0-9_-]`, at most 64 characters.
pub fn tool_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The request body, as JSON: the fields in pi's order (`model`, `messages`, then the rest),
/// the messages written straight from the request into one buffer.
pub fn body(request: &Request) -> Vec<u8> {
    let model = &request.model;
    let compat = Compat::of(model);
    let base = request.max_tokens.unwrap_or(model.max_tokens.min(32_000));
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    let mut max_tokens = base;
    let mut thinking = None;
    let level = request.thinking;
    if model.reasoning && level != ThinkingLevel::Off {
        if adaptive(model).is_some() {
            let effort = match compat.level_value(level_name(level)).flatten() {
                Some(mapped) => mapped,
                None => match level {
                    ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                    ThinkingLevel::Medium => "medium",
                    ThinkingLevel::Xhigh if model.id.contains("opus") => "max",
                    _ => "high",
                }
                .to_string(),
            };
            let mut kind = json!({"type": "adaptive"});
            if compat.flag("forceAdaptiveThinking") == Some(true) {
                kind["display"] = json!("summarized");
            }
            thinking = Some((kind, Some(json!({"effort": effort}))));
        } else {
            let index = match level {
                ThinkingLevel::Minimal => 0,
                ThinkingLevel::Low => 1,
                ThinkingLevel::Medium => 2,
                _ => 3,
            };
            let mut budget = request
                .thinking_budgets
                .as_ref()
                .and_then(|b| b.get(index).copied())
                .unwrap_or(BUDGETS[index]);
            max_tokens = (base + budget).min(model.max_tokens);
            if max_tokens <= budget {
                budget = max_tokens.saturating_sub(1024);
            }
            thinking = Some((
                json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
                None,
            ));
        }
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = &request.system_prompt {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]),
        );
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let schema = tool_schema(tool);
                let mut definition = json!({"name": tool.name, "description": tool.description});
                if eager_tool_input(model) {
                    definition["eager_input_streaming"] = json!(true);
                }
                definition["input_schema"] = schema;
                definition
            })
            .collect();
        let mut tools = tools;
        // The tool list is part of the cached prefix, as pi marks it (unless the server
        // takes no mark on tools).
        if compat.flag("supportsCacheControlOnTools") != Some(false)
            && let Some(Value::Object(last)) = tools.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some((thinking, output)) = thinking {
        body.insert("thinking".into(), thinking);
        if let Some(output) = output {
            body.insert("output_config".into(), output);
        }
    }
    if let Some(temperature) = request.temperature
        && compat.flag("supportsTemperature") != Some(false)
        && !body.contains_key("thinking")
    {
        body.insert("temperature".into(), json!(temperature));
    }
    let claude_code = crate::oauth::is_oauth(request.api_key.as_deref().unwrap_or(""));
    if claude_code {
        as_claude_code(&mut body);
    }
    let retention = match request.cache_retention {
        CacheRetention::Long if compat.flag("supportsLongCacheRetention") == Some(false) => {
            CacheRetention::Short
        }
        other => other,
    };
    body.values_mut()
        .for_each(|value| retain_cache(value, retention));
    let messages = crate::messages::messages(request, retention, claude_code);
    let mut text: Vec<u8> = Vec::with_capacity(crate::messages::size_estimate(request) + 4096);
    text.push(b'{');
    for (key, value) in &body {
        if text.len() > 1 {
            text.push(b',');
        }
        text.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
        text.push(b':');
        text.extend_from_slice(value.to_string().as_bytes());
        if key == "model" {
            text.extend_from_slice(b",\"messages\":");
            crate::messages::write_json(&mut text, &messages);
        }
    }
    text.push(b'}');
    text
}

/// pi's cache retention on every cache breakpoint: `long` (`PI_CACHE_RETENTION=long`) keeps
/// the prefix an hour (`ttl: "1h"`), `none` sets no breakpoint, `short` is Anthropic's default.
fn retain_cache(value: &mut Value, retention: CacheRetention) {
    match value {
        Value::Object(map) => {
            if retention == CacheRetention::None {
                map.remove("cache_control");
            } else if retention == CacheRetention::Long
                && let Some(Value::Object(control)) = map.get_mut("cache_control")
            {
                control.insert("ttl".into(), json!("1h"));
            }
            map.values_mut().for_each(|v| retain_cache(v, retention));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| retain_cache(v, retention)),
        _ => {}
    }
}

/// A subscription token's request: Claude Code's identity first in the system prompt, and
/// Claude Code's names for its tools in the tool list (the history's calls are renamed as the
/// messages are written).
fn as_claude_code(body: &mut Map<String, Value>) {
    let mut system = vec![
        json!({"type": "text", "text": crate::oauth::IDENTITY, "cache_control": {"type": "ephemeral"}}),
    ];
    if let Some(Value::Array(blocks)) = body.remove("system") {
        system.extend(blocks);
    }
    body.insert("system".into(), Value::Array(system));
    let rename = |named: &mut Value| {
        if let Some(name) = named["name"].as_str() {
            named["name"] = json!(crate::oauth::to_claude_code(name));
        }
    };
    if let Some(Value::Array(tools)) = body.get_mut("tools") {
        tools.iter_mut().for_each(rename);
    }
}
