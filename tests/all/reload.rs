//! `reload` over the real binary: settings, `models.json`, `auth.json`, prompt templates and
//! plugins read again without a respawn, answered with what changed; a broken file is named
//! and the process goes on serving.

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith};

fn model_ids(answer: &Value) -> Vec<String> {
    answer["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}/{}",
                m["provider"].as_str().unwrap(),
                m["id"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn reload_reads_settings_models_templates_and_plugins_again() {
    let mut pith = Pith::spawn(Options::faux(json!([]))).await;
    let agent = pith.dir.path().join("agent");

    let nothing = pith.call("r0", json!({"type": "reload"})).await;
    assert_eq!(nothing["success"], true, "{nothing}");
    assert_eq!(nothing["data"]["settings"]["changed"], false, "{nothing}");
    assert_eq!(
        nothing["data"]["models"],
        json!({"added": [], "removed": []})
    );
    assert_eq!(
        nothing["data"]["plugins"],
        json!({"added": [], "updated": [], "removed": [], "errors": []})
    );
    let templates_before = nothing["data"]["promptTemplates"].as_u64().unwrap();

    // A provider in models.json, with its key in auth.json, is offered at once.
    std::fs::write(
        agent.join("models.json"),
        json!({"providers": {"local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
            "models": [{"id": "small-model"}]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        agent.join("auth.json"),
        json!({"local": {"type": "api_key", "key": "k"}}).to_string(),
    )
    .unwrap();
    // A setting the session reads, and a prompt template.
    std::fs::write(
        agent.join("settings.json"),
        json!({"tools": {"timeoutMs": 1000}}).to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(agent.join("prompts")).unwrap();
    std::fs::write(
        agent.join("prompts/review.md"),
        "---\ndescription: Review the change\n---\nReview $1\n",
    )
    .unwrap();
    let changed = pith.call("r1", json!({"type": "reload"})).await;
    assert_eq!(changed["data"]["settings"]["changed"], true, "{changed}");
    assert_eq!(
        changed["data"]["models"]["added"],
        json!(["local/small-model"]),
        "{changed}"
    );
    assert_eq!(
        changed["data"]["promptTemplates"].as_u64().unwrap(),
        templates_before + 1
    );
    let available = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    assert!(
        model_ids(&available).contains(&"local/small-model".to_string()),
        "{available}"
    );
    let set = pith
        .call(
            "s",
            json!({"type": "set_model", "provider": "local", "modelId": "small-model"}),
        )
        .await;
    assert_eq!(set["success"], true, "{set}");
    let commands = pith.call("c", json!({"type": "get_commands"})).await;
    assert!(
        commands["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "review"),
        "{commands}"
    );

    // Removed again; a broken settings file is named, and nothing stops.
    std::fs::remove_file(agent.join("models.json")).unwrap();
    std::fs::write(agent.join("settings.json"), "{ not json").unwrap();
    let broken = pith.call("r2", json!({"type": "reload"})).await;
    assert_eq!(broken["success"], true, "{broken}");
    assert_eq!(
        broken["data"]["models"]["removed"],
        json!(["local/small-model"]),
        "{broken}"
    );
    let problems = broken["data"]["settings"]["problems"].to_string();
    assert!(problems.contains("settings.json"), "{problems}");
    // The settings in force stay (a half-written file must not revoke every grant).
    assert_eq!(broken["data"]["settings"]["kept"], true, "{broken}");
    assert_eq!(broken["data"]["settings"]["changed"], false, "{broken}");
    let state = pith.call("g", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_added_before_reload_is_loaded_by_it() {
    let plugins = crate::support::plugins_dir_with(&["examples/word-count"]);
    let empty = tempfile::tempdir().unwrap();
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(empty.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    for entry in std::fs::read_dir(plugins.path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), empty.path().join(entry.file_name())).unwrap();
    }
    let answer = pith.call("r", json!({"type": "reload"})).await;
    assert_eq!(answer["success"], true, "{answer}");
    // The watcher may have loaded it first; either way it is there after the answer.
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    assert!(
        tools["data"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "word_count"),
        "{tools}"
    );
}
