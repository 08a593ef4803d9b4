//! The request body, as pi's `buildChatPayload` and `toMistralWirePayload` make it.

use pith_sdk::provider::*;
use pith_sdk::serde_json::{Map, Value, json};

use crate::ids::IdMap;

fn image_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn user(content: &[Content]) -> Value {
    if let [Content::Text(text)] = content {
        return json!({"role": "user", "content": text});
    }
    let parts: Vec<Value> = content
        .iter()
        .map(|part| match part {
            Content::Text(text) => json!({"type": "text", "text": text}),
            Content::Image(image) => {
                json!({"type": "image_url", "image_url": image_url(&image.mime_type, &image.data)})
            }
        })
        .collect();
    json!({"role": "user", "content": parts})
}

fn assistant(message: &AssistantMessage, model: &Model, ids: &mut IdMap) -> Option<Value> {
    let same_model =
        message.provider == model.provider && message.api == model.api && message.model == model.id;
    let mut content = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                content.push(json!({"type": "text", "text": t.text}));
            }
            AssistantBlock::Thinking(t)
                if same_model && !t.redacted && !t.thinking.trim().is_empty() =>
            {
                content.push(
                    json!({"type": "thinking", "thinking": [{"type": "text", "text": t.thinking}]}),
                );
            }
            AssistantBlock::ToolCall(call) => {
                let id = if same_model {
                    call.id.clone()
                } else {
                    ids.id_for(&call.id)
                };
                let arguments = if call.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    call.arguments.clone()
                };
                calls.push(json!({"id": id, "type": "function", "function": {"name": call.name, "arguments": arguments}, "index": 0}));
            }
            _ => {}
        }
    }
    if content.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert("prefix".into(), json!(false));
    if !content.is_empty() {
        out.insert("content".into(), Value::Array(content));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

fn tool_result(result: &ToolResultMessage, model: &Model, ids: &IdMap) -> Value {
    let images = model.input.contains(&InputKind::Image);
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            Content::Image(_) => None,
        })
        .collect();
    let has_image = result
        .content
        .iter()
        .any(|c| matches!(c, Content::Image(_)));
    let mut text = text.join("\n").trim().to_string();
    if has_image && !images {
        text = if text.is_empty() {
            "(image omitted: model does not support images)".into()
        } else {
            format!("{text}\n[tool image omitted: model does not support images]")
        };
    }
    if text.is_empty() {
        text = if has_image {
            "(see attached image)"
        } else {
            "(no tool output)"
        }
        .into();
    }
    if result.is_error {
        text = format!("[tool error] {text}");
    }
    let mut parts = vec![json!({"type": "text", "text": text})];
    if images {
        parts.extend(result.content.iter().filter_map(|c| match c {
            Content::Image(image) => Some(
                json!({"type": "image_url", "image_url": image_url(&image.mime_type, &image.data)}),
            ),
            Content::Text(_) => None,
        }));
    }
    json!({"role": "tool", "tool_call_id": ids.result_id(&result.tool_call_id), "name": result.tool_name, "content": parts})
}

/// `reasoning_effort` from the catalog's thinking-level map (`compat.thinkingLevelMap`, which
/// the runtime adds): the level's entry, `high` for a level it does not name; `off` its `off`.
fn reasoning_effort(request: &Request) -> Option<String> {
    let model = &request.model;
    if !model.reasoning {
        return None;
    }
    let compat: Value = model
        .compat
        .as_deref()
        .and_then(|text| pith_sdk::serde_json::from_str(text).ok())?;
    let map = compat.get("thinkingLevelMap")?;
    let level = match request.thinking {
        ThinkingLevel::Off => return map["off"].as_str().map(str::to_string),
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    };
    Some(map[level].as_str().unwrap_or("high").to_string())
}

/// The request body.
pub fn body(request: &Request) -> Value {
    let model = &request.model;
    let mut ids = IdMap::default();
    let mut messages = Vec::new();
    if let Some(system) = request.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in context_messages(&request.messages) {
        match &message {
            Message::User(content) => messages.push(user(content)),
            Message::Assistant(a) => messages.extend(assistant(a, model, &mut ids)),
            Message::ToolResult(result) => messages.push(tool_result(result, model, &ids)),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("stream".into(), json!(true));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool_schema(tool), "strict": false}}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    body.insert(
        "max_tokens".into(),
        json!(request.max_tokens.unwrap_or(model.max_tokens)),
    );
    if let Some(effort) = reasoning_effort(request) {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    if let (Some(session), true) = (
        &request.session_id,
        request.cache_retention != CacheRetention::None,
    ) {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    Value::Object(body)
}
