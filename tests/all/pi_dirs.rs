//! A pi user's directories over the real binary: with only `~/.pi/agent` (or
//! `PI_CODING_AGENT_DIR`) present, pith takes the user's models and default model from it;
//! `~/.pith/agent` and `PITH_AGENT_DIR` win when they exist.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Writes an agent directory at `dir` whose default model is `model` (a provider of its own).
fn agent_dir(dir: &Path, model: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let models = json!({"providers": {"mine": {
        "baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": model, "name": model, "contextWindow": 8000, "maxTokens": 1000}]}}});
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    let settings = json!({"defaultProvider": "mine", "defaultModel": model});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// The model id `get_state` shows for pith started with `home` as `HOME` and `env`.
async fn model_of(home: &Path, env: &[(&str, &Path)]) -> Value {
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_pith"));
    command
        .args(["--mode", "rpc", "--no-session"])
        .current_dir(&work)
        .env("HOME", home)
        .env("PITH_CACHE_DIR", crate::support::shared_cache())
        .env_remove("PITH_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"s\",\"type\":\"get_state\"}\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        let frame: Value = serde_json::from_str(&line).unwrap();
        if frame["id"] == "s" {
            return frame["data"]["model"]["id"].clone();
        }
    }
    panic!("no answer to get_state");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pi_users_agent_directory_is_used_as_it_is() {
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = home.path();
    // Only pi's directory: it is used.
    agent_dir(&home.join(".pi/agent"), "from-pi-home");
    assert_eq!(model_of(home, &[]).await, "from-pi-home");
    // pi's variable moves it, as it moves pi's.
    let elsewhere = home.join("elsewhere");
    agent_dir(&elsewhere, "from-pi-env");
    assert_eq!(
        model_of(home, &[("PI_CODING_AGENT_DIR", &elsewhere)]).await,
        "from-pi-env"
    );
    // pith's own directory, once it exists, comes first; pith's variable before pi's.
    agent_dir(&home.join(".pith/agent"), "from-pith-home");
    assert_eq!(model_of(home, &[]).await, "from-pith-home");
    let pith_env = home.join("pith-env");
    agent_dir(&pith_env, "from-pith-env");
    assert_eq!(
        model_of(
            home,
            &[
                ("PI_CODING_AGENT_DIR", &elsewhere),
                ("PITH_AGENT_DIR", &pith_env)
            ]
        )
        .await,
        "from-pith-env"
    );
}
