//! The Messages API request, as the example builds it: user and assistant turns, consecutive
//! tool results in one user turn, the last user block cached, the system prompt cached, tools,
//! and a thinking budget for reasoning models.

use pith_sdk::provider::*;
use pith_sdk::serde_json::{Value, json};

/// pi's default thinking budgets by level (minimal, low, medium, high).
const BUDGETS: [u32; 4] = [1024, 4096, 10240, 20480];

/// The request body.
pub fn body(request: &Request) -> Value {
    let mut body = json!({
        "model": request.model.id,
        "messages": messages(&context_messages(&request.messages)),
        "max_tokens": request.max_tokens.unwrap_or(request.model.max_tokens / 3),
        "stream": true,
    });
    if let Some(system) = request.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body["system"] =
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                let schema = tool_schema(tool);
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": {
                        "type": "object",
                        "properties": schema.get("properties").cloned().unwrap_or_else(|| json!({})),
                        "required": schema.get("required").cloned().unwrap_or_else(|| json!([])),
                    },
                })
            })
            .collect();
    }
    let level = match request.thinking {
        ThinkingLevel::Off => None,
        ThinkingLevel::Minimal => Some(0),
        ThinkingLevel::Low => Some(1),
        ThinkingLevel::Medium => Some(2),
        ThinkingLevel::High => Some(3),
        ThinkingLevel::Xhigh => Some(4),
    };
    if let Some(level) = level.filter(|_| request.model.reasoning) {
        let custom = request
            .thinking_budgets
            .as_ref()
            .and_then(|budgets| budgets.get(level).copied());
        let budget = custom.or(BUDGETS.get(level).copied()).unwrap_or(10240);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    body
}

/// Text and images as Messages API blocks.
fn blocks(content: &[Content]) -> Vec<Value> {
    content
        .iter()
        .map(|item| match item {
            Content::Text(text) => json!({"type": "text", "text": text}),
            Content::Image(image) => json!({"type": "image", "source": {
                "type": "base64", "media_type": image.mime_type, "data": image.data}}),
        })
        .collect()
}

/// A tool result's content: its text joined by lines, or blocks when it holds images.
fn result_content(content: &[Content]) -> Value {
    if !content.iter().any(|c| matches!(c, Content::Image(_))) {
        let texts: Vec<&str> = content
            .iter()
            .filter_map(|c| match c {
                Content::Text(text) => Some(text.as_str()),
                Content::Image(_) => None,
            })
            .collect();
        return Value::String(texts.join("\n"));
    }
    let mut out = blocks(content);
    if !content.iter().any(|c| matches!(c, Content::Text(_))) {
        out.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(out)
}

fn messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User(content) => {
                let content = blocks(content);
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(answer) => {
                let mut content = Vec::new();
                for block in &answer.content {
                    match block {
                        AssistantBlock::Text(text) if !text.text.trim().is_empty() => {
                            content.push(json!({"type": "text", "text": text.text}));
                        }
                        AssistantBlock::Thinking(thinking)
                            if !thinking.thinking.trim().is_empty() =>
                        {
                            match thinking.signature.as_deref().filter(|s| !s.is_empty()) {
                                Some(signature) => content.push(json!({"type": "thinking",
                                    "thinking": thinking.thinking, "signature": signature})),
                                None => {
                                    content.push(json!({"type": "text", "text": thinking.thinking}))
                                }
                            }
                        }
                        AssistantBlock::ToolCall(call) => {
                            let input: Value = pith_sdk::serde_json::from_str(&call.arguments)
                                .unwrap_or_else(|_| json!({}));
                            content.push(json!({"type": "tool_use", "id": call.id,
                                "name": call.name, "input": input}));
                        }
                        _ => {}
                    }
                }
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Message::ToolResult(result) => {
                let block = json!({"type": "tool_result", "tool_use_id": result.tool_call_id,
                    "content": result_content(&result.content), "is_error": result.is_error});
                // Consecutive results share one user turn.
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"][0]["type"] == "tool_result" =>
                    {
                        if let Some(list) = last["content"].as_array_mut() {
                            list.push(block);
                        }
                    }
                    _ => out.push(json!({"role": "user", "content": [block]})),
                }
            }
        }
    }
    if let Some(last) = out.last_mut().filter(|m| m["role"] == "user")
        && let Some(block) = last["content"].as_array_mut().and_then(|b| b.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    out
}
