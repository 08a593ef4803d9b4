//! pi's built-in model catalog, as data: every model of pi-ai (its API, base URL, headers,
//! `compat`, window, output limit, reasoning and thinking-level map, input kinds, cost), the
//! environment variables that hold each provider's key, and each provider's default model.
//! `catalog/pi-models.jsonl` is generated from pi's package by `catalog/generate.mjs` and built
//! into the binary. Its first line (the providers) is read at the first use; a provider's
//! models, one line each, are parsed only when that provider is asked for, so a start that
//! names its model parses a few kilobytes of the megabyte.

use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::agent::model::Model;

/// The generated catalog: a header line, then one line of models per provider.
const TEXT: &str = include_str!("../../../../catalog/pi-models.jsonl");

/// One provider of the catalog.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogProvider {
    /// Its name (`anthropic`, `openrouter`).
    pub name: String,
    /// The environment variables that hold its key, in pi's order.
    pub env_vars: Vec<String>,
    /// How many models it has.
    pub models: usize,
}

/// A provider's default model (pi's `defaultModelPerProvider`).
#[derive(Debug, Clone, Deserialize)]
pub struct ProviderDefault {
    /// The provider.
    pub provider: String,
    /// The model's id.
    pub model: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    pi_ai: String,
    providers: Vec<CatalogProvider>,
    defaults: Vec<ProviderDefault>,
}

/// The catalog: its providers, and their models parsed on first use.
pub struct Catalog {
    version: String,
    providers: Vec<CatalogProvider>,
    defaults: Vec<ProviderDefault>,
    lines: Vec<&'static str>,
    parsed: Vec<OnceLock<Arc<Vec<Model>>>>,
}

/// The catalog built into this binary.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::parse(TEXT))
}

/// The wire formats the catalog's models use (`anthropic-messages`, `openai-completions`, …),
/// found in its lines without parsing every model.
pub fn catalog_apis() -> &'static std::collections::HashSet<&'static str> {
    static APIS: OnceLock<std::collections::HashSet<&'static str>> = OnceLock::new();
    APIS.get_or_init(|| {
        const FIELD: &str = "\"api\":\"";
        TEXT.match_indices(FIELD)
            .filter_map(|(at, _)| {
                let rest = &TEXT[at + FIELD.len()..];
                rest.find('"').map(|end| &rest[..end])
            })
            .collect()
    })
}

impl Catalog {
    /// Reads a catalog's header and splits its lines (a header that does not parse gives an
    /// empty catalog: the generated file is checked by the tests).
    fn parse(text: &'static str) -> Catalog {
        let mut lines = text.lines();
        let header: Option<Header> = lines.next().and_then(|l| serde_json::from_str(l).ok());
        let header = header.unwrap_or(Header {
            pi_ai: String::new(),
            providers: Vec::new(),
            defaults: Vec::new(),
        });
        let lines: Vec<&'static str> = lines.take(header.providers.len()).collect();
        Catalog {
            version: header.pi_ai,
            parsed: header.providers.iter().map(|_| OnceLock::new()).collect(),
            providers: header.providers,
            defaults: header.defaults,
            lines,
        }
    }

    /// The pi-ai version it was generated from.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Its providers, in pi's order.
    pub fn providers(&self) -> &[CatalogProvider] {
        &self.providers
    }

    /// The provider named `name`.
    pub fn provider(&self, name: &str) -> Option<&CatalogProvider> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Each provider's default model, in pi's order of preference.
    pub fn defaults(&self) -> &[ProviderDefault] {
        &self.defaults
    }

    /// The providers whose models include one with the id `id` exactly (found in the text,
    /// without parsing it).
    pub fn providers_naming(&self, id: &str) -> Vec<&str> {
        let needle = format!("\"id\":{}", serde_json::to_string(id).unwrap_or_default());
        self.providers
            .iter()
            .zip(&self.lines)
            .filter(|(_, line)| line.contains(&needle))
            .map(|(provider, _)| provider.name.as_str())
            .collect()
    }

    /// The models of `provider` (none for a provider it does not have), parsed on first use.
    pub fn models(&self, provider: &str) -> Arc<Vec<Model>> {
        let Some(index) = self.providers.iter().position(|p| p.name == provider) else {
            return Arc::new(Vec::new());
        };
        self.parsed[index]
            .get_or_init(|| {
                Arc::new(
                    self.lines
                        .get(index)
                        .and_then(|line| serde_json::from_str(line).ok())
                        .unwrap_or_default(),
                )
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_catalog_parses_whole() {
        let catalog = catalog();
        assert_eq!(catalog.version(), "1.5.2");
        assert_eq!(catalog.providers().len(), 43);
        let mut total = 0;
        for provider in catalog.providers() {
            let models = catalog.models(&provider.name);
            assert_eq!(models.len(), provider.models, "{}", provider.name);
            assert!(models.iter().all(|m| m.provider == provider.name));
            total += models.len();
        }
        assert_eq!(total, 1643);
        let sonnet = catalog
            .models("anthropic")
            .iter()
            .find(|m| m.id == "claude-sonnet-4-5")
            .cloned()
            .unwrap();
        assert_eq!(sonnet.max_tokens, 64_000);
        // What pith does not use itself is kept as pi has it.
        assert_eq!(sonnet.extra["promptCache"]["long"], 3600);
        assert_eq!(
            catalog.provider("anthropic").unwrap().env_vars,
            [
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_OAUTH_TOKEN",
                "ANTHROPIC_API_KEY"
            ]
        );
        assert_eq!(catalog.models("nobody").len(), 0);
        let naming = catalog.providers_naming("claude-sonnet-4-6");
        assert!(
            naming.contains(&"anthropic") && naming.contains(&"opencode"),
            "{naming:?}"
        );
        assert!(catalog.providers_naming("no-such-model").is_empty());
    }
}
