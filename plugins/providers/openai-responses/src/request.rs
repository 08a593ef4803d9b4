//! The Responses API request body.

use pith_sdk::compat::{Compat, level_name};
use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Map, Value, json};

fn user_part(content: &Content) -> Value {
    match content {
        Content::Text(text) => json!({"type": "input_text", "text": text}),
        Content::Image(image) => {
            json!({"type": "input_image", "detail": "auto", "image_url": format!("data:{};base64,{}", image.mime_type, image.data)})
        }
    }
}

/// A tool call id as pith stores it: `<call_id>|<item id>`.
fn split_call_id(id: &str) -> (&str, Option<&str>) {
    match id.split_once('|') {
        Some((call, item)) => (call, Some(item)),
        None => (id, None),
    }
}

fn assistant_items(message: &AssistantMessage, model: &Model, out: &mut Vec<Value>) {
    let same_model = message.provider == model.provider && message.model == model.id;
    for block in &message.content {
        match block {
            AssistantBlock::Thinking(thinking) => {
                // The reasoning item, replayed as the API gave it (its JSON is the signature).
                match thinking.signature.as_deref().filter(|_| same_model).and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                    Some(item) => out.push(item),
                    None if !thinking.thinking.is_empty() && !thinking.redacted => out.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": thinking.thinking, "annotations": []}], "status": "completed"})),
                    None => {}
                }
            }
            AssistantBlock::Text(text) if !text.text.is_empty() => {
                let mut item = json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text.text, "annotations": []}], "status": "completed"});
                if let Some(id) = text.signature.as_deref().filter(|_| same_model) {
                    item["id"] = json!(id);
                }
                out.push(item);
            }
            AssistantBlock::Text(_) => {}
            AssistantBlock::ToolCall(call) => {
                let (call_id, item_id) = split_call_id(&call.id);
                let mut item = json!({"type": "function_call", "call_id": call_id, "name": call.name, "arguments": call.arguments});
                if let Some(id) = item_id.filter(|_| same_model) {
                    item["id"] = json!(id);
                }
                out.push(item);
            }
        }
    }
}

/// The request body.
pub fn body(request: &Request) -> Value {
    let model = &request.model;
    let compat = Compat::of(model);
    let mut input = Vec::new();
    if let Some(system) = &request.system_prompt {
        let developer = model.reasoning && compat.flag("supportsDeveloperRole") != Some(false);
        input.push(
            json!({"role": if developer { "developer" } else { "system" }, "content": system}),
        );
    }
    for message in context_messages(&request.messages) {
        match &message {
            Message::User(content) => input.push(json!({"role": "user", "content": content.iter().map(user_part).collect::<Vec<_>>()})),
            Message::Assistant(a) => assistant_items(a, model, &mut input),
            Message::ToolResult(result) => {
                let text: Vec<&str> = result.content.iter().filter_map(|c| if let Content::Text(t) = c { Some(t.as_str()) } else { None }).collect();
                input.push(json!({"type": "function_call_output", "call_id": split_call_id(&result.tool_call_id).0, "output": text.join("\n")}));
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    if request.cache_retention != CacheRetention::None
        && compat.text("promptCacheKeyMode") != Some("disabled")
        && let Some(session) = &request.session_id
    {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    // pi's long retention (`PI_CACHE_RETENTION=long`): the cached prefix is kept a day.
    if request.cache_retention == CacheRetention::Long
        && compat.flag("supportsLongCacheRetention") != Some(false)
    {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    body.insert("store".into(), json!(false));
    if compat.flag("supportsMaxOutputTokens") != Some(false) {
        body.insert(
            "max_output_tokens".into(),
            json!(request.max_tokens.unwrap_or(model.max_tokens).max(16)),
        );
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    // Azure's endpoints take `strict`; OpenAI's own sends it only when the model says so.
    let strict = compat
        .flag("supportsStrictMode")
        .unwrap_or(model.api == "azure-openai-responses");
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let parameters = tool_schema(tool);
                let mut function = json!({"type": "function", "name": tool.name, "description": tool.description, "parameters": parameters});
                if strict {
                    function["strict"] = json!(false);
                }
                function
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        let effort = match request.thinking {
            ThinkingLevel::Off => None,
            level => Some(level_name(level)),
        };
        match effort {
            Some(effort) => {
                let value = match compat.level_value(effort) {
                    Some(mapped) => mapped,
                    None => Some(effort.to_string()),
                };
                if let Some(value) = value {
                    body.insert(
                        "reasoning".into(),
                        json!({"effort": value, "summary": "auto"}),
                    );
                    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
                }
            }
            // pi asks a reasoning model not to reason (GitHub Copilot's takes no `none`).
            None if model.provider != "github-copilot" => match compat.level_value("off") {
                Some(None) => {}
                Some(Some(off)) => {
                    body.insert("reasoning".into(), json!({"effort": off}));
                }
                None => {
                    body.insert("reasoning".into(), json!({"effort": "none"}));
                }
            },
            None => {}
        }
    }
    // Last, as pi: the model's sampling parameters override what was set above.
    if let Some(params) = compat.sampling_params(request.thinking) {
        for (key, value) in params {
            body.insert(key, value);
        }
    }
    Value::Object(body)
}
