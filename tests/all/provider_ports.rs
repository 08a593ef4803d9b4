//! pi's example extensions about providers, ported to pith's SDK (`plugins/examples/`), over
//! the real binary with the same scripted model: `custom-provider-anthropic` (a provider with
//! its own client) and `provider-payload` (the bodies and responses of provider requests).

use crate::extension_ports::same_as_pi_with;
use crate::support::ports;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn custom_provider_anthropic_serves_its_models_with_its_own_client() {
    // pi's example registers the provider and streams through its own Anthropic client; the
    // port registers it in its `ExtensionInfo` and serves `custom-anthropic-api` from the same
    // component's provider export.
    let grant = json!({"plugins": {"custom-provider-anthropic": {"grant": {"providers": true}}}});
    let run = same_as_pi_with(
        "custom-provider-anthropic",
        "custom-provider-anthropic",
        grant,
    )
    .await;
    let body = |request: &Value| {
        let mut body = request.get("body").unwrap_or(request).clone();
        // The tools' descriptions and the system prompt are each agent's own.
        body["system"] = json!(body["system"].is_array());
        body["tools"] = json!(body["tools"].as_array().map(|t| t.len()));
        body
    };
    assert_eq!(
        run.requests.iter().map(body).collect::<Vec<_>>(),
        run.their_requests.iter().map(body).collect::<Vec<_>>(),
    );
    let headers = |request: &Value| {
        ["x-api-key", "anthropic-beta", "anthropic-version", "accept"]
            .map(|name| {
                let headers = request["headers"].as_object().cloned().unwrap_or_default();
                headers
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, value)| value.clone())
            })
            .to_vec()
    };
    assert_eq!(
        run.requests.iter().map(headers).collect::<Vec<_>>(),
        run.their_requests.iter().map(headers).collect::<Vec<_>>(),
    );
    let response = |frames: &[Value], id: &str| {
        frames
            .iter()
            .find(|f| f["type"] == "response" && f["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no response {id}"))
    };
    // The registered model, as pi describes it (pi keeps the example's base URL).
    let mut ours = response(&run.ours, "s0")["data"]["model"].clone();
    let mut theirs = response(&run.theirs, "s0")["data"]["model"].clone();
    ours["baseUrl"] = Value::Null;
    theirs["baseUrl"] = Value::Null;
    assert_eq!(ours, theirs);
    let registered = |frames: &[Value]| -> Vec<Value> {
        response(frames, "a0")["data"]["models"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["provider"] == "custom-anthropic")
            .map(|m| json!([m["id"], m["name"], m["api"], m["cost"], m["contextWindow"]]))
            .collect()
    };
    assert_eq!(registered(&run.ours), registered(&run.theirs));
    assert_eq!(registered(&run.ours).len(), 2);
    // The answers name the provider, the api and the usage the extension's stream reported.
    let answers = |frames: &[Value]| -> Vec<Value> {
        response(frames, "m1")["data"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "assistant")
            .map(|m| {
                json!([
                    m["api"],
                    m["provider"],
                    m["model"],
                    m["stopReason"],
                    m["usage"],
                    m["content"]
                ])
            })
            .collect()
    };
    assert_eq!(answers(&run.ours), answers(&run.theirs));
    // The stream, event by event (the text's pieces too; the test's fake LLM writes argument
    // JSON without the reference fake's spaces).
    let stream = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["type"] != "response")
            .map(|f| {
                let event = &f["assistantMessageEvent"];
                let text = (event["type"] == "text_delta").then(|| event["delta"].clone());
                json!([f["type"], event["type"], text])
            })
            .collect()
    };
    assert_eq!(stream(&run.ours), stream(&run.theirs));
}

/// The entries of provider-payload's log as the RPC `bash` command printed it: each request's
/// body (JSON) or a response's `[status] {headers}`.
fn payload_log(frames: &[Value]) -> Vec<Value> {
    let output = frames
        .iter()
        .find(|f| f["type"] == "response" && f["id"] == "b1")
        .and_then(|f| f["data"]["output"].as_str())
        .expect("the log printed")
        .to_string();
    output
        .split("\n\n")
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| match entry.strip_prefix('[') {
            Some(response) => {
                let (status, headers) = response.split_once("] ").expect("[status] headers");
                let headers: Value = serde_json::from_str(headers).expect("headers JSON");
                json!({"status": status, "contentType": headers["content-type"]})
            }
            None => json!({"payload": serde_json::from_str::<Value>(entry).expect("payload JSON")}),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_payload_logs_each_request_and_response() {
    let grant = json!({"plugins": {"provider-payload": {"grant": {"workspace": "write"}}}});
    let run = same_as_pi_with("provider-payload", "provider-payload", grant).await;
    // Each agent logged exactly the bodies its provider sent, then each response's status.
    let expected = |requests: &[Value]| -> Vec<Value> {
        requests
            .iter()
            .flat_map(|r| {
                [
                    json!({"payload": r.get("body").unwrap_or(r)}),
                    json!({"status": "200", "contentType": "text/event-stream"}),
                ]
            })
            .collect()
    };
    assert_eq!(payload_log(&run.theirs), expected(&run.their_requests));
    assert_eq!(payload_log(&run.ours), expected(&run.requests));
    assert_eq!(run.requests.len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_payload_replaces_the_body_the_provider_sends() {
    // The example's commented-out replacement, switched on: the log has the provider's body,
    // the model gets the extension's.
    let settings = json!({"plugins": {"provider-payload": {
        "grant": {"workspace": "write", "config": true}, "config": {"temperature": "0"}}}});
    let run = ports::replay_with("provider-payload", "provider-payload", settings).await;
    let logged = payload_log(&run.ours);
    let body = |r: &Value| r.get("body").unwrap_or(r).clone();
    assert_eq!(run.requests.len(), 2);
    for (request, entry) in run.requests.iter().zip(logged.iter().step_by(2)) {
        let mut sent = body(request);
        assert_eq!(sent["temperature"], 0.0);
        sent.as_object_mut().unwrap().remove("temperature");
        assert_eq!(entry["payload"], sent);
    }
}
