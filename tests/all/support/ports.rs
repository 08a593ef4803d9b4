//! pi's example extensions beside their ports: a scenario captured from pi 1.5.2 running one of
//! its examples (`tests/fixtures/pi-1.5-ports/<example>/`) is replayed against pith running the
//! WebAssembly port (`plugins/examples/<crate>`), with the same scripted model on the same kind
//! of fake server, and both transcripts are reduced to what the extension decides: its
//! dialogs, notices, statuses and widgets, its tools' results, the commands it lists, the
//! answers to the prompts that ran its commands, and its errors. Those must be equal, in order.

use serde_json::{Value, json};

use super::fake_llm::FakeLlm;
use super::rpc::{Options, Pith, golden_frames};

/// A replayed scenario: pith's frames and pi's, and what the model was asked.
pub struct Replayed {
    /// pith's frames.
    pub ours: Vec<Value>,
    /// pi's frames, from the golden transcript.
    pub theirs: Vec<Value>,
    /// The requests pith's model got.
    pub requests: Vec<Value>,
    /// The requests pi's model got (`requests.jsonl`).
    pub their_requests: Vec<Value>,
    /// What pith wrote on stderr.
    pub our_stderr: Vec<String>,
    /// What pi wrote on stderr (the golden's `err` lines).
    pub their_stderr: Vec<String>,
}

/// The fixture folder of `example`.
pub fn fixture(example: &str) -> std::path::PathBuf {
    super::repo_root()
        .join("tests/fixtures/pi-1.5-ports")
        .join(example)
}

/// Replays `example`'s scenario with the port `port` (a crate of `plugins/examples/`) in
/// place of pi's TypeScript file.
pub async fn replay(example: &str, port: &str) -> Replayed {
    replay_with(example, port, json!({})).await
}

/// [`replay`] with `settings` merged over the scenario's (the grants a third-party extension
/// needs, which pi's extensions do not).
pub async fn replay_with(example: &str, port: &str, settings: Value) -> Replayed {
    replay_steps(example, port, settings, usize::MAX).await
}

/// [`replay_with`] for the scenario's first `steps` steps only.
pub async fn replay_steps(example: &str, port: &str, settings: Value, steps: usize) -> Replayed {
    replay_rewritten(example, port, settings, steps, &[]).await
}

/// [`replay_steps`] with each `(from, to)` text of the scenario and of the port's manifest
/// rewritten first (a path pi's example fixes, which pith's test puts elsewhere).
pub async fn replay_rewritten(
    example: &str,
    port: &str,
    settings: Value,
    steps: usize,
    rewrites: &[(&str, &str)],
) -> Replayed {
    let dir = fixture(example);
    let mut text = std::fs::read_to_string(dir.join("scenario.json")).unwrap();
    for (from, to) in rewrites {
        text = text.replace(from, to);
    }
    let mut scenario: Value = serde_json::from_str(&text).unwrap();
    if let Some(all) = scenario["steps"].as_array_mut() {
        all.truncate(steps);
    }
    let server = FakeLlm::start(scenario["fake_llm"].clone()).await;
    let url = server.url.clone();
    let mut models = json!({"providers": {
        "fake": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "fake-key", "models": [
            {"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192},
            {"id": "fake-reasoner", "name": "Fake Reasoner", "reasoning": true, "contextWindow": 200000, "maxTokens": 16384}]},
        "fake-openai": {"baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "fake-key", "models": [
            {"id": "fake-gpt", "name": "Fake GPT", "contextWindow": 128000, "maxTokens": 4096}]}}});
    let port_number = url.rsplit(':').next().unwrap_or_default().to_string();
    for (provider, config) in scenario["models_extra"].as_object().into_iter().flatten() {
        let config: Value =
            serde_json::from_str(&config.to_string().replace("${PORT}", &port_number)).unwrap();
        models["providers"][provider] = config;
    }
    let mut args: Vec<String> = scenario["model_args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_else(|| {
            ["--provider", "fake", "--model", "fake-model"]
                .map(String::from)
                .to_vec()
        });
    // pi's `-e <file>` becomes the port, in the plugins directory; the rest stays.
    let mut given = scenario["agent_args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    while let Some(arg) = given.next() {
        match arg {
            "-e" | "--extension" => {
                given.next();
            }
            other => args.push(other.replace("${WS}", ".")),
        }
    }
    let plugins = super::plugins_dir_with(&[&format!("examples/{port}")]);
    let manifest = plugins.path().join(format!("{port}.toml"));
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    for (from, to) in rewrites {
        text = text.replace(from, to);
    }
    std::fs::write(&manifest, text).unwrap();
    args.push("-e".into());
    args.push(
        plugins
            .path()
            .join(format!("{port}.toml"))
            .display()
            .to_string(),
    );
    let mut agent_files = vec![("models.json".to_string(), models.to_string())];
    let mut merged = scenario
        .get("settings")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for (key, value) in settings.as_object().into_iter().flatten() {
        merged[key] = value.clone();
    }
    agent_files.push(("settings.json".into(), merged.to_string()));
    for (name, text) in scenario["agent_files"].as_object().into_iter().flatten() {
        agent_files.push((name.clone(), text.as_str().unwrap_or_default().to_string()));
    }
    let work_files = scenario["files"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, text)| (name.clone(), text.as_str().unwrap_or_default().to_string()))
        .collect();
    let options = Options {
        args,
        agent_files,
        work_files,
        capture_stderr: true,
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    super::scenario::run_steps(&mut pith, &scenario, vec![("WS".into(), ".".into())]).await;
    pith.close_stdin();
    while pith.next_frame().await.is_some() {}
    assert_eq!(pith.exit_code().await, Some(0));
    let their_requests = std::fs::read_to_string(dir.join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let their_stderr = std::fs::read_to_string(dir.join("transcript.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["dir"] == "err")
        .filter_map(|record| record["line"].as_str().map(String::from))
        .collect();
    Replayed {
        our_stderr: pith.stderr_to_the_end().await,
        ours: pith.frames,
        theirs: golden_frames(&dir.join("transcript.jsonl")),
        requests: server.requests(),
        their_requests,
        their_stderr,
    }
}

/// `text` without terminal colour escapes (pi's theme colours; pith has none).
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every string in `value` [`plain`].
fn plain_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(plain(text)),
        Value::Array(items) => Value::Array(items.iter().map(plain_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), plain_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What the extension decided in `frames`, in order (see the module's docs).
pub fn decisions(frames: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for frame in frames {
        match frame["type"].as_str() {
            Some("extension_ui_request") => {
                let mut request = frame.clone();
                if let Some(map) = request.as_object_mut() {
                    map.remove("id");
                    map.remove("type");
                    // pith's notify without a type is pi's `info`.
                    if map.get("method") == Some(&json!("notify"))
                        && !map.contains_key("notifyType")
                    {
                        map.insert("notifyType".into(), json!("info"));
                    }
                }
                out.push(plain_value(&request));
            }
            Some("tool_execution_end") => out.push(json!({
                "tool": frame["toolName"],
                "content": plain_value(&frame["result"]["content"]),
                "details": frame["result"]["details"],
                "isError": frame["isError"],
            })),
            Some("extension_error") => out.push(json!({"extensionError": frame["event"]})),
            Some("response") => match frame["command"].as_str() {
                Some("prompt") => out.push(json!({
                    "prompt": frame["data"]["disposition"],
                    "success": frame["success"],
                })),
                Some("get_commands") => out.push(json!({
                    "commands": frame["data"]["commands"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|c| c["source"] == "extension")
                        .map(|c| json!([c["name"], c["description"]]))
                        .collect::<Vec<_>>(),
                })),
                _ => {}
            },
            _ => {}
        }
    }
    out
}

/// Asserts that the port decided what pi's original did, one decision at a time.
pub fn assert_same_decisions(example: &str, ours: &[Value], theirs: &[Value]) {
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(
            a, b,
            "{example}: decision {i} differs\npith: {a}\npi:   {b}\npith's: {ours:#?}\npi's: {theirs:#?}"
        );
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{example}: decision counts differ\npith's: {ours:#?}\npi's: {theirs:#?}"
    );
}
