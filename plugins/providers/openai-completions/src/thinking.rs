//! How a reasoning model is asked to think, in each of pi's `thinkingFormat`s, with its
//! thinking-level map, budget field and chat-template arguments (pi 1.5.2's `buildParams`).

use pith_sdk::compat::{CompletionsCompat, ThinkingFormat, level_name};
use pith_sdk::provider::*;
use pith_sdk::serde_json::{Map, Value, json};

/// pi's default thinking budgets for minimal, low, medium and high.
const BUDGETS: [u32; 4] = [1024, 2048, 8192, 16384];

/// The budget of `level` (xhigh counts as high), within the output limit less 1024.
fn budget(request: &Request, body: &Map<String, Value>, level: ThinkingLevel) -> Option<u64> {
    let index = match level {
        ThinkingLevel::Off => return None,
        ThinkingLevel::Minimal => 0,
        ThinkingLevel::Low => 1,
        ThinkingLevel::Medium => 2,
        ThinkingLevel::High | ThinkingLevel::Xhigh => 3,
    };
    let budgets = request.thinking_budgets.as_deref().unwrap_or(&BUDGETS);
    let chosen = u64::from(*budgets.get(index).unwrap_or(&BUDGETS[index]));
    let ceiling = body
        .get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(request.model.max_tokens));
    let value = chosen.min(ceiling.saturating_sub(1024));
    (value > 0).then_some(value)
}

/// Resolves `chatTemplateKwargs`/`chatTemplateArgs` for the level: literals as they are,
/// `{"$var": …}` from the thinking state, `omitWhenOff` dropped when off.
fn template_arguments(
    compat: &CompletionsCompat,
    field: &str,
    effort: Option<&str>,
    budget: Option<u64>,
) -> Option<Value> {
    let source = compat.raw.get(field)?.as_object()?;
    let mut out = Map::new();
    for (key, value) in source {
        let resolved = match value {
            Value::Object(spec) => {
                if effort.is_none()
                    && spec.get("omitWhenOff").and_then(Value::as_bool) == Some(true)
                {
                    continue;
                }
                match spec.get("$var").and_then(Value::as_str) {
                    Some("thinking.enabled") => Some(json!(effort.is_some())),
                    Some("thinking.budget") => budget.map(|b| json!(b)),
                    _ => {
                        let mapped = compat.raw.level_value(effort.unwrap_or("off"));
                        match mapped {
                            None => effort.map(|e| json!(e)),
                            Some(Some(value)) => Some(json!(value)),
                            Some(None) => None,
                        }
                    }
                }
            }
            literal => Some(literal.clone()),
        };
        if let Some(resolved) = resolved {
            out.insert(key.clone(), resolved);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Adds the thinking fields of the request's level to `body`.
pub fn apply(body: &mut Map<String, Value>, request: &Request, compat: &CompletionsCompat) {
    if !request.model.reasoning {
        return;
    }
    let level = request.thinking;
    let effort = (level != ThinkingLevel::Off).then(|| level_name(level));
    // The wire value of the level: the map's, else the level's own name.
    let mapped = |level: &str| -> Option<String> {
        match compat.raw.level_value(level) {
            Some(value) => value,
            None => Some(level.to_string()),
        }
    };
    let off_value = compat.raw.level_value("off");
    let off_is_null = off_value == Some(None);
    let off_string = off_value.flatten();
    let budget_value = effort.and_then(|_| budget(request, body, level));
    let mut put = |key: &str, value: Value| {
        body.insert(key.to_string(), value);
    };
    let effort_field = |put: &mut dyn FnMut(&str, Value)| {
        if compat.supports_reasoning_effort
            && let Some(value) = effort.and_then(mapped)
        {
            put("reasoning_effort", json!(value));
        }
    };
    match (compat.thinking_format, effort) {
        (ThinkingFormat::Zai, Some(_)) => {
            put(
                "thinking",
                json!({"type": "enabled", "clear_thinking": false}),
            );
            effort_field(&mut put);
        }
        (ThinkingFormat::Zai, None) => put("thinking", json!({"type": "disabled"})),
        (ThinkingFormat::Qwen, Some(_)) => {
            put("enable_thinking", json!(true));
            effort_field(&mut put);
        }
        (ThinkingFormat::Qwen, None) => put("enable_thinking", json!(false)),
        (ThinkingFormat::QwenChatTemplate, on) => put(
            "chat_template_kwargs",
            json!({"enable_thinking": on.is_some(), "preserve_thinking": true}),
        ),
        (ThinkingFormat::ChatTemplate, on) => {
            if let Some(args) = template_arguments(compat, "chatTemplateKwargs", on, budget_value) {
                put("chat_template_kwargs", args);
            }
        }
        (ThinkingFormat::Baseten, on) => {
            if let Some(args) = template_arguments(compat, "chatTemplateArgs", on, budget_value) {
                put("chat_template_args", args);
            }
            match on {
                Some(_) => effort_field(&mut put),
                None => {
                    if compat.supports_reasoning_effort
                        && let Some(off) = &off_string
                    {
                        put("reasoning_effort", json!(off));
                    }
                }
            }
        }
        (ThinkingFormat::Deepseek, Some(_)) => {
            put("thinking", json!({"type": "enabled"}));
            effort_field(&mut put);
        }
        (ThinkingFormat::Deepseek, None) => {
            if !off_is_null {
                put("thinking", json!({"type": "disabled"}));
            }
        }
        (ThinkingFormat::Openrouter, Some(e)) => {
            if let Some(value) = mapped(e) {
                put("reasoning", json!({"effort": value}));
            }
        }
        (ThinkingFormat::Openrouter, None) => {
            if !off_is_null {
                put(
                    "reasoning",
                    json!({"effort": off_string.clone().unwrap_or("none".into())}),
                );
            }
        }
        (ThinkingFormat::AntLing, Some(e)) => {
            if let Some(Some(value)) = compat.raw.level_value(e) {
                put("reasoning", json!({"effort": value}));
            }
        }
        (ThinkingFormat::Together, Some(_)) => {
            put("reasoning", json!({"enabled": true}));
            effort_field(&mut put);
        }
        (ThinkingFormat::Together, None) => put("reasoning", json!({"enabled": false})),
        (ThinkingFormat::StringThinking, Some(e)) => {
            if let Some(value) = mapped(e) {
                put("thinking", json!(value));
            }
        }
        (ThinkingFormat::StringThinking, None) => {
            if !off_is_null {
                put(
                    "thinking",
                    json!(off_string.clone().unwrap_or("none".into())),
                );
            }
        }
        // OpenAI's, and Ant Ling's when off.
        (_, Some(_)) => effort_field(&mut put),
        (_, None) => {
            if compat.supports_reasoning_effort
                && let Some(off) = &off_string
            {
                put("reasoning_effort", json!(off));
            }
        }
    }
    if let (Some(field), Some(value)) = (&compat.thinking_token_budget_field, budget_value) {
        put(field, json!(value));
    }
}
