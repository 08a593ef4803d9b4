//! A model's compatibility switches, as pi's `models.json` `compat` defines them: the runtime
//! hands each provider the merged `compat` JSON of the model (the catalog's, then the
//! provider's, then the model's, field by field) with the model's `samplingParams` and
//! `samplingParamsByThinkingLevel` in it. This module reads them the way pi's providers do,
//! with pi's detection from the provider name and base URL where a field is not set, so a
//! third-party provider component reads them as the built-in ones do.

use serde_json::{Map, Value};

use crate::provider::{Model, ThinkingLevel};

/// The raw switches of a model (an empty map when it has none).
#[derive(Debug, Clone, Default)]
pub struct Compat(pub Map<String, Value>);

impl Compat {
    /// The switches of `model`.
    pub fn of(model: &Model) -> Compat {
        Compat(
            model
                .compat
                .as_deref()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .and_then(|value| match value {
                    Value::Object(map) => Some(map),
                    _ => None,
                })
                .unwrap_or_default(),
        )
    }

    /// A field's value, if set (JSON `null` counts as unset).
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field).filter(|v| !v.is_null())
    }

    /// A boolean field, if set.
    pub fn flag(&self, field: &str) -> Option<bool> {
        self.get(field).and_then(Value::as_bool)
    }

    /// A string field, if set.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.get(field).and_then(Value::as_str)
    }

    /// The thinking-level map (`thinkingLevelMap`): a level's wire value; `Some(None)` when
    /// the map sends nothing for it (`null`), `None` when the map does not name it.
    pub fn level_value(&self, level: &str) -> Option<Option<String>> {
        let map = self.get("thinkingLevelMap")?.as_object()?;
        match map.get(level)? {
            Value::String(s) => Some(Some(s.clone())),
            _ => Some(None),
        }
    }

    /// The sampling parameters for `level` (pi's `resolveSamplingParams`): the model's
    /// `samplingParams`, then its `samplingParamsByThinkingLevel` entry for the level, later
    /// keys winning; `None` when neither is set.
    pub fn sampling_params(&self, level: ThinkingLevel) -> Option<Map<String, Value>> {
        let base = self.get("samplingParams").and_then(Value::as_object);
        let by_level = self
            .get("samplingParamsByThinkingLevel")
            .and_then(|levels| levels.get(level_name(level)))
            .and_then(Value::as_object);
        if base.is_none() && by_level.is_none() {
            return None;
        }
        let mut merged = base.cloned().unwrap_or_default();
        for (key, value) in by_level.into_iter().flatten() {
            merged.insert(key.clone(), value.clone());
        }
        Some(merged)
    }
}

/// A thinking level as pi names it.
pub fn level_name(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "off",
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    }
}

/// How an OpenAI-compatible server takes thinking (`thinkingFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingFormat {
    /// `reasoning_effort` (OpenAI's).
    Openai,
    /// `reasoning: {effort}` (OpenRouter's).
    Openrouter,
    /// `thinking: {type}` and `reasoning_effort` (DeepSeek's).
    Deepseek,
    /// `reasoning: {enabled}` and `reasoning_effort` (Together's).
    Together,
    /// `chat_template_args` and `reasoning_effort` (Baseten's).
    Baseten,
    /// `thinking: {type, clear_thinking}` (z.ai's).
    Zai,
    /// `enable_thinking` (Qwen's API).
    Qwen,
    /// `chat_template_kwargs` from `chatTemplateKwargs`.
    ChatTemplate,
    /// `chat_template_kwargs: {enable_thinking, preserve_thinking}` (Qwen's template).
    QwenChatTemplate,
    /// A top-level `thinking` string.
    StringThinking,
    /// `reasoning: {effort}` from the level map only (Ant Ling's).
    AntLing,
}

impl ThinkingFormat {
    /// Parses pi's name.
    pub fn parse(name: &str) -> Option<ThinkingFormat> {
        Some(match name {
            "openai" => ThinkingFormat::Openai,
            "openrouter" => ThinkingFormat::Openrouter,
            "deepseek" => ThinkingFormat::Deepseek,
            "together" => ThinkingFormat::Together,
            "baseten" => ThinkingFormat::Baseten,
            "zai" => ThinkingFormat::Zai,
            "qwen" => ThinkingFormat::Qwen,
            "chat-template" => ThinkingFormat::ChatTemplate,
            "qwen-chat-template" => ThinkingFormat::QwenChatTemplate,
            "string-thinking" => ThinkingFormat::StringThinking,
            "ant-ling" => ThinkingFormat::AntLing,
            _ => return None,
        })
    }
}

/// The switches of an `openai-completions` model, resolved as pi's `getCompat` resolves them:
/// each field as set, else as detected from the provider and the base URL.
#[derive(Debug, Clone)]
pub struct CompletionsCompat {
    /// Sends `store: false`.
    pub supports_store: bool,
    /// A reasoning model's instructions go as `developer`.
    pub supports_developer_role: bool,
    /// Sends `reasoning_effort`.
    pub supports_reasoning_effort: bool,
    /// Asks for usage in the stream (`stream_options`).
    pub supports_usage_in_streaming: bool,
    /// The stream ends with a `finish_reason` (else stop or toolUse is inferred).
    pub supports_finish_reason: bool,
    /// `max_tokens` rather than `max_completion_tokens`.
    pub max_tokens_field: String,
    /// Tool results carry the tool's `name`.
    pub requires_tool_result_name: bool,
    /// An assistant message goes between tool results and a user message.
    pub requires_assistant_after_tool_result: bool,
    /// An assistant message without text sends `""`, not `null`.
    pub requires_non_null_assistant_content: bool,
    /// `tools: []` when there are no tools but the history has tool calls.
    pub requires_tools_with_tool_history: bool,
    /// Thinking is replayed as text.
    pub requires_thinking_as_text: bool,
    /// Every replayed assistant message of a reasoning model has `reasoning_content`.
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// How thinking is asked for.
    pub thinking_format: ThinkingFormat,
    /// Tools carry `strict`.
    pub supports_strict_mode: bool,
    /// System messages after the first are kept in place.
    pub supports_mid_convo_system_messages: bool,
    /// `tool_stream: true` with tools (z.ai).
    pub zai_tool_stream: bool,
    /// The top-level field of the thinking budget, if any.
    pub thinking_token_budget_field: Option<String>,
    /// Anthropic-style `cache_control` marks.
    pub anthropic_cache_control: bool,
    /// Sends the session's affinity headers.
    pub send_session_affinity_headers: bool,
    /// Their format: `openai`, `openai-nosession` or `openrouter`.
    pub session_affinity_format: String,
    /// `prompt_cache_retention: "24h"` with long retention.
    pub supports_long_cache_retention: bool,
    /// `auto`, `enabled` or `disabled`.
    pub prompt_cache_key_mode: String,
    /// vLLM's `priority`.
    pub vllm_priority: Option<Value>,
    /// The raw switches (routing objects and template arguments are read from them).
    pub raw: Compat,
}

impl CompletionsCompat {
    /// The switches of `model`, pi's detection filling what is not set.
    pub fn of(model: &Model) -> CompletionsCompat {
        let raw = Compat::of(model);
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let id = model.id.as_str();
        let is = |names: &[&str], parts: &[&str]| {
            names.contains(&provider) || parts.iter().any(|p| url.contains(p))
        };
        let zai = is(&["zai", "zai-coding-cn"], &["api.z.ai", "open.bigmodel.cn"]);
        let together = is(&["together"], &["api.together.ai", "api.together.xyz"]);
        let moonshot = is(&["moonshotai", "moonshotai-cn"], &["api.moonshot."]);
        let openrouter = is(&["openrouter"], &["openrouter.ai"]);
        let cf_workers = is(&["cloudflare-workers-ai"], &["api.cloudflare.com"]);
        let cf_gateway = is(&["cloudflare-ai-gateway"], &["gateway.ai.cloudflare.com"]);
        let nvidia = is(&["nvidia"], &["integrate.api.nvidia.com"]);
        let ant_ling = is(&["ant-ling"], &["api.ant-ling.com"]);
        let cerebras = is(&["cerebras"], &["cerebras.ai"]);
        let deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
        let grok = is(&["xai"], &["api.x.ai"]);
        let chutes = url.contains("chutes.ai");
        let opencode = is(&["opencode"], &["opencode.ai"]);
        let non_standard = nvidia
            || cerebras
            || grok
            || together
            || chutes
            || deepseek
            || zai
            || moonshot
            || opencode
            || cf_workers
            || cf_gateway
            || ant_ling;
        let use_max_tokens =
            chutes || deepseek || moonshot || cf_gateway || together || nvidia || ant_ling || zai;
        let detected_format = if deepseek {
            ThinkingFormat::Deepseek
        } else if zai {
            ThinkingFormat::Zai
        } else if together {
            ThinkingFormat::Together
        } else if ant_ling {
            ThinkingFormat::AntLing
        } else if openrouter {
            ThinkingFormat::Openrouter
        } else {
            ThinkingFormat::Openai
        };
        let flag = |field: &str, detected: bool| raw.flag(field).unwrap_or(detected);
        CompletionsCompat {
            supports_store: flag("supportsStore", !non_standard),
            supports_developer_role: flag(
                "supportsDeveloperRole",
                (openrouter && (id.starts_with("anthropic/") || id.starts_with("openai/")))
                    || (!non_standard && !openrouter),
            ),
            supports_reasoning_effort: flag(
                "supportsReasoningEffort",
                !(grok || zai || moonshot || together || cf_gateway || nvidia || ant_ling),
            ),
            supports_usage_in_streaming: flag("supportsUsageInStreaming", true),
            supports_finish_reason: flag("supportsFinishReason", true),
            max_tokens_field: raw
                .text("maxTokensField")
                .unwrap_or(if use_max_tokens {
                    "max_tokens"
                } else {
                    "max_completion_tokens"
                })
                .to_string(),
            requires_tool_result_name: flag("requiresToolResultName", false),
            requires_assistant_after_tool_result: flag("requiresAssistantAfterToolResult", false),
            requires_non_null_assistant_content: flag("requiresNonNullAssistantContent", false),
            requires_tools_with_tool_history: flag("requiresToolsWithToolHistory", false),
            requires_thinking_as_text: flag("requiresThinkingAsText", false),
            requires_reasoning_content_on_assistant_messages: flag(
                "requiresReasoningContentOnAssistantMessages",
                deepseek,
            ),
            thinking_format: raw
                .text("thinkingFormat")
                .and_then(ThinkingFormat::parse)
                .unwrap_or(detected_format),
            supports_strict_mode: flag("supportsStrictMode", false),
            supports_mid_convo_system_messages: flag("supportsMidConvoSystemMessages", false),
            zai_tool_stream: flag("zaiToolStream", false),
            thinking_token_budget_field: raw
                .text("thinkingTokenBudgetField")
                .map(str::to_string)
                .or_else(|| {
                    flag("supportsThinkingTokenBudget", false)
                        .then(|| "thinking_token_budget".to_string())
                }),
            anthropic_cache_control: match raw.text("cacheControlFormat") {
                Some(format) => format == "anthropic",
                None => provider == "openrouter" && id.starts_with("anthropic/"),
            },
            send_session_affinity_headers: flag("sendSessionAffinityHeaders", openrouter),
            session_affinity_format: raw
                .text("sessionAffinityFormat")
                .unwrap_or(if openrouter { "openrouter" } else { "openai" })
                .to_string(),
            supports_long_cache_retention: flag(
                "supportsLongCacheRetention",
                !(together || cf_workers || cf_gateway || nvidia || ant_ling),
            ),
            prompt_cache_key_mode: raw.text("promptCacheKeyMode").unwrap_or("auto").to_string(),
            vllm_priority: raw.get("vllmPriority").cloned(),
            raw,
        }
    }
}
