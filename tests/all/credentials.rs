//! pi's key forms and precedence over the real binary, checked by the header a fake server
//! received: `$NAME`, `${NAME}`, `!command`, the `$$` and `$!` escapes, an `auth.json` entry's
//! own `env`, `auth.json` before `models.json`, `--api-key` before both (taken literally), and
//! header values in the same forms; a key that does not resolve is a clear error and no
//! request is sent.

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

/// One prompt to the `fake` provider configured with `api_key` (and `headers`) in
/// `models.json`, `auth` as `auth.json`, and `extra` arguments: the request's headers (none
/// when no request was made) and the run's last message.
async fn one_prompt(
    api_key: &str,
    headers: Value,
    auth: Option<Value>,
    extra: &[&str],
) -> (Option<Value>, Value) {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let models = json!({"providers": {"fake": {
        "baseUrl": format!("{}/v1", server.url), "api": "openai-completions", "apiKey": api_key,
        "headers": headers,
        "models": [{"id": "fake-1", "contextWindow": 100000, "maxTokens": 1000}]}}});
    let mut agent_files = vec![("models.json".to_string(), models.to_string())];
    if let Some(auth) = auth {
        agent_files.push(("auth.json".to_string(), auth.to_string()));
    }
    let mut args: Vec<String> = ["--model", "fake/fake-1", "--no-session"]
        .map(String::from)
        .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut pith = Pith::spawn(Options {
        args,
        agent_files,
        env: vec![("PITH_TEST_KEY".into(), "from-env".into())],
        env_remove: vec!["PITH_TEST_UNSET".into()],
        ..Options::default()
    })
    .await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    let headers = server.requests().first().map(|r| r["headers"].clone());
    (headers, last)
}

#[tokio::test(flavor = "multi_thread")]
async fn each_value_form_reaches_the_server_resolved() {
    for (raw, sent) in [
        ("literal-key", "literal-key"),
        ("$PITH_TEST_KEY", "from-env"),
        ("${PITH_TEST_KEY}-x", "from-env-x"),
        ("!printf ' cmd-key \\n'", "cmd-key"),
        ("$$dollar$!bang", "$dollar!bang"),
    ] {
        let (headers, last) =
            one_prompt(raw, json!({"x-team": "team-$PITH_TEST_KEY"}), None, &[]).await;
        let headers = headers.unwrap_or_else(|| panic!("{raw}: no request: {last}"));
        assert_eq!(headers["authorization"], format!("Bearer {sent}"), "{raw}");
        assert_eq!(headers["x-team"], "team-from-env", "{raw}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_json_before_models_json_and_the_flag_before_both() {
    let stored = json!({"fake": {"type": "api_key", "key": "!echo stored-key"}});
    let (headers, _) = one_prompt("!echo config-key", json!({}), Some(stored.clone()), &[]).await;
    assert_eq!(headers.unwrap()["authorization"], "Bearer stored-key");
    // The entry's own `env` is where its variables are looked up first.
    let scoped = json!({"fake": {"type": "api_key", "key": "$PITH_TEST_SCOPED", "env": {"PITH_TEST_SCOPED": "scoped-key"}}});
    let (headers, _) = one_prompt("config-key", json!({}), Some(scoped), &[]).await;
    assert_eq!(headers.unwrap()["authorization"], "Bearer scoped-key");
    // `--api-key` is taken as it is written.
    let (headers, _) = one_prompt(
        "config-key",
        json!({}),
        Some(stored),
        &["--api-key", "!not-run"],
    )
    .await;
    assert_eq!(headers.unwrap()["authorization"], "Bearer !not-run");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_that_does_not_resolve_is_an_error_and_no_request() {
    for (raw, message) in [
        (
            "!exit 3",
            "API key auth failed for provider fake: Failed to resolve API key for provider \"fake\" from shell command: exit 3",
        ),
        (
            "!true",
            "API key auth failed for provider fake: Failed to resolve API key for provider \"fake\" from shell command: true",
        ),
        (
            "key-$PITH_TEST_UNSET",
            "API key auth failed for provider fake: Failed to resolve API key for provider \"fake\" from environment variable: PITH_TEST_UNSET",
        ),
    ] {
        let (headers, last) = one_prompt(raw, json!({}), None, &[]).await;
        assert!(headers.is_none(), "{raw}: a request was sent");
        assert_eq!(last["stopReason"], "error", "{raw}: {last}");
        assert_eq!(last["errorMessage"], message, "{raw}");
    }
    let (headers, last) = one_prompt("key", json!({"x-team": "$PITH_TEST_UNSET"}), None, &[]).await;
    assert!(headers.is_none());
    assert_eq!(
        last["errorMessage"],
        "Failed to resolve model \"fake/fake-1\" header \"x-team\" from environment variable: PITH_TEST_UNSET"
    );
}

/// `ANTHROPIC_AUTH_TOKEN` is sent as a bearer token (and wins over `ANTHROPIC_API_KEY`), as pi
/// sends it: no `x-api-key`.
#[tokio::test(flavor = "multi_thread")]
async fn anthropic_auth_token_is_a_bearer_header() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let models = json!({"providers": {"anthropic": {"baseUrl": server.url}}});
    let mut pith = Pith::spawn(Options {
        args: ["--model", "anthropic/claude-sonnet-4-5", "--no-session"]
            .map(String::from)
            .to_vec(),
        agent_files: vec![("models.json".into(), models.to_string())],
        env: vec![
            ("ANTHROPIC_AUTH_TOKEN".into(), "gateway-token".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-ant-api".into()),
        ],
        ..Options::default()
    })
    .await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    let headers = server.requests()[0]["headers"].clone();
    assert_eq!(headers["authorization"], "Bearer gateway-token");
    assert!(headers.get("x-api-key").is_none(), "{headers}");
}
