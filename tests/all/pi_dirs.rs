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

/// pi's `--fork <path|id>`: a saved session (found by a partial id, even one saved for another
/// folder) is copied into a new session of this folder with its conversation, named by
/// `--session-id` when given; the original stays as it was. `--fork` with `--no-session` is
/// refused with pi's constraint.
#[test]
fn fork_copies_a_session_into_a_new_one_here() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (agent, first, second) = (
        dir.path().join("agent"),
        dir.path().join("first"),
        dir.path().join("second"),
    );
    for d in [&agent, &first, &second] {
        std::fs::create_dir_all(d).unwrap();
    }
    let pith = |cwd: &Path, args: &[&str], script: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
            .args(["--provider", "faux", "--model", "faux-model"])
            .args(args)
            .current_dir(cwd)
            .env("PITH_AGENT_DIR", &agent)
            .env("PITH_FAUX_SCRIPT", script)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = pith(
        &first,
        &[
            "--session-id",
            "0199aaaa-0000-7000-8000-00000000f00d",
            "-p",
            "one",
        ],
        r#"[{"text":"first answer"}]"#,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let saved = |folder: &Path| -> Vec<std::path::PathBuf> {
        let root = agent.join("sessions");
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap().flatten() {
            for file in std::fs::read_dir(entry.path()).unwrap().flatten() {
                let text = std::fs::read_to_string(file.path()).unwrap();
                let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
                let here = folder.canonicalize().unwrap();
                if header["cwd"] == json!(here.display().to_string()) {
                    files.push(file.path());
                }
            }
        }
        files
    };
    let original = saved(&first).pop().expect("the first session was saved");
    let before = std::fs::read_to_string(&original).unwrap();
    // The second answer sees the first conversation (two assistant messages before it).
    let (code, out, stderr) = pith(
        &second,
        &[
            "--fork",
            "0199aaaa",
            "--session-id",
            "0199bbbb-0000-7000-8000-00000000beef",
            "-p",
            "two",
        ],
        r#"[{"text":"x"},{"text":"forked answer"}]"#,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(out.trim(), "forked answer");
    let forked = saved(&second)
        .pop()
        .expect("the fork was saved for the second folder");
    assert!(
        forked
            .display()
            .to_string()
            .ends_with("_0199bbbb-0000-7000-8000-00000000beef.jsonl")
    );
    let text = std::fs::read_to_string(&forked).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["parentSession"],
        json!(original.display().to_string())
    );
    assert!(text.contains("first answer") && text.contains("forked answer"));
    assert_eq!(std::fs::read_to_string(&original).unwrap(), before);
    let (code, _, stderr) = pith(
        &second,
        &["--fork", "0199aaaa", "--no-session", "-p", "x"],
        "[]",
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(
            "--fork cannot be combined with --session, --continue, --resume, or --no-session"
        ),
        "{stderr}"
    );
}
