//! What the settings tune in a running session, read at start-up and again by `reload`:
//! compaction's reserve and kept tokens, retry attempts and delay, the limit on a tool
//! result, the cap on an answer, and the tool timeouts.

use serde_json::Value;

use crate::agent::run::retry::RetryPolicy;
use crate::agent::run::tool_output::{OutputLimit, limit_from_settings};
use crate::agent::run::tool_timeout::ToolTimeouts;
use crate::model::{Model, ThinkingLevel};
use crate::settings::Settings;

/// Compaction settings (`compaction` in settings.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionPolicy {
    /// Tokens kept free for the answer.
    pub reserve_tokens: u64,
    /// Tokens of recent conversation kept verbatim.
    pub keep_recent_tokens: u64,
}

/// `compaction.modelOverrides`: reserve and kept tokens for one model, keyed by its exact
/// `provider/modelId`; what an override leaves out comes from the ordinary settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionOverrides(Vec<(String, Option<u64>, Option<u64>)>);

impl CompactionOverrides {
    /// Reads `compaction.modelOverrides` (entries that are not objects are left out).
    pub fn from_settings(overrides: Option<&Value>) -> CompactionOverrides {
        let Some(Value::Object(entries)) = overrides else {
            return CompactionOverrides::default();
        };
        CompactionOverrides(
            entries
                .iter()
                .filter_map(|(key, entry)| {
                    let number = |name: &str| entry.get(name).and_then(Value::as_u64);
                    entry.is_object().then(|| {
                        (
                            key.clone(),
                            number("reserveTokens"),
                            number("keepRecentTokens"),
                        )
                    })
                })
                .collect(),
        )
    }

    /// The policy for `model`: its override's values over `base`.
    pub fn resolve(&self, base: CompactionPolicy, model: Option<&Model>) -> CompactionPolicy {
        let Some(model) = model else { return base };
        let key = format!("{}/{}", model.provider, model.id);
        match self.0.iter().find(|(k, _, _)| *k == key) {
            Some((_, reserve, keep)) => CompactionPolicy {
                reserve_tokens: reserve.unwrap_or(base.reserve_tokens),
                keep_recent_tokens: keep.unwrap_or(base.keep_recent_tokens),
            },
            None => base,
        }
    }
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        CompactionPolicy {
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

/// The most bytes one answer may stream by default (settings `answer.maxBytes`): far more
/// than any model writes in one answer (128k tokens are about 512 KB), little enough that an
/// endless stream is stopped before it costs memory.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_model_override_wins_key_by_key() {
        let overrides = CompactionOverrides::from_settings(Some(&json!({
            "fake/small": {"reserveTokens": 100},
            "broken": 3
        })));
        let base = CompactionPolicy::default();
        let mut model: Model = serde_json::from_value(json!({
            "id": "small", "name": "Small", "api": "faux", "provider": "fake", "baseUrl": "",
            "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 1000, "maxTokens": 100
        }))
        .unwrap();
        let small = overrides.resolve(base, Some(&model));
        assert_eq!(small.reserve_tokens, 100);
        assert_eq!(small.keep_recent_tokens, base.keep_recent_tokens);
        model.id = "other".into();
        assert_eq!(overrides.resolve(base, Some(&model)), base);
    }
}
