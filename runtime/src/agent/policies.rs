//! What the settings tune in a running session, read at start-up and again by `reload`:
//! compaction's reserve and kept tokens, retry attempts and delay, the limit on a tool
//! result, the cap on an answer, and the tool timeouts.

use super::agent_loop::MAX_ANSWER_BYTES;
use super::compaction::{CompactionOverrides, CompactionPolicy};
use super::retry::RetryPolicy;
use super::tool_output::{OutputLimit, limit_from_settings};
use super::tool_timeout::ToolTimeouts;
use crate::model::{Model, ThinkingLevel};
use crate::settings::Settings;

/// The session's settings-driven limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Policies {
    /// `compaction.reserveTokens`, `compaction.keepRecentTokens`.
    pub compaction: CompactionPolicy,
    /// `compaction.modelOverrides`.
    pub compaction_overrides: CompactionOverrides,
    /// `retry.maxRetries`, `retry.baseDelayMs`, `retry.maxAgentDelayMs`.
    pub retry: RetryPolicy,
    /// `toolResults`.
    pub tool_output: OutputLimit,
    /// `answer.maxBytes`.
    pub max_answer_bytes: usize,
    /// `tools.timeoutMs`, `tools.byName`.
    pub tool_timeouts: ToolTimeouts,
    /// What shapes each request: `images.blockImages`, `thinkingBudgets`.
    pub request: RequestSettings,
    /// `modelThinkingLevels`, `defaultThinkingLevel`.
    pub thinking: ThinkingDefaults,
}

/// The thinking level a model is given when it is chosen without one: its
/// `modelThinkingLevels` entry (keyed by the exact `provider/modelId`), else
/// `defaultThinkingLevel`, as pi resolves it at start-up and on a model switch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThinkingDefaults {
    /// `defaultThinkingLevel`.
    pub default: Option<ThinkingLevel>,
    /// `modelThinkingLevels`.
    pub per_model: Vec<(String, ThinkingLevel)>,
}

impl ThinkingDefaults {
    /// Reads them from `settings` (a value that is not a level is left out).
    pub fn from_settings(settings: &Settings) -> ThinkingDefaults {
        let level = |value: &serde_json::Value| value.as_str().and_then(ThinkingLevel::parse);
        ThinkingDefaults {
            default: settings.get("defaultThinkingLevel").and_then(level),
            per_model: settings
                .get("modelThinkingLevels")
                .and_then(serde_json::Value::as_object)
                .map(|levels| {
                    levels
                        .iter()
                        .filter_map(|(key, value)| Some((key.clone(), level(value)?)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The level `model` starts with when nothing names one; `None`: keep the current one.
    pub fn for_model(&self, model: &Model) -> Option<ThinkingLevel> {
        let key = format!("{}/{}", model.provider, model.id);
        self.per_model
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, level)| *level)
            .or(self.default)
    }
}

/// The settings that shape each request to a model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSettings {
    /// `images.blockImages`: no image reaches a model.
    pub block_images: bool,
    /// `images.autoResize` (on unless false): images are fitted for models as they enter the
    /// conversation (see [`crate::images`]).
    pub auto_resize: bool,
    /// `thinkingBudgets`: tokens for minimal, low, medium and high (pi's defaults where a
    /// level is not set), when any is set.
    pub thinking_budgets: Option<Vec<u32>>,
}

/// pi's thinking budgets for minimal, low, medium and high.
const THINKING_BUDGETS: [(&str, u32); 4] = [
    ("minimal", 1024),
    ("low", 2048),
    ("medium", 8192),
    ("high", 16384),
];

impl RequestSettings {
    /// Reads them from `settings`.
    pub fn from_settings(settings: &Settings) -> RequestSettings {
        let budgets = settings
            .get("thinkingBudgets")
            .and_then(serde_json::Value::as_object);
        RequestSettings {
            auto_resize: settings
                .get("images")
                .and_then(|images| images.get("autoResize"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(true),
            block_images: settings
                .get("images")
                .and_then(|images| images.get("blockImages"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
            thinking_budgets: budgets.map(|budgets| {
                THINKING_BUDGETS
                    .iter()
                    .map(|(level, default)| {
                        budgets
                            .get(*level)
                            .and_then(serde_json::Value::as_u64)
                            .and_then(|n| u32::try_from(n).ok())
                            .unwrap_or(*default)
                    })
                    .collect()
            }),
        }
    }
}

impl Policies {
    /// Reads them from `settings`, with the defaults for what is not set.
    pub fn from_settings(settings: &Settings) -> Policies {
        let compaction = {
            let number = |key: &str| settings.number("compaction", key);
            let defaults = CompactionPolicy::default();
            CompactionPolicy {
                reserve_tokens: number("reserveTokens").unwrap_or(defaults.reserve_tokens),
                keep_recent_tokens: number("keepRecentTokens")
                    .unwrap_or(defaults.keep_recent_tokens),
            }
        };
        let retry = {
            let number = |key: &str| settings.number("retry", key);
            let defaults = RetryPolicy::default();
            RetryPolicy {
                max_retries: number("maxRetries")
                    .map_or(defaults.max_retries, |n| n.min(100) as u32),
                base_delay_ms: number("baseDelayMs").unwrap_or(defaults.base_delay_ms),
                max_delay_ms: number("maxAgentDelayMs").unwrap_or(defaults.max_delay_ms),
            }
        };
        Policies {
            compaction,
            compaction_overrides: CompactionOverrides::from_settings(
                settings
                    .get("compaction")
                    .and_then(|c| c.get("modelOverrides")),
            ),
            retry,
            tool_output: limit_from_settings(settings),
            max_answer_bytes: settings
                .number("answer", "maxBytes")
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n > 0)
                .unwrap_or(MAX_ANSWER_BYTES),
            tool_timeouts: ToolTimeouts::from_settings(settings),
            request: RequestSettings::from_settings(settings),
            thinking: ThinkingDefaults::from_settings(settings),
        }
    }
}
