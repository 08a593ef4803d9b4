//! pi's model catalog over the real binary: with the same keys, `get_available_models` offers
//! every model pi 1.5.2 offers (captured once with the reference pi, in
//! `tests/fixtures/pi-1.5-models/`), in pi's order, with the same API, window and output
//! limit; a session with no model named starts on pi's default; pi's model names resolve.

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith};

/// The capture: the variables given a dummy key, and pi's models.
fn pi_capture() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/pi-1.5-models/available.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// pith with a dummy key in each of `vars`, no `--model`, and no other key of the test's
/// environment.
async fn pith_with_keys(vars: &[&str], extra: &[&str]) -> Pith {
    let mut options = Options {
        args: vec!["--no-session".into()],
        ..Options::default()
    };
    options.args.extend(extra.iter().map(|a| a.to_string()));
    let capture = pi_capture();
    options.env_remove = capture["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .chain(["ANTHROPIC_AUTH_TOKEN".to_string()])
        .collect();
    options.env = vars
        .iter()
        .map(|v| (v.to_string(), format!("dummy-{v}")))
        .collect();
    Pith::spawn(options).await
}

#[tokio::test(flavor = "multi_thread")]
async fn every_model_pi_offers_for_the_same_keys() {
    let capture = pi_capture();
    let vars: Vec<&str> = capture["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut pith = pith_with_keys(&vars, &[]).await;
    let response = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    let offered: Vec<Value> = response["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!([
                m["provider"],
                m["id"],
                m["api"],
                m["contextWindow"],
                m["maxTokens"]
            ])
        })
        .collect();
    let expected = capture["models"].as_array().unwrap();
    let missing: Vec<&Value> = expected.iter().filter(|m| !offered.contains(m)).collect();
    assert!(
        missing.is_empty(),
        "{} of pi's {} models missing or different, e.g. {:?}",
        missing.len(),
        expected.len(),
        &missing[..missing.len().min(5)]
    );
    assert_eq!(&offered, expected, "the same models, in pi's order");
    // The whole of pi's model JSON, as pi sends it (pi-ai's catalog entry).
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../catalog/pi-models.jsonl"
    ))
    .unwrap();
    let entries: Vec<Value> = catalog
        .lines()
        .skip(1)
        .flat_map(|line| serde_json::from_str::<Vec<Value>>(line).unwrap())
        .collect();
    for sent in response["data"]["models"].as_array().unwrap() {
        let entry = entries
            .iter()
            .find(|e| e["provider"] == sent["provider"] && e["id"] == sent["id"])
            .unwrap();
        assert_eq!(sent, entry, "{}/{}", sent["provider"], sent["id"]);
    }
    let sonnet = response["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["provider"] == "anthropic" && m["id"] == "claude-sonnet-4-5")
        .unwrap();
    assert_eq!(sonnet["maxTokens"], 64000);
    assert_eq!(sonnet["promptCache"], json!({"short": 300, "long": 3600}));
    assert_eq!(sonnet["type"], "chat");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_starts_on_pi_s_default_and_pi_s_names_resolve() {
    let mut pith = pith_with_keys(&["ANTHROPIC_API_KEY", "OPENAI_API_KEY"], &[]).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["provider"], "anthropic");
    assert_eq!(state["data"]["model"]["id"], "claude-opus-5-5");
    for (pattern, provider, id) in [
        ("claude-sonnet-4-6", "anthropic", "claude-sonnet-4-6"),
        ("claude-opus-4-8", "anthropic", "claude-opus-4-8"),
        ("gpt-5.1", "openai", "gpt-5.1"),
        ("openai/gpt-5.1", "openai", "gpt-5.1"),
    ] {
        let mut pith = pith_with_keys(
            &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"],
            &["--model", pattern],
        )
        .await;
        let state = pith.call("s", json!({"type": "get_state"})).await;
        assert_eq!(state["data"]["model"]["provider"], provider, "{pattern}");
        assert_eq!(state["data"]["model"]["id"], id, "{pattern}");
    }
}

/// `pith --list-models [search]` prints what pi 1.5.2 prints for the same keys, byte for byte
/// (the table, pi's order and pi's fuzzy search; captured with the reference pi).
#[test]
fn list_models_prints_pi_s_table() {
    let capture = pi_capture();
    let agent = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/pi-1.5-models"
    );
    for (search, file) in [
        (None, "list-models.txt"),
        (Some("sonnet 4"), "list-models-sonnet-4.txt"),
        (Some("gpt5"), "list-models-gpt5.txt"),
        (Some("kimi k2"), "list-models-kimi-k2.txt"),
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_pith"));
        command
            .arg("--list-models")
            .args(search)
            .env("PITH_AGENT_DIR", agent.path())
            .env_remove("ANTHROPIC_AUTH_TOKEN");
        for var in capture["env"].as_array().unwrap() {
            let var = var.as_str().unwrap();
            command.env(var, format!("dummy-{var}"));
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let expected = std::fs::read_to_string(format!("{fixtures}/{file}")).unwrap();
        assert!(
            String::from_utf8_lossy(&output.stdout) == expected,
            "{file}: pith's table differs from pi's"
        );
    }
}

/// OpenRouter's list for the user's key, which pi refreshes and keeps in the agent
/// directory's `models-store.json`, replaces the built-in one.
#[tokio::test(flavor = "multi_thread")]
async fn pi_s_stored_provider_catalog_replaces_the_built_in_one() {
    let store = json!({"openrouter": {"checkedAt": 1, "models": [
        {"id": "acme/coder-1", "name": "Acme Coder", "api": "openai-completions", "provider": "openrouter",
         "baseUrl": "https://openrouter.ai/api/v1", "reasoning": false, "input": ["text"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
         "contextWindow": 64000, "maxTokens": 8000, "type": "chat"},
        {"id": "acme/painter", "name": "Acme Painter", "api": "openrouter-images", "provider": "openrouter",
         "baseUrl": "https://openrouter.ai/api/v1", "type": "image"}
    ]}});
    let mut options = Options {
        args: vec!["--no-session".into()],
        env: vec![("OPENROUTER_API_KEY".into(), "dummy".into())],
        env_remove: pi_capture()["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .filter(|v| v != "OPENROUTER_API_KEY")
            .collect(),
        ..Options::default()
    };
    options
        .agent_files
        .push(("models-store.json".into(), store.to_string()));
    let mut pith = Pith::spawn(options).await;
    let response = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    let ids: Vec<&str> = response["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "openrouter")
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, ["acme/coder-1"]);
}
