//! `models.json` (pi's shape) and the providers extensions register (pi's `registerProvider`,
//! the same shape): the providers and models they add, and what they change of the built-in ones.

use super::*;
use crate::agent::models::provider_config::ProviderConfig;

/// `models.json` (pi's shape).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelsFile {
    #[serde(default)]
    providers: std::collections::BTreeMap<String, ProviderConfig>,
}

/// True when `owner`'s `compat` (if any) has the types pi's schema gives; what is wrong or
/// unknown in it goes to `findings`.
fn compat_ok(
    findings: &mut Vec<String>,
    source: &str,
    compat: Option<&serde_json::Value>,
    owner: &str,
) -> bool {
    let Some(compat) = compat else {
        return true;
    };
    let found = crate::agent::models::compat_check::check(compat, owner);
    let ok = found.errors.is_empty();
    findings.extend(
        found
            .errors
            .into_iter()
            .map(|e| format!("{source}: {e} (left out until it is fixed)")),
    );
    findings.extend(found.unknown.into_iter().map(|u| format!("{source}: {u}")));
    ok
}

/// The fields of a `models.json` model the providers receive beside `compat`.
const MODEL_EXTRAS: &[&str] = &[
    "thinkingLevelMap",
    "samplingParams",
    "samplingParamsByThinkingLevel",
];

impl ModelRegistry {
    /// Adds the providers and models of `models.json`: a provider with `models` adds them
    /// (replacing same-named ones); a provider without overrides the base URL, headers and
    /// `compat` of its built-in models. A file that does not parse is reported and ignored;
    /// a `compat` of the wrong type leaves out its model (or its provider's override), and the
    /// returned findings name it, as they name fields pi does not define.
    pub fn load_custom(&mut self, path: &std::path::Path) -> Result<Vec<String>, KeyError> {
        let mut findings = Vec::new();
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(findings),
            Err(err) => return Err(KeyError::file(path, err)),
        };
        let file: ModelsFile =
            serde_json::from_str(&text).map_err(|err| KeyError::file(path, err))?;
        for (provider, config) in file.providers {
            self.add_provider("models.json", &provider, config, false, &mut findings)
                .map_err(|problem| KeyError::file(path, problem))?;
        }
        self.forget_merged();
        Ok(findings)
    }
}

impl ModelRegistry {
    /// Adds one provider of `source` (`models.json`, or an extension's registration): with
    /// models it adds them (and, when `replaces` is set, they replace the provider's built-in
    /// ones, as pi's `registerProvider` does); without, its base URL, headers and `compat`
    /// change the built-in ones. A `compat` of the wrong type leaves out its model (or the
    /// override) with a finding; a model without an api or a base URL is an error.
    pub(crate) fn add_provider(
        &mut self,
        source: &str,
        provider: &str,
        config: ProviderConfig,
        replaces: bool,
        findings: &mut Vec<String>,
    ) -> Result<(), String> {
        let provider = provider.to_string();
        if let Some(key) = &config.api_key {
            self.config_keys.insert(provider.clone(), key.clone());
        }
        let provider_compat = if compat_ok(
            findings,
            source,
            config.compat.as_ref(),
            &format!("provider \"{provider}\""),
        ) {
            config.compat.clone()
        } else {
            None
        };
        if config.models.is_empty() {
            self.overrides.insert(
                provider.clone(),
                ProviderOverride {
                    base_url: config.base_url.clone(),
                    headers: config.headers.clone(),
                    compat: provider_compat,
                },
            );
            return Ok(());
        }
        if replaces {
            self.replaced.insert(provider.clone());
            self.custom.retain(|m| m.provider != provider);
        }
        for custom in config.models {
            let owner = format!("model \"{provider}/{}\"", custom.id);
            if !compat_ok(findings, source, custom.compat.as_ref(), &owner) {
                continue;
            }
            if let Some(problem) =
                crate::agent::models::compat_check::check_sampling(&custom.extra, &owner)
            {
                findings.push(format!("{source}: {problem} (left out until it is fixed)"));
                continue;
            }
            let api = custom
                .api
                .or_else(|| config.api.clone())
                .ok_or_else(|| format!("provider {provider}: model {} has no api", custom.id))?;
            let base_url = custom
                .base_url
                .or_else(|| config.base_url.clone())
                .ok_or_else(|| format!("provider {provider} has no baseUrl"))?;
            let model = Model {
                name: custom.name.unwrap_or_else(|| custom.id.clone()),
                id: custom.id,
                api,
                provider: provider.clone(),
                base_url,
                reasoning: custom.reasoning.unwrap_or(false),
                input: custom.input.unwrap_or_else(|| vec!["text".into()]),
                cost: custom.cost.unwrap_or_default(),
                context_window: custom.context_window.unwrap_or(128_000),
                max_tokens: custom.max_tokens.unwrap_or(16_384),
                headers: custom.headers.or_else(|| config.headers.clone()),
                compat: crate::agent::models::compat_check::merge(
                    provider_compat.as_ref(),
                    custom.compat.as_ref(),
                ),
                extra: custom
                    .extra
                    .into_iter()
                    .filter(|(key, _)| MODEL_EXTRAS.contains(&key.as_str()))
                    .collect(),
            };
            replace_or_push(&mut self.custom, model);
        }
        Ok(())
    }
}
