//! `azure-openai-responses`: the Responses API on an Azure OpenAI resource, as pi speaks it.
//! The body and the stream are OpenAI's; the endpoint is `{base}/responses?api-version=…`, the
//! key goes in an `api-key` header, and the body's `model` is the deployment. The runtime
//! resolves the endpoint, the version and the deployment from the user's environment (pi's
//! `AZURE_OPENAI_*` variables) into the model's base URL and `compat`.

use pith_sdk::http::Request as HttpRequest;
use pith_sdk::provider::Request;
use pith_sdk::serde_json::{Value, json};

/// The API's name.
pub const API: &str = "azure-openai-responses";

fn compat(request: &Request) -> Value {
    request
        .model
        .compat
        .as_deref()
        .and_then(|text| pith_sdk::serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

/// The request: URL with the API version, `api-key` header, the deployment as the body's model.
pub fn post(request: &Request, body: &mut Value) -> Result<HttpRequest, String> {
    let key = request
        .api_key
        .as_deref()
        .filter(|k| !k.is_empty())
        .ok_or("No API key for provider: azure")?;
    let compat = compat(request);
    let version = compat["azureApiVersion"].as_str().unwrap_or("v1");
    if let Some(deployment) = compat["azureDeploymentName"].as_str() {
        body["model"] = json!(deployment);
    }
    let base = request.model.base_url.trim_end_matches('/');
    let url = match base.split_once('?') {
        Some((path, query)) => format!("{path}/responses?{query}&api-version={version}"),
        None => format!("{base}/responses?api-version={version}"),
    };
    let mut http = HttpRequest::post(&url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("api-key", key);
    for header in &request.model.headers {
        http = http.header(&header.name, &header.value);
    }
    Ok(http)
}
