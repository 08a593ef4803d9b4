//! `pith -p` and `pith --mode json` over the real binary, beside pi 1.5.2: every case in
//! `tests/fixtures/pi-1.5-print/cases.json` was captured from pi against the scripted fake
//! server (its arguments, stdin, stdout, stderr, exit code and the user messages the model got);
//! pith runs the same arguments and stdin against the same script on openai-completions and
//! must print the same text (JSON: the same events, frame by frame in shape, a retry's among
//! them), exit with the same code and send the model the same prompts.

use std::process::Stdio;

use crate::support;
use crate::support::fake_llm::FakeLlm;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

/// What one run of the binary gave.
struct Run {
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

/// The pith command in `work` with `args` (after the provider and model of `url`'s fake
/// server), its stdin piped or /dev/null.
fn command(
    work: &std::path::Path,
    url: &str,
    args: &[String],
    piped: bool,
) -> tokio::process::Command {
    let agent = work.parent().unwrap().join("agent");
    let models = json!({"providers": {"fake-openai": {
        "baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "fake-key",
        "models": [{"id": "fake-gpt", "name": "Fake GPT", "contextWindow": 128000, "maxTokens": 4096}]}}});
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_pith"));
    command
        .args(["--provider", "fake-openai", "--model", "fake-gpt"])
        .args(args)
        .current_dir(work)
        .env("PITH_AGENT_DIR", &agent)
        .env("PITH_CACHE_DIR", support::shared_cache())
        .env_remove("OPENAI_API_KEY")
        .stdin(if piped { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Runs pith (see [`command`]) with `stdin` (`None`: /dev/null) to its exit.
async fn pith(work: &std::path::Path, url: &str, args: &[String], stdin: Option<&str>) -> Run {
    let mut child = command(work, url, args, stdin.is_some()).spawn().unwrap();
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(text.as_bytes()).await.unwrap();
    }
    finish(child).await
}

/// Waits for `child` and takes what it printed.
async fn finish(child: tokio::process::Child) -> Run {
    let output = child.wait_with_output().await.unwrap();
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    }
}

/// The last user message of each request the server got, as the capture recorded them.
fn user_messages(server: &FakeLlm) -> Value {
    let sent: Vec<Value> = server
        .requests()
        .iter()
        .filter_map(|request| {
            let messages = request["body"]["messages"].as_array()?;
            let user = messages.iter().rev().find(|m| m["role"] == "user")?;
            Some(match &user["content"] {
                Value::String(text) => json!([text]),
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|b| match b["type"].as_str() {
                        Some("text") => b["text"].clone(),
                        other => json!(other),
                    })
                    .collect(),
                other => other.clone(),
            })
        })
        .collect();
    Value::Array(sent)
}

#[tokio::test(flavor = "multi_thread")]
async fn print_and_json_modes_answer_as_pi_1_5_does() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            support::repo_root().join("tests/fixtures/pi-1.5-print/cases.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        for (file, text) in fixture["files"].as_object().unwrap() {
            std::fs::write(work.join(file), text.as_str().unwrap()).unwrap();
        }
        if let Some(settings) = case.get("settings") {
            std::fs::create_dir_all(dir.path().join("agent")).unwrap();
            std::fs::write(dir.path().join("agent/settings.json"), settings.to_string()).unwrap();
        }
        let server = FakeLlm::start(case["script"].clone()).await;
        let args: Vec<String> = case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let stdin = (case["stdin"] == "pipe").then(|| case["stdin_text"].as_str().unwrap_or(""));
        let run = pith(&work, &server.url, &args, stdin).await;
        let work_text = work.display().to_string();
        let expected_stderr = case["stderr"]
            .as_str()
            .unwrap()
            .replace("${WORK}", &work_text);
        assert_eq!(
            run.code,
            case["rc"].as_i64().map(|c| c as i32),
            "{name}: {}",
            run.stderr
        );
        let status = case["script"]["turns"][0]["error"]["status"].as_u64();
        if let Some(status) = status.filter(|s| expected_stderr.starts_with(&s.to_string())) {
            // A provider's HTTP error is printed as pith's provider words it ("400 {body}";
            // pi's OpenAI client: "400: {body.error}"): the same status and message.
            assert!(
                run.stderr.starts_with(&status.to_string()) && run.stderr.ends_with('\n'),
                "{name}: {}",
                run.stderr
            );
            let message = case["script"]["turns"][0]["error"]["message"]
                .as_str()
                .unwrap();
            assert!(run.stderr.contains(message), "{name}: {}", run.stderr);
        } else {
            assert_eq!(run.stderr, expected_stderr, "{name}");
        }
        let expected_users: Value = serde_json::from_str(
            &case["user_messages"]
                .to_string()
                .replace("${WORK}", &work_text),
        )
        .unwrap();
        assert_eq!(user_messages(&server), expected_users, "{name}");
        match case.get("stdout_lines") {
            None => assert_eq!(run.stdout, case["stdout"].as_str().unwrap(), "{name}"),
            Some(lines) => {
                let ours: Vec<Value> = run
                    .stdout
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                let theirs = lines.as_array().unwrap();
                let shapes = |frames: &[Value]| -> Vec<String> {
                    frames.iter().map(support::rpc::shape).collect()
                };
                assert_eq!(shapes(&ours), shapes(theirs), "{name}");
                assert_eq!(ours[0]["cwd"], work_text.as_str(), "{name}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_prompt_is_an_error_never_a_silent_success() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // pi exits 0 having done nothing; pith says why and exits 2.
    for (args, stdin) in [
        (vec!["--no-session".to_string()], None),
        (vec!["-p".to_string()], Some("  \n\t\n")),
        (vec!["--mode".to_string(), "json".to_string()], None),
    ] {
        let run = pith(&work, "http://127.0.0.1:9", &args, stdin).await;
        assert_eq!(run.code, Some(2), "{args:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert!(run.stderr.contains("no prompt"), "{args:?}: {}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_aborts_the_run_and_exits_143() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = FakeLlm::start(json!([{"hang": true}])).await;
    let args = vec!["--no-session".to_string(), "-p".into(), "hello".into()];
    let child = command(&work, &server.url, &args, false).spawn().unwrap();
    // Once the model has the request, the run is in flight.
    while server.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // SAFETY: kill(2) on the pith this test started.
    unsafe {
        libc::kill(child.id().unwrap() as i32, libc::SIGTERM);
    }
    let run = finish(child).await;
    assert_eq!(run.code, Some(143), "{}", run.stderr);
    assert!(run.stdout.is_empty());
    // pi 1.5.2 on openai-completions says the same (its capture `text_sigterm`).
    assert_eq!(
        run.stderr,
        format!("{}\n", pith::agent::run::agent_loop::REQUEST_ABORTED)
    );
}
