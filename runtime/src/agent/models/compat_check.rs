//! `models.json`'s `compat` objects checked as pi 1.5.2's schema types them (one set of fields
//! for every API, as pi validates them), and merged as pi's `mergeCompat` merges them.
//!
//! Where pi differs: pi accepts a field it does not know without a word and rejects the whole
//! file for one wrong type. pith names an unknown field (with the model) and keeps the model,
//! and a wrong type leaves out only the model or provider that has it.

use serde_json::{Map, Value};

/// What a field's value must be.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Number,
    Object,
    Array,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A map of literals or `{"$var": …}` objects (chat-template arguments).
    TemplateArguments,
}

const AFFINITY: &[&str] = &["openai", "openai-nosession", "openrouter"];

/// pi's compat fields, every API's (its `ProviderCompatSchema`), and their types.
const FIELDS: &[(&str, Kind)] = &[
    ("supportsStore", Kind::Bool),
    ("supportsDeveloperRole", Kind::Bool),
    ("supportsReasoningEffort", Kind::Bool),
    ("supportsUsageInStreaming", Kind::Bool),
    ("supportsFinishReason", Kind::Bool),
    (
        "maxTokensField",
        Kind::OneOf(&["max_completion_tokens", "max_tokens"]),
    ),
    ("requiresToolResultName", Kind::Bool),
    ("requiresAssistantAfterToolResult", Kind::Bool),
    ("requiresNonNullAssistantContent", Kind::Bool),
    ("requiresToolsWithToolHistory", Kind::Bool),
    ("requiresThinkingAsText", Kind::Bool),
    ("requiresReasoningContentOnAssistantMessages", Kind::Bool),
    (
        "thinkingFormat",
        Kind::OneOf(&[
            "openai",
            "openrouter",
            "deepseek",
            "together",
            "baseten",
            "zai",
            "qwen",
            "chat-template",
            "qwen-chat-template",
            "string-thinking",
            "ant-ling",
        ]),
    ),
    ("chatTemplateKwargs", Kind::TemplateArguments),
    ("chatTemplateArgs", Kind::TemplateArguments),
    ("openRouterRouting", Kind::Object),
    ("vercelGatewayRouting", Kind::Object),
    ("zaiToolStream", Kind::Bool),
    ("supportsThinkingTokenBudget", Kind::Bool),
    (
        "thinkingTokenBudgetField",
        Kind::OneOf(&[
            "thinking_token_budget",
            "thinking_budget",
            "thinking_budget_tokens",
        ]),
    ),
    ("supportsStrictMode", Kind::Bool),
    ("supportsOpenAIGrammarTools", Kind::Bool),
    ("supportsMidConvoSystemMessages", Kind::Bool),
    ("supportsMidConvoToolAdditions", Kind::Bool),
    ("cacheControlFormat", Kind::OneOf(&["anthropic"])),
    ("sendSessionAffinityHeaders", Kind::Bool),
    ("sessionAffinityFormat", Kind::OneOf(AFFINITY)),
    ("supportsLongCacheRetention", Kind::Bool),
    (
        "promptCacheKeyMode",
        Kind::OneOf(&["auto", "enabled", "disabled"]),
    ),
    ("vllmPriority", Kind::Number),
    // openai-responses
    ("supportsExplicitPromptCacheMode", Kind::Bool),
    ("supportsAdditionalTools", Kind::Bool),
    ("supportsToolSearch", Kind::Bool),
    ("supportsMidConvoEffort", Kind::Bool),
    ("supportsMaxOutputTokens", Kind::Bool),
    // anthropic-messages
    ("supportsEagerToolInputStreaming", Kind::Bool),
    ("supportsCacheControlOnTools", Kind::Bool),
    ("supportsTemperature", Kind::Bool),
    ("forceAdaptiveThinking", Kind::Bool),
    ("allowEmptySignature", Kind::Bool),
    ("supportsStrictTools", Kind::Bool),
    ("supportsMidConvoToolChanges", Kind::Bool),
    ("supportsMessageThreads", Kind::Bool),
    ("allowedFallbackModels", Kind::Array),
    // classifiers
    (
        "imageInput",
        Kind::OneOf(&["assets", "images", "state-image-urls"]),
    ),
    ("sendImageOptInHeader", Kind::Bool),
    // pi's catalog and pith's own (Azure, thinking levels), set by the runtime
    ("thinkingLevelMap", Kind::Object),
    ("azureApiVersion", Kind::OneOf(&[])),
    ("azureDeploymentName", Kind::OneOf(&[])),
];

/// The fields whose objects merge key by key (pi's `mergeCompat`).
const NESTED: &[&str] = &[
    "openRouterRouting",
    "vercelGatewayRouting",
    "chatTemplateKwargs",
    "chatTemplateArgs",
];

/// What is wrong with a `compat` value.
#[derive(Debug, Default)]
pub struct Findings {
    /// Wrong types: the owner is left out.
    pub errors: Vec<String>,
    /// Fields pi does not define: ignored.
    pub unknown: Vec<String>,
}

fn type_error(value: &Value, kind: Kind) -> Option<String> {
    let ok = match kind {
        Kind::Bool => value.is_boolean(),
        Kind::Number => value.is_number(),
        Kind::Object => value.is_object(),
        Kind::Array => value.is_array(),
        Kind::OneOf([]) => value.is_string(),
        Kind::OneOf(choices) => value.as_str().is_some_and(|s| choices.contains(&s)),
        Kind::TemplateArguments => {
            return match value.as_object() {
                None => Some("must be an object".into()),
                Some(map) => map.iter().find_map(|(key, v)| match v {
                    Value::Object(spec)
                        if !matches!(
                            spec.get("$var").and_then(Value::as_str),
                            Some("thinking.enabled" | "thinking.effort" | "thinking.budget")
                        ) =>
                    {
                        Some(format!(
                            "{key}: an object must have \"$var\": \"thinking.enabled\", \"thinking.effort\" or \"thinking.budget\""
                        ))
                    }
                    Value::Array(_) => Some(format!(
                        "{key}: must be a string, number, boolean, null or {{\"$var\": …}}"
                    )),
                    _ => None,
                }),
            };
        }
    };
    if ok {
        return None;
    }
    Some(match kind {
        Kind::Bool => "must be true or false".into(),
        Kind::Number => "must be a number".into(),
        Kind::Object => "must be an object".into(),
        Kind::Array => "must be a list".into(),
        Kind::OneOf([]) => "must be a string".into(),
        Kind::OneOf(choices) => format!(
            "must be one of {}",
            choices
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Kind::TemplateArguments => unreachable!("answered above"),
    })
}

/// Checks the `compat` of `owner` (e.g. `model "local/qwen"`).
pub fn check(compat: &Value, owner: &str) -> Findings {
    let mut findings = Findings::default();
    let Some(map) = compat.as_object() else {
        findings
            .errors
            .push(format!("{owner}: compat must be an object"));
        return findings;
    };
    for (field, value) in map {
        match FIELDS.iter().find(|(name, _)| name == field) {
            None => findings.unknown.push(format!(
                "{owner}: compat.{field} is not a field pi defines; it is ignored (see pi's docs/models-configuration.md, \"Compatibility\")"
            )),
            Some((_, kind)) => {
                if !value.is_null()
                    && let Some(problem) = type_error(value, *kind)
                {
                    findings
                        .errors
                        .push(format!("{owner}: compat.{field} {problem}"));
                }
            }
        }
    }
    findings.errors.sort();
    findings.unknown.sort();
    findings
}

/// `samplingParams` (an object) and `samplingParamsByThinkingLevel` (an object of objects) of
/// `owner`; the problem when either is of another type.
pub fn check_sampling(model: &Map<String, Value>, owner: &str) -> Option<String> {
    match model.get("samplingParams") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => return Some(format!("{owner}: samplingParams must be an object")),
    }
    match model.get("samplingParamsByThinkingLevel") {
        None | Some(Value::Null) => None,
        Some(Value::Object(levels)) => {
            levels
                .iter()
                .find(|(_, v)| !v.is_object())
                .map(|(level, _)| {
                    format!("{owner}: samplingParamsByThinkingLevel.{level} must be an object")
                })
        }
        Some(_) => Some(format!(
            "{owner}: samplingParamsByThinkingLevel must be an object"
        )),
    }
}

/// `override_` over `base`, field by field (pi's `mergeCompat`: the routing and template
/// objects merge one level deep).
pub fn merge(base: Option<&Value>, override_: Option<&Value>) -> Option<Value> {
    let Some(over) = override_.and_then(Value::as_object) else {
        return base.cloned();
    };
    let mut merged = base.and_then(Value::as_object).cloned().unwrap_or_default();
    for (key, value) in over {
        let nested = NESTED.contains(&key.as_str());
        match (merged.get_mut(key), value) {
            (Some(Value::Object(into)), Value::Object(from)) if nested => {
                for (k, v) in from {
                    into.insert(k.clone(), v.clone());
                }
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    Some(Value::Object(merged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrong_types_and_unknown_fields_are_named() {
        let findings = check(
            &json!({"supportsStore": "yes", "maxTokensField": "x", "fooBar": 1,
                    "chatTemplateKwargs": {"a": {"foo": 1}}, "thinkingFormat": "qwen"}),
            "model \"local/m\"",
        );
        assert_eq!(
            findings.errors,
            [
                "model \"local/m\": compat.chatTemplateKwargs a: an object must have \"$var\": \"thinking.enabled\", \"thinking.effort\" or \"thinking.budget\"",
                "model \"local/m\": compat.maxTokensField must be one of \"max_completion_tokens\", \"max_tokens\"",
                "model \"local/m\": compat.supportsStore must be true or false",
            ]
        );
        assert_eq!(findings.unknown.len(), 1);
        assert!(
            findings.unknown[0]
                .starts_with("model \"local/m\": compat.fooBar is not a field pi defines")
        );
        assert!(check(&json!(null), "x").errors[0].ends_with("compat must be an object"));
    }

    #[test]
    fn merging_is_pis() {
        let merged = merge(
            Some(&json!({"supportsStore": false, "chatTemplateKwargs": {"a": 1, "b": 2}})),
            Some(
                &json!({"supportsStore": true, "chatTemplateKwargs": {"b": 3}, "zaiToolStream": true}),
            ),
        );
        assert_eq!(
            merged,
            Some(
                json!({"supportsStore": true, "chatTemplateKwargs": {"a": 1, "b": 3}, "zaiToolStream": true})
            )
        );
        assert_eq!(merge(None, None), None);
    }
}
