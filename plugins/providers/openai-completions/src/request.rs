//! The chat completions request body, as pi 1.5.2 builds it (its `buildParams` and
//! `convertMessages`), with the model's `compat` switches applied.

use std::collections::HashMap;

use pith_sdk::compat::CompletionsCompat;
use pith_sdk::grammar_tools::{GrammarTool, replayed_input};
use pith_sdk::provider::*;
use pith_sdk::serde_json::{Map, Value, json};

use crate::thinking;

/// The bridge pi puts between tool results and a user message when a server requires it.
const BRIDGE: &str = "I have processed the tool results.";

fn user_part(content: &Content) -> Option<Value> {
    match content {
        Content::Text(text) if text.is_empty() => None,
        Content::Text(text) => Some(json!({"type": "text", "text": text})),
        Content::Image(image) => Some(
            json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", image.mime_type, image.data)}}),
        ),
    }
}

/// The request's grammar tools, by name.
pub type GrammarTools = HashMap<String, GrammarTool>;

/// A replayed tool call: a grammar tool's as pi's custom call with its raw input.
fn replayed_call(call: &ToolCall, grammar: &GrammarTools) -> Result<Value, String> {
    Ok(match grammar.get(&call.name) {
        Some(tool) => {
            let input = replayed_input(&call.name, &call.arguments, &tool.input_property)?;
            json!({"id": call.id, "type": "custom", "custom": {"name": call.name, "input": input}})
        }
        None => {
            json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
        }
    })
}

/// A tool as declared: a grammar tool as pi's custom tool.
fn declared_tool(
    tool: &ToolDefinition,
    compat: &CompletionsCompat,
    grammar: &GrammarTools,
) -> Value {
    if let Some(grammar) = grammar.get(&tool.name) {
        return json!({"type": "custom", "custom": {"name": tool.name, "description": tool.description,
            "format": {"type": "grammar", "grammar": {"syntax": grammar.syntax, "definition": grammar.definition}}}});
    }
    let mut function = json!({"name": tool.name, "description": tool.description, "parameters": tool_schema(tool)});
    if compat.supports_strict_mode {
        function["strict"] = json!(false);
    }
    json!({"type": "function", "function": function})
}

fn assistant(
    message: &AssistantMessage,
    model: &Model,
    compat: &CompletionsCompat,
    grammar: &GrammarTools,
) -> Result<Option<Value>, String> {
    let same_model = message.provider == model.provider && message.model == model.id;
    let text: String = message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let thinking: Vec<&ThinkingBlock> = message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking(t)
                if same_model && !t.redacted && !t.thinking.trim().is_empty() =>
            {
                Some(t)
            }
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::ToolCall(call) => Some(replayed_call(call, grammar)),
            _ => None,
        })
        .collect::<Result<_, _>>()?;
    let empty = if compat.requires_assistant_after_tool_result
        || compat.requires_non_null_assistant_content
    {
        json!("")
    } else {
        Value::Null
    };
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    if !thinking.is_empty() && compat.requires_thinking_as_text {
        let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
        let mut parts = vec![json!({"type": "text", "text": joined.join("\n\n")})];
        if !text.is_empty() {
            parts.push(json!({"type": "text", "text": text}));
        }
        out.insert("content".into(), Value::Array(parts));
    } else {
        out.insert(
            "content".into(),
            if text.is_empty() { empty } else { json!(text) },
        );
        let field = thinking.first().and_then(|t| {
            t.signature.clone().filter(|s| {
                matches!(
                    s.as_str(),
                    "reasoning_content" | "reasoning" | "reasoning_text"
                )
            })
        });
        if let Some(field) = field {
            let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
            out.insert(field, json!(joined.join("\n")));
        }
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !out.contains_key("reasoning_content")
    {
        out.insert("reasoning_content".into(), json!(""));
    }
    let content_empty = match &out["content"] {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if content_empty && calls_empty(&out) {
        return Ok(None);
    }
    Ok(Some(Value::Object(out)))
}

fn calls_empty(message: &Map<String, Value>) -> bool {
    !message.contains_key("tool_calls")
}

/// The conversation as chat messages.
fn messages(
    request: &Request,
    compat: &CompletionsCompat,
    grammar: &GrammarTools,
) -> Result<Vec<Value>, String> {
    let model = &request.model;
    let mut out = Vec::new();
    if let Some(system) = &request.system_prompt {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": system}));
    }
    let sees_images = model.input.contains(&InputKind::Image);
    let mut last_was_tool_result = false;
    let mut pending_images: Vec<Value> = Vec::new();
    let flush_images = |out: &mut Vec<Value>, images: &mut Vec<Value>| {
        if images.is_empty() {
            return;
        }
        if compat.requires_assistant_after_tool_result {
            out.push(json!({"role": "assistant", "content": BRIDGE}));
        }
        let mut parts =
            vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
        parts.append(images);
        out.push(json!({"role": "user", "content": parts}));
    };
    for message in context_messages(&request.messages) {
        if !matches!(message, Message::ToolResult(_)) {
            flush_images(&mut out, &mut pending_images);
        }
        match &message {
            Message::User(content) => {
                let parts: Vec<Value> = content.iter().filter_map(user_part).collect();
                if parts.is_empty() {
                    continue;
                }
                if compat.requires_assistant_after_tool_result && last_was_tool_result {
                    out.push(json!({"role": "assistant", "content": BRIDGE}));
                }
                out.push(json!({"role": "user", "content": parts}));
                last_was_tool_result = false;
            }
            Message::Assistant(answer) => {
                if let Some(converted) = assistant(answer, model, compat, grammar)? {
                    out.push(converted);
                    last_was_tool_result = false;
                }
            }
            Message::ToolResult(result) => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect();
                let images: Vec<Value> = result
                    .content
                    .iter()
                    .filter(|c| matches!(c, Content::Image(_)))
                    .filter_map(user_part)
                    .collect();
                let mut joined = text.join("\n");
                if joined.trim().is_empty() {
                    joined = if images.is_empty() {
                        "(no tool output)".into()
                    } else {
                        "(see attached image)".into()
                    };
                }
                let mut tool =
                    json!({"role": "tool", "content": joined, "tool_call_id": result.tool_call_id});
                if compat.requires_tool_result_name && !result.tool_name.is_empty() {
                    tool["name"] = json!(result.tool_name);
                }
                out.push(tool);
                if sees_images {
                    pending_images.extend(images);
                }
                last_was_tool_result = true;
            }
        }
    }
    flush_images(&mut out, &mut pending_images);
    Ok(out)
}

fn has_tool_history(request: &Request) -> bool {
    request.messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a
            .content
            .iter()
            .any(|b| matches!(b, AssistantBlock::ToolCall(_))),
        Message::User(_) => false,
    })
}

/// pi's anthropic-style cache marks: the first system message, the last tool, and the last
/// message with text.
fn mark_cache(body: &mut Map<String, Value>, mark: &Value) {
    let with_mark = |content: &mut Value| -> bool {
        match content {
            Value::String(text) => {
                *content = json!([{"type": "text", "text": text.clone(), "cache_control": mark}]);
                true
            }
            Value::Array(parts) => match parts.iter_mut().rev().find(|p| p["type"] == "text") {
                Some(part) => {
                    part["cache_control"] = mark.clone();
                    true
                }
                None => false,
            },
            _ => false,
        }
    };
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        if let Some(first) = messages
            .iter_mut()
            .find(|m| m["role"] == "system" || m["role"] == "developer")
        {
            with_mark(&mut first["content"]);
        }
        for message in messages.iter_mut().rev() {
            let role = message["role"].as_str().unwrap_or("");
            if matches!(role, "user" | "assistant" | "tool") && with_mark(&mut message["content"]) {
                break;
            }
        }
    }
    if let Some(Value::Array(tools)) = body.get_mut("tools")
        && let Some(last) = tools.last_mut()
    {
        last["cache_control"] = mark.clone();
    }
}

/// The request body.
pub fn body(
    request: &Request,
    compat: &CompletionsCompat,
    grammar: &GrammarTools,
) -> Result<Value, String> {
    let model = &request.model;
    let long = request.cache_retention == CacheRetention::Long;
    let caching = request.cache_retention != CacheRetention::None;
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "messages".into(),
        Value::Array(messages(request, compat, grammar)?),
    );
    body.insert("stream".into(), json!(true));
    let cache_key = match compat.prompt_cache_key_mode.as_str() {
        "enabled" => true,
        "disabled" => false,
        _ => {
            model.base_url.contains("api.openai.com")
                || (long && compat.supports_long_cache_retention)
        }
    };
    if caching
        && cache_key
        && let Some(session) = request.session_id.as_deref()
    {
        let key: String = session.chars().take(64).collect();
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if long && compat.supports_long_cache_retention {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    let max_tokens = request.max_tokens.unwrap_or(model.max_tokens);
    if max_tokens > 0 {
        body.insert(compat.max_tokens_field.clone(), json!(max_tokens));
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| declared_tool(tool, compat, grammar))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        if compat.zai_tool_stream {
            body.insert("tool_stream".into(), json!(true));
        }
    } else if compat.requires_tools_with_tool_history && has_tool_history(request) {
        body.insert("tools".into(), json!([]));
    }
    if compat.anthropic_cache_control && caching {
        let mut mark = json!({"type": "ephemeral"});
        if long && compat.supports_long_cache_retention {
            mark["ttl"] = json!("1h");
        }
        mark_cache(&mut body, &mark);
    }
    if let Some(priority) = &compat.vllm_priority {
        body.insert("priority".into(), priority.clone());
    }
    thinking::apply(&mut body, request, compat);
    if let Some(routing) = compat.raw.get("openRouterRouting") {
        body.insert("provider".into(), routing.clone());
    }
    if let Some(gateway) = compat.raw.get("vercelGatewayRouting") {
        let mut picked = Map::new();
        for key in ["only", "order"] {
            if let Some(value) = gateway.get(key) {
                picked.insert(key.into(), value.clone());
            }
        }
        if !picked.is_empty() {
            body.insert("providerOptions".into(), json!({"gateway": picked}));
        }
    }
    // Last, as pi: the model's sampling parameters override what was set above.
    if let Some(params) = compat.raw.sampling_params(request.thinking) {
        for (key, value) in params {
            body.insert(key, value);
        }
    }
    Ok(Value::Object(body))
}

/// The session affinity headers pi sends when the server asks for them.
pub fn session_headers(request: &Request, compat: &CompletionsCompat) -> Vec<(String, String)> {
    let Some(session) = request.session_id.as_deref().filter(|_| {
        compat.send_session_affinity_headers && request.cache_retention != CacheRetention::None
    }) else {
        return Vec::new();
    };
    let names: &[&str] = match compat.session_affinity_format.as_str() {
        "openrouter" => &["x-session-id"],
        "openai-nosession" => &["x-client-request-id", "x-session-affinity"],
        _ => &["session_id", "x-client-request-id", "x-session-affinity"],
    };
    names
        .iter()
        .map(|name| (name.to_string(), session.to_string()))
        .collect()
}
