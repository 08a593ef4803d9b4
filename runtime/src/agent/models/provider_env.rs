//! The model a provider plugin is handed for one request: pi's model JSON with what the user's
//! environment decides resolved here, since a plugin reads no environment. The catalog's
//! thinking-level map goes in `compat.thinkingLevelMap`; an Azure OpenAI model gets its
//! endpoint (`AZURE_OPENAI_BASE_URL`, else `AZURE_OPENAI_RESOURCE_NAME`), its API version
//! (`AZURE_OPENAI_API_VERSION`, default `v1`) and its deployment
//! (`AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, `id=deployment,…`, default the model id) as pi resolves
//! them, in its base URL and in `compat.azureApiVersion` / `compat.azureDeploymentName`.
//! Header values take pi's value forms (see [`crate::agent::models::credentials`]), resolved at each request.

use serde_json::{Map, Value};

use crate::agent::model::Model;
use crate::agent::models::errors::WireError;
use crate::plugin_host::bindings::provider_world::exports::pith::plugin0_1_0::provider as pwit;
use crate::plugin_host::provider::model_to_wit;

/// The API whose endpoint comes from the environment.
const AZURE_API: &str = "azure-openai-responses";

/// `model` as its provider plugin receives it; an error (pi's words) when the environment
/// lacks what the model needs.
pub fn wire_model(model: &Model) -> Result<pwit::Model, WireError> {
    wire_model_in(model, &|name| {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    })
}

fn wire_model_in(
    model: &Model,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<pwit::Model, WireError> {
    let mut wire = model_to_wit(model);
    // Header values in pi's value forms (`$NAME`, `!command`), resolved at each request.
    for header in wire.headers.iter_mut() {
        header.value = crate::agent::models::credentials::resolve(
            &header.value,
            &crate::agent::models::credentials::Lookup::PROCESS,
            false,
        )
        .map_err(|unresolved| {
            WireError::Header(unresolved.message(&format!(
                "model \"{}/{}\" header \"{}\"",
                model.provider, model.id, header.name
            )))
        })?;
    }
    let mut compat: Map<String, Value> = model
        .compat
        .as_ref()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // What the providers read beside the switches (see pith_sdk::compat).
    for key in [
        "thinkingLevelMap",
        "samplingParams",
        "samplingParamsByThinkingLevel",
    ] {
        if let Some(value) = model.extra.get(key) {
            compat.insert(key.into(), value.clone());
        }
    }
    if model.api == AZURE_API {
        wire.base_url = azure_base_url(model, env)?;
        compat.insert(
            "azureApiVersion".into(),
            Value::String(env("AZURE_OPENAI_API_VERSION").unwrap_or_else(|| "v1".into())),
        );
        compat.insert(
            "azureDeploymentName".into(),
            Value::String(azure_deployment(&model.id, env)),
        );
    }
    wire.compat = (!compat.is_empty()).then(|| Value::Object(compat).to_string());
    Ok(wire)
}

/// `wire` with `value` under `key` of its `compat` JSON (what the runtime adds per request, see
/// `pith_sdk::grammar_tools`).
pub fn with_compat(mut wire: pwit::Model, key: &str, value: Value) -> pwit::Model {
    let mut compat: Map<String, Value> = wire
        .compat
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    compat.insert(key.into(), value);
    wire.compat = Some(Value::Object(compat).to_string());
    wire
}

/// `wire` with `headers` added (replacing same-named ones, in any case).
pub fn with_headers(mut wire: pwit::Model, headers: &[(String, String)]) -> pwit::Model {
    for (name, value) in headers {
        wire.headers.retain(|h| !h.name.eq_ignore_ascii_case(name));
        wire.headers.push(
            crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::Header {
                name: name.clone(),
                value: value.clone(),
            },
        );
    }
    wire
}

/// pi's `resolveAzureBaseUrl` and `normalizeAzureBaseUrl`.
fn azure_base_url(
    model: &Model,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, WireError> {
    let base = env("AZURE_OPENAI_BASE_URL")
        .map(|url| url.trim().to_string())
        .or_else(|| {
            env("AZURE_OPENAI_RESOURCE_NAME")
                .map(|name| format!("https://{}.openai.azure.com/openai/v1", name.trim()))
        })
        .or_else(|| Some(model.base_url.trim().to_string()).filter(|url| !url.is_empty()))
        .ok_or(WireError::AzureBaseUrlMissing)?;
    let base = base.trim_end_matches('/');
    let Some((scheme, rest)) = base.split_once("://") else {
        return Err(WireError::AzureBaseUrlInvalid(base.to_string()));
    };
    let (authority, path_and_query) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    if host.is_empty() {
        return Err(WireError::AzureBaseUrlInvalid(base.to_string()));
    }
    let path = path_and_query.split('?').next().unwrap_or("");
    let azure_host = [
        ".openai.azure.com",
        ".cognitiveservices.azure.com",
        ".ai.azure.com",
    ]
    .iter()
    .any(|suffix| host.ends_with(suffix));
    let bare = matches!(
        path.trim_end_matches('/'),
        "" | "/openai" | "/openai/v1/responses"
    );
    if azure_host && bare {
        return Ok(format!("{scheme}://{authority}/openai/v1"));
    }
    Ok(base.to_string())
}

/// The deployment of model `id`: its entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, else the id.
fn azure_deployment(id: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP")
        .and_then(|map| {
            map.split(',').find_map(|entry| {
                let (model, deployment) = entry.split_once('=')?;
                let deployment = deployment.split('=').next().unwrap_or("").trim();
                (model.trim() == id && !deployment.is_empty()).then(|| deployment.to_string())
            })
        })
        .unwrap_or_else(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn azure(base_url: &str) -> Model {
        serde_json::from_value(serde_json::json!({
            "id": "gpt-5.4", "name": "GPT-5.4", "api": AZURE_API, "provider": "azure",
            "baseUrl": base_url, "reasoning": true, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 1000, "maxTokens": 100,
            "thinkingLevelMap": {"off": null, "high": "high"}
        }))
        .unwrap()
    }

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn azure_endpoints_as_pi_resolves_them() {
        let base = |vars, url| wire_model_in(&azure(url), &env_of(vars)).map(|wire| wire.base_url);
        assert_eq!(
            base(&[("AZURE_OPENAI_RESOURCE_NAME", "myres")], "").unwrap(),
            "https://myres.openai.azure.com/openai/v1"
        );
        for (input, resolved) in [
            (
                "https://r.openai.azure.com",
                "https://r.openai.azure.com/openai/v1",
            ),
            (
                "https://r.openai.azure.com/openai/",
                "https://r.openai.azure.com/openai/v1",
            ),
            (
                "https://r.openai.azure.com/openai/v1/responses?api-version=preview",
                "https://r.openai.azure.com/openai/v1",
            ),
            ("https://r.ai.azure.com", "https://r.ai.azure.com/openai/v1"),
            (
                "https://r.services.ai.azure.com/api/projects/p",
                "https://r.services.ai.azure.com/api/projects/p",
            ),
            ("https://proxy.example.com/", "https://proxy.example.com"),
        ] {
            assert_eq!(base(&[], input).unwrap(), resolved, "{input}");
        }
        assert!(
            base(&[], "")
                .unwrap_err()
                .to_string()
                .starts_with("Azure OpenAI base URL is required")
        );
        let wire = wire_model_in(
            &azure(""),
            &env_of(&[
                ("AZURE_OPENAI_BASE_URL", "https://x.openai.azure.com"),
                (
                    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
                    "gpt-4o=a, gpt-5.4 = prod-54",
                ),
                ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
            ]),
        )
        .unwrap();
        let compat: Value = serde_json::from_str(wire.compat.as_deref().unwrap()).unwrap();
        assert_eq!(compat["azureDeploymentName"], "prod-54");
        assert_eq!(compat["azureApiVersion"], "2025-04-01-preview");
        assert_eq!(compat["thinkingLevelMap"]["high"], "high");
    }
}
