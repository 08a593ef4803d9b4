//! The model registry over the real binary: keys from auth.json, scoped cycling with
//! `--models`, and key isolation between providers.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};
use serde_json::json;

fn models_json(url: &str, with_key: bool) -> String {
    let mut provider = json!({"baseUrl": url, "api": "anthropic-messages",
        "models": [{"id": "fake-model", "maxTokens": 8192}, {"id": "fake-reasoner", "reasoning": true, "maxTokens": 16384}, {"id": "fake-third"}]});
    if with_key {
        provider["apiKey"] = json!("FAKE_KEY_VAR");
    }
    json!({"providers": {"fake": provider, "other": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "other-secret", "models": [{"id": "other-model"}]}}}).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_from_auth_json_and_env_var_names() {
    let server = FakeLlm::start(json!([{"text": "one"}, {"text": "two"}])).await;
    let options = Options {
        args: vec![
            "--provider".into(),
            "fake".into(),
            "--model".into(),
            "fake-model".into(),
            "--no-session".into(),
        ],
        agent_files: vec![
            ("models.json".into(), models_json(&server.url, false)),
            (
                "auth.json".into(),
                json!({"fake": {"type": "api_key", "key": "from-auth"}}).to_string(),
            ),
        ],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    assert_eq!(server.requests()[0]["headers"]["x-api-key"], "from-auth");

    // An apiKey that names an environment variable uses its value; each provider gets only its own key.
    let server = FakeLlm::start(json!([{"text": "one"}, {"text": "two"}])).await;
    let options = Options {
        args: vec![
            "--provider".into(),
            "fake".into(),
            "--model".into(),
            "fake-model".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models_json(&server.url, true))],
        env: vec![("FAKE_KEY_VAR".into(), "from-env".into())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    pith.call(
        "m",
        json!({"type": "set_model", "provider": "other", "modelId": "other-model"}),
    )
    .await;
    pith.call("p2", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    let requests = server.requests();
    assert_eq!(requests[0]["headers"]["x-api-key"], "from-env");
    assert_eq!(requests[1]["headers"]["x-api-key"], "other-secret");
    assert!(!requests[0].to_string().contains("other-secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn scoped_cycling_with_models() {
    let server = FakeLlm::start(json!([])).await;
    let options = Options {
        args: vec![
            "--models".into(),
            "fake/fake-model,fake/fake-reasoner:high".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models_json(&server.url, true))],
        env: vec![("FAKE_KEY_VAR".into(), "k".into())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["id"], "fake-model");
    let next = pith.call("c1", json!({"type": "cycle_model"})).await;
    assert_eq!(next["data"]["model"]["id"], "fake-reasoner");
    assert_eq!(next["data"]["thinkingLevel"], "high");
    assert_eq!(next["data"]["isScoped"], true);
    let back = pith.call("c2", json!({"type": "cycle_model"})).await;
    assert_eq!(back["data"]["model"]["id"], "fake-model");
    assert_eq!(back["data"]["thinkingLevel"], "off");
    // Unscoped, every model with a key takes part.
    let available = pith
        .call("a", json!({"type": "get_available_models"}))
        .await;
    assert_eq!(available["data"]["models"].as_array().unwrap().len(), 4);
}

/// A plugin folder holding the provider probe (a third-party plugin).
fn provider_probe() -> tempfile::TempDir {
    let plugins = tempfile::tempdir().unwrap();
    std::fs::copy(
        support::built_component("provider-probe"),
        plugins.path().join("provider_probe.wasm"),
    )
    .unwrap();
    std::fs::copy(
        support::repo_root().join("plugins/testing/provider-probe/pith.toml"),
        plugins.path().join("provider_probe.toml"),
    )
    .unwrap();
    plugins
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_reaches_only_its_base_url_and_its_own_key() {
    let own = support::serve_text("mine").await;
    let elsewhere = support::serve_text("secret data").await;
    let plugins = provider_probe();
    let models = json!({"providers": {"probed": {"baseUrl": own, "api": "probe-api", "apiKey": "probed-key", "models": [{"id": "probe-model"}]}}});
    let options = Options {
        args: vec![
            "--provider".into(),
            "probed".into(),
            "--model".into(),
            "probe-model".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        plugins_dir: Some(plugins.path().to_path_buf()),
        env: vec![("ANTHROPIC_API_KEY".into(), "anthropic-secret".into())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    let ask = json!({"url": format!("{elsewhere}/steal"), "key": "ANTHROPIC_API_KEY"}).to_string();
    pith.call("p", json!({"type": "prompt", "message": ask}))
        .await;
    let end = pith.until_agent_end().await;
    let text = end["messages"][2]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        text,
        format!(
            "own: 200 mine\nother: http denied: {elsewhere}/steal is not under a granted prefix\nconfig not granted: ANTHROPIC_API_KEY\nrequest key: Some(\"probed-key\")"
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn api_key_flag_and_cost_from_model_prices() {
    let server = FakeLlm::start(json!([{"text": "priced", "usage": {"input": 1_000_000, "output": 500_000, "cache_read": 200_000, "cache_write": 100_000}}])).await;
    let models = json!({"providers": {"fake": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "from-file",
        "models": [{"id": "priced", "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            "fake/priced".into(),
            "--api-key".into(),
            "from-flag".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(server.requests()[0]["headers"]["x-api-key"], "from-flag");
    let cost = &end["messages"][2]["usage"]["cost"];
    assert_eq!(cost["input"], json!(3));
    assert_eq!(cost["output"], json!(7.5));
    assert_eq!(cost["cacheRead"], json!(0.06));
    assert_eq!(cost["cacheWrite"], json!(0.375));
    assert_eq!(cost["total"], json!(10.935));
    let stats = pith.call("s", json!({"type": "get_session_stats"})).await;
    assert_eq!(stats["data"]["cost"], json!(10.935));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_third_party_provider_gets_a_built_in_providers_key_only_once_granted() {
    let server = FakeLlm::start(json!([{"text": "from the built-in plugin"}])).await;
    let plugins = provider_probe();
    // Anthropic's models at the fake model, which answers as the Messages API.
    let models = json!({"providers": {"anthropic": {"baseUrl": server.url}}});
    let mut options = Options {
        args: vec![
            "--model".into(),
            "anthropic/claude-sonnet-4-5".into(),
            "--no-session".into(),
        ],
        plugins_dir: Some(plugins.path().to_path_buf()),
        env: vec![("ANTHROPIC_API_KEY".into(), "anthropic-secret".into())],
        agent_files: vec![("models.json".into(), models.to_string())],
        capture_stderr: true,
        ..Options::default()
    };
    // Not granted: its model under `anthropic` is left out, the built-in wire format it claims
    // stays with the first-party plugin, and the log says how to allow it.
    let mut pith = Pith::spawn(options.clone()).await;
    let set = pith
        .call(
            "m",
            json!({"type": "set_model", "provider": "anthropic", "modelId": "probe-claude"}),
        )
        .await;
    assert_eq!(set["success"], false, "{set}");
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(
        end["messages"][2]["content"][0]["text"], "from the built-in plugin",
        "{end}"
    );
    assert_eq!(
        server.requests()[0]["headers"]["x-api-key"],
        "anthropic-secret"
    );
    let log = pith.stderr_to_the_end().await;
    let refused = |what: &str| {
        log.iter().any(|l| {
            l.contains(&format!("the plugin provider-probe {what}"))
                && l.contains("\"grant\": {\"providers\": true}")
        })
    };
    assert!(
        refused(
            "serves the built-in provider anthropic, which would hand it the user's key: left out"
        ),
        "{log:?}"
    );
    assert!(
        refused("serves the built-in wire format anthropic-messages"),
        "{log:?}"
    );
    drop(pith);

    // Granted: it serves its model and the wire format, with the user's Anthropic key.
    let settings = json!({"plugins": {"provider-probe": {"grant": {"providers": true}}}});
    options
        .agent_files
        .push(("settings.json".into(), settings.to_string()));
    options.capture_stderr = false;
    let mut pith = Pith::spawn(options).await;
    for (id, model) in [("a", "claude-sonnet-4-5"), ("b", "probe-claude")] {
        let set = pith
            .call(
                id,
                json!({"type": "set_model", "provider": "anthropic", "modelId": model}),
            )
            .await;
        assert_eq!(set["success"], true, "{set}");
        pith.call("p", json!({"type": "prompt", "message": "{}"}))
            .await;
        let end = pith.until_agent_end().await;
        let text = end["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            text.starts_with("own: ") && text.ends_with("request key: Some(\"anthropic-secret\")"),
            "{model}: {text}"
        );
    }
}
