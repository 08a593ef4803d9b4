//! `models.json` (pi's shape): the providers and models it adds, and what it changes of the
//! built-in ones.

use super::*;

/// `models.json` (pi's shape).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelsFile {
    #[serde(default)]
    providers: std::collections::BTreeMap<String, CustomProvider>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomProvider {
    base_url: Option<String>,
    api_key: Option<String>,
    api: Option<String>,
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    /// Switches for every model of the provider (a model's own win, field by field).
    compat: Option<serde_json::Value>,
    #[serde(default)]
    models: Vec<CustomModel>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CustomModel {
    id: String,
    name: Option<String>,
    api: Option<String>,
    base_url: Option<String>,
    reasoning: Option<bool>,
    input: Option<Vec<String>>,
    cost: Option<crate::agent::model::ModelCost>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    headers: Option<serde_json::Map<String, serde_json::Value>>,
    compat: Option<serde_json::Value>,
    /// `thinkingLevelMap`, `samplingParams`, `samplingParamsByThinkingLevel` and the rest.
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

/// True when `owner`'s `compat` (if any) has the types pi's schema gives; what is wrong or
/// unknown in it goes to `findings`.
fn compat_ok(findings: &mut Vec<String>, compat: Option<&serde_json::Value>, owner: &str) -> bool {
    let Some(compat) = compat else {
        return true;
    };
    let found = crate::agent::models::compat_check::check(compat, owner);
    let ok = found.errors.is_empty();
    findings.extend(
        found
            .errors
            .into_iter()
            .map(|e| format!("models.json: {e} (left out until it is fixed)")),
    );
    findings.extend(
        found
            .unknown
            .into_iter()
            .map(|u| format!("models.json: {u}")),
    );
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
            if let Some(key) = &config.api_key {
                self.config_keys.insert(provider.clone(), key.clone());
            }
            let provider_compat = if compat_ok(
                &mut findings,
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
                continue;
            }
            for custom in config.models {
                let owner = format!("model \"{provider}/{}\"", custom.id);
                if !compat_ok(&mut findings, custom.compat.as_ref(), &owner) {
                    continue;
                }
                if let Some(problem) =
                    crate::agent::models::compat_check::check_sampling(&custom.extra, &owner)
                {
                    findings.push(format!(
                        "models.json: {problem} (left out until it is fixed)"
                    ));
                    continue;
                }
                let api = custom.api.or_else(|| config.api.clone()).ok_or_else(|| {
                    KeyError::file(
                        path,
                        format!("provider {provider}: model {} has no api", custom.id),
                    )
                })?;
                let base_url = custom
                    .base_url
                    .or_else(|| config.base_url.clone())
                    .ok_or_else(|| {
                        KeyError::file(path, format!("provider {provider} has no baseUrl"))
                    })?;
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
        }
        self.forget_merged();
        Ok(findings)
    }
}
