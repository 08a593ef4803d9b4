//! Models in pi's JSON shape and thinking levels.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::js::js_number;

/// A model (pi's model JSON, key order `id,name,api,provider,baseUrl,reasoning,input,cost,
/// contextWindow,maxTokens[,headers][,compat]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The id sent to the API.
    pub id: String,
    /// A human name.
    pub name: String,
    /// The wire format.
    pub api: String,
    /// The provider.
    pub provider: String,
    /// The API's base URL.
    pub base_url: String,
    /// True for reasoning models.
    pub reasoning: bool,
    /// `text`, `image`.
    pub input: Vec<String>,
    /// Dollars per million tokens.
    pub cost: ModelCost,
    /// Context window in tokens.
    pub context_window: u64,
    /// Largest output in tokens.
    pub max_tokens: u64,
    /// Extra headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<serde_json::Map<String, Value>>,
    /// Provider-specific switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<Value>,
    /// The rest of pi's model JSON, kept as it came (`thinkingLevelMap`, `inputLimits`,
    /// `promptCache`, `type`, …).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl Model {
    /// `provider/id`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// True when this is `provider`/`id`.
    pub fn is(&self, provider: &str, id: &str) -> bool {
        self.provider == provider && self.id == id
    }

    /// A virtual model's catalog entry (pi's `createVirtualModel`): api `pi-virtual`, no
    /// prices, the offered thinking levels as its `thinkingLevelMap`, and limits of 0 when
    /// unknown. Its requests are routed by the extension that registered it.
    pub fn new_virtual(
        provider: &str,
        id: &str,
        name: &str,
        levels: &[ThinkingLevel],
        limits: (Option<u64>, Option<u64>),
        images: bool,
    ) -> Model {
        let levels = if levels.is_empty() {
            &[ThinkingLevel::Off][..]
        } else {
            levels
        };
        let map: serde_json::Map<String, Value> = ThinkingLevel::ALL
            .iter()
            .map(|level| {
                let name = level.as_str();
                let value = if levels.contains(level) {
                    name.into()
                } else {
                    Value::Null
                };
                (name.to_string(), value)
            })
            .collect();
        let mut extra = serde_json::Map::new();
        extra.insert("thinkingLevelMap".into(), Value::Object(map));
        Model {
            id: id.into(),
            name: name.into(),
            api: VIRTUAL_API.into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: levels.iter().any(|level| *level != ThinkingLevel::Off),
            input: if images {
                vec!["text".into(), "image".into()]
            } else {
                vec!["text".into()]
            },
            cost: ModelCost::default(),
            context_window: limits.0.unwrap_or(0),
            max_tokens: limits.1.unwrap_or(0),
            headers: None,
            compat: None,
            extra,
        }
    }

    /// True for a virtual model (one an extension routes; never sent to a provider).
    pub fn is_virtual(&self) -> bool {
        self.api == VIRTUAL_API
    }
}

/// The api of virtual models (pi's `VIRTUAL_MODEL_API`).
pub const VIRTUAL_API: &str = "pi-virtual";

/// Prices in dollars per million tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// Input.
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    /// Output.
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    /// Cache reads.
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    /// Higher prices above an input size (pi's `tiers`: the highest threshold passed applies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<CostTier>,
}

/// Prices that apply above `inputTokensAbove` input tokens (input, cache reads and writes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostTier {
    /// The input size above which these prices apply.
    pub input_tokens_above: u64,
    /// Input.
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    /// Output.
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    /// Cache reads.
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
}

impl ModelCost {
    /// The prices for a request of `input_tokens` (input, cache reads and writes): the tier of
    /// the highest threshold passed, else the base prices (pi's `calculateCost`).
    pub fn rates_for(&self, input_tokens: u64) -> (f64, f64, f64, f64) {
        self.tiers
            .iter()
            .filter(|tier| input_tokens > tier.input_tokens_above)
            .max_by_key(|tier| tier.input_tokens_above)
            .map_or(
                (self.input, self.output, self.cache_read, self.cache_write),
                |tier| (tier.input, tier.output, tier.cache_read, tier.cache_write),
            )
    }
}

/// pi's thinking levels, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning.
    Off,
    /// Minimal.
    Minimal,
    /// Low.
    Low,
    /// Medium (pi's default).
    Medium,
    /// High.
    High,
    /// Extra high (only some models).
    Xhigh,
    /// pi 1.5's highest level (the models that have `xhigh`); providers get it as `xhigh`, the
    /// highest the plugin interface names.
    Max,
}

impl ThinkingLevel {
    /// Every level, in order.
    pub const ALL: [ThinkingLevel; 7] = [
        ThinkingLevel::Off,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
        ThinkingLevel::Max,
    ];

    /// Parses a level name.
    pub fn parse(name: &str) -> Option<ThinkingLevel> {
        Self::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The level's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::Xhigh => "xhigh",
            ThinkingLevel::Max => "max",
        }
    }

    /// The levels `model` supports: `off` only for non-reasoning models; with pi's catalog
    /// map (`thinkingLevelMap`), as pi 1.5's `getSupportedThinkingLevels` (a level mapped to
    /// `null` is not, `xhigh` and `max` only when mapped); otherwise `xhigh` only for the
    /// models pi allows it on.
    pub fn available(model: &Model) -> Vec<ThinkingLevel> {
        if !model.reasoning {
            return vec![ThinkingLevel::Off];
        }
        if let Some(map) = model
            .extra
            .get("thinkingLevelMap")
            .and_then(Value::as_object)
        {
            return Self::ALL
                .into_iter()
                .filter(|level| match map.get(level.as_str()) {
                    Some(Value::Null) => false,
                    Some(_) => true,
                    None => !matches!(level, ThinkingLevel::Xhigh | ThinkingLevel::Max),
                })
                .collect();
        }
        let xhigh = ["gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"]
            .iter()
            .any(|p| model.id.contains(p));
        Self::ALL
            .into_iter()
            .filter(|l| *l < ThinkingLevel::Xhigh || xhigh)
            .collect()
    }

    /// Clamps to what `model` supports: the nearest available level at or above, else below.
    pub fn clamp(self, model: &Model) -> ThinkingLevel {
        let available = Self::available(model);
        if available.contains(&self) {
            return self;
        }
        Self::ALL
            .into_iter()
            .filter(|l| *l >= self)
            .find(|l| available.contains(l))
            .or_else(|| {
                Self::ALL
                    .into_iter()
                    .rev()
                    .filter(|l| *l <= self)
                    .find(|l| available.contains(l))
            })
            .unwrap_or(ThinkingLevel::Off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(id: &str, reasoning: bool) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "faux".into(),
            provider: "faux".into(),
            base_url: String::new(),
            reasoning,
            input: vec!["text".into()],
            cost: ModelCost::default(),
            context_window: 1,
            max_tokens: 1,
            headers: None,
            compat: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn pi_1_5_s_level_map_decides_when_the_catalog_has_one() {
        let mut mapped = model("gpt-5.4", true);
        mapped.extra.insert(
            "thinkingLevelMap".into(),
            serde_json::json!({"off": null, "minimal": null, "high": "high", "xhigh": "xhigh"}),
        );
        assert_eq!(
            ThinkingLevel::available(&mapped),
            [
                ThinkingLevel::Low,
                ThinkingLevel::Medium,
                ThinkingLevel::High,
                ThinkingLevel::Xhigh
            ]
        );
        assert_eq!(ThinkingLevel::Off.clamp(&mapped), ThinkingLevel::Low);
        assert_eq!(ThinkingLevel::Max.clamp(&mapped), ThinkingLevel::Xhigh);
    }

    #[test]
    fn the_tier_of_the_highest_threshold_passed_prices_a_request() {
        let cost: ModelCost = serde_json::from_value(serde_json::json!({
            "input": 2.5, "output": 15, "cacheRead": 0.25, "cacheWrite": 0,
            "tiers": [{"inputTokensAbove": 272000, "input": 5, "output": 22.5, "cacheRead": 0.5, "cacheWrite": 0}]
        }))
        .unwrap();
        assert_eq!(cost.rates_for(272_000), (2.5, 15.0, 0.25, 0.0));
        assert_eq!(cost.rates_for(272_001), (5.0, 22.5, 0.5, 0.0));
    }

    #[test]
    fn clamping_follows_pi() {
        assert_eq!(
            ThinkingLevel::Xhigh.clamp(&model("claude-sonnet", true)),
            ThinkingLevel::High
        );
        assert_eq!(
            ThinkingLevel::Xhigh.clamp(&model("claude-opus-4-6", true)),
            ThinkingLevel::Xhigh
        );
        assert_eq!(
            ThinkingLevel::High.clamp(&model("plain", false)),
            ThinkingLevel::Off
        );
        assert_eq!(
            ThinkingLevel::available(&model("plain", false)),
            vec![ThinkingLevel::Off]
        );
    }

    #[test]
    fn model_json_has_pi_key_order() {
        let json = serde_json::to_string(&model("m", false)).unwrap();
        assert_eq!(
            json,
            r#"{"id":"m","name":"m","api":"faux","provider":"faux","baseUrl":"","reasoning":false,"input":["text"],"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"contextWindow":1,"maxTokens":1}"#
        );
    }
}
