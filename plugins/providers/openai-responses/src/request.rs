//! The Responses API request body.

use std::collections::HashMap;

use pith_sdk::compat::{Compat, level_name};
use pith_sdk::grammar_tools::{GrammarTool, replayed_input};
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

/// The request's grammar tools, by name.
pub type GrammarTools = HashMap<String, GrammarTool>;

/// A replayed tool call: a grammar tool's as pi's `custom_tool_call` with its raw input (its
/// item id kept only when it is a custom call's, `ctc_…`).
fn replayed_call(
    call: &ToolCall,
    same_model: bool,
    grammar: &GrammarTools,
) -> Result<Value, String> {
    let (call_id, item_id) = split_call_id(&call.id);
    let (mut item, prefix) = match grammar.get(&call.name) {
        Some(tool) => {
            let input = replayed_input(&call.name, &call.arguments, &tool.input_property)?;
            (
                json!({"type": "custom_tool_call", "call_id": call_id, "name": call.name, "input": input}),
                Some("ctc_"),
            )
        }
        None => (
            json!({"type": "function_call", "call_id": call_id, "name": call.name, "arguments": call.arguments}),
            None,
        ),
    };
    if let Some(id) = item_id.filter(|id| same_model && prefix.is_none_or(|p| id.starts_with(p))) {
        item["id"] = json!(id);
    }
    Ok(item)
}

/// A tool as declared: a grammar tool as pi's custom tool.
fn declared_tool(tool: &ToolDefinition, strict: bool, grammar: &GrammarTools) -> Value {
    if let Some(grammar) = grammar.get(&tool.name) {
        return json!({"type": "custom", "name": tool.name, "description": tool.description,
            "format": {"type": "grammar", "syntax": grammar.syntax, "definition": grammar.definition}});
    }
    let mut function = json!({"type": "function", "name": tool.name, "description": tool.description, "parameters": tool_schema(tool)});
    if strict {
        function["strict"] = json!(false);
    }
    function
}

fn assistant_items(
    message: &AssistantMessage,
    model: &Model,
    grammar: &GrammarTools,
    out: &mut Vec<Value>,
) -> Result<(), String> {
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
            AssistantBlock::ToolCall(call) => out.push(replayed_call(call, same_model, grammar)?),
        }
    }
    Ok(())
}

/// The request body.
pub fn body(request: &Request, grammar: &GrammarTools) -> Result<Value, String> {
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
            Message::Assistant(a) => assistant_items(a, model, grammar, &mut input)?,
            Message::ToolResult(result) => {
                let text: Vec<&str> = result.content.iter().filter_map(|c| if let Content::Text(t) = c { Some(t.as_str()) } else { None }).collect();
                let kind = if grammar.contains_key(&result.tool_name) { "custom_tool_call_output" } else { "function_call_output" };
                input.push(json!({"type": kind, "call_id": split_call_id(&result.tool_call_id).0, "output": text.join("\n")}));
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
            .map(|tool| declared_tool(tool, strict, grammar))
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
    Ok(Value::Object(body))
}
