//! The chat completions request body, as pi builds it.

use pith_sdk::provider::*;
use pith_sdk::serde_json::{Map, Value, json};

fn user_part(content: &Content) -> Value {
    match content {
        Content::Text(text) => json!({"type": "text", "text": text}),
        Content::Image(image) => {
            json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)}})
        }
    }
}

fn assistant(message: &AssistantMessage, model: &Model) -> Option<Value> {
    let same_model = message.provider == model.provider && message.model == model.id;
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantBlock::Text(t) => text.push_str(&t.text),
            AssistantBlock::Thinking(t) if same_model && !t.redacted => reasoning.push_str(&t.thinking),
            AssistantBlock::Thinking(t) if !t.redacted => text.push_str(&t.thinking),
            AssistantBlock::Thinking(_) => {}
            AssistantBlock::ToolCall(call) => calls.push(json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})),
        }
    }
    if text.is_empty() && calls.is_empty() && reasoning.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        },
    );
    if !reasoning.is_empty() {
        let field = message
            .content
            .iter()
            .find_map(|b| match b {
                AssistantBlock::Thinking(t) => t.signature.clone().filter(|s| {
                    matches!(
                        s.as_str(),
                        "reasoning_content" | "reasoning" | "reasoning_text"
                    )
                }),
                _ => None,
            })
            .unwrap_or_else(|| "reasoning_content".into());
        out.insert(field, json!(reasoning));
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

/// The request body.
pub fn body(request: &Request) -> Value {
    let model = &request.model;
    let mut messages = Vec::new();
    if let Some(system) = &request.system_prompt {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in context_messages(&request.messages) {
        match &message {
            Message::User(content) => messages.push(json!({"role": "user", "content": content.iter().map(user_part).collect::<Vec<_>>()})),
            Message::Assistant(a) => messages.extend(assistant(a, model)),
            Message::ToolResult(result) => {
                let text: Vec<&str> = result.content.iter().filter_map(|c| if let Content::Text(t) = c { Some(t.as_str()) } else { None }).collect();
                messages.push(json!({"role": "tool", "content": text.join("\n"), "tool_call_id": result.tool_call_id}));
                let images: Vec<Value> = result.content.iter().filter(|c| matches!(c, Content::Image(_))).map(user_part).collect();
                if !images.is_empty() {
                    let mut parts = vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
                    parts.extend(images);
                    messages.push(json!({"role": "user", "content": parts}));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("store".into(), json!(false));
    body.insert(
        "max_completion_tokens".into(),
        json!(request.max_tokens.unwrap_or(model.max_tokens)),
    );
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let parameters = tool_schema(tool);
                json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": parameters, "strict": false}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning && request.thinking != ThinkingLevel::Off {
        let xhigh = ["gpt-5.2", "gpt-5.3", "gpt-5.4"]
            .iter()
            .any(|p| model.id.contains(p));
        let effort = match request.thinking {
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::Xhigh if xhigh => "xhigh",
            _ => "high",
        };
        body.insert("reasoning_effort".into(), json!(effort));
    }
    Value::Object(body)
}
