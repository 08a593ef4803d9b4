//! Drives the real `pith` binary over pipes: spawn, send commands, read frames.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long a test waits for a frame before failing.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A running `pith --mode rpc`.
pub struct Pith {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Every frame read so far.
    pub frames: Vec<Value>,
    /// Lines that were not JSON.
    pub garbage: Vec<String>,
    pub dir: tempfile::TempDir,
    /// How long a frame may take ([`TIMEOUT`] unless a test expects a slow step).
    frame_timeout: Duration,
    /// How many frames had been read when the last line was sent.
    sent_at: usize,
    /// What it wrote on stderr, line by line, when [`Options::capture_stderr`] is set.
    stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The task reading stderr (it ends when pith closes it).
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// How to start pith.
#[derive(Clone)]
pub struct Options {
    pub args: Vec<String>,
    pub faux_script: Option<Value>,
    pub env: Vec<(String, String)>,
    pub plugins_dir: Option<PathBuf>,
    /// Files written into the agent directory before the start (relative path, contents).
    pub agent_files: Vec<(String, String)>,
    /// Files written into the working directory before the start (relative path, contents).
    pub work_files: Vec<(String, String)>,
    /// The protocol served (`--mode`): `rpc` unless a test says `acp`.
    pub mode: &'static str,
    /// Where pith starts, below the working directory (the working directory itself if empty).
    pub cwd: &'static str,
    /// Where pith starts instead, when it must be a directory made before (a git worktree).
    pub start_in: Option<PathBuf>,
    /// Variables of the test's environment pith does not get.
    pub env_remove: Vec<String>,
    /// The program and its first arguments, run instead of pith (the reference pi, to check
    /// that pi and pith read each other's files).
    pub program: Option<Vec<String>>,
    /// Keep what pith writes on stderr (see [`Pith::stderr_lines`]; it is still shown).
    pub capture_stderr: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            args: vec![
                "--provider".into(),
                "faux".into(),
                "--model".into(),
                "faux-model".into(),
                "--no-session".into(),
            ],
            faux_script: None,
            env: Vec::new(),
            plugins_dir: None,
            agent_files: Vec::new(),
            work_files: Vec::new(),
            mode: "rpc",
            cwd: "",
            start_in: None,
            env_remove: Vec::new(),
            program: None,
            capture_stderr: false,
        }
    }
}

/// The faux provider's `faux-model` with session files written to `sessions/` in the working
/// directory, plus `extra` arguments.
pub fn persistent(script: Value, extra: &[&str]) -> Options {
    let mut options = Options::faux(script);
    options.args = vec![
        "--provider".into(),
        "faux".into(),
        "--model".into(),
        "faux-model".into(),
        "--session-dir".into(),
        "sessions".into(),
    ];
    options.args.extend(extra.iter().map(|s| s.to_string()));
    options
}

impl Options {
    /// The default options with a faux script.
    pub fn faux(script: Value) -> Options {
        Options {
            faux_script: Some(script),
            ..Options::default()
        }
    }
}

impl Pith {
    /// Spawns pith in a fresh temporary working and agent directory.
    pub async fn spawn(options: Options) -> Pith {
        // Outside the temp dir, as a user's agent directory is: the temp dir is a writable
        // root of the default sandbox, and one holding the agent directory is split around it.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(dir.path().join("agent")).unwrap();
        // Its own temp dir, removed with the rest: spilled command output (a test floods 200 MB)
        // never piles up in the machine's /tmp.
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        for (root, files) in [
            ("agent", &options.agent_files),
            ("work", &options.work_files),
        ] {
            for (name, contents) in files {
                let path = dir.path().join(root).join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, contents).unwrap();
            }
        }
        let start_dir = match &options.start_in {
            Some(dir) => dir.clone(),
            None => work.join(options.cwd),
        };
        std::fs::create_dir_all(&start_dir).unwrap();
        let mut command = match options.program.as_deref() {
            Some([program, first @ ..]) => {
                let mut command = Command::new(program);
                command.args(first);
                command
            }
            _ => Command::new(env!("CARGO_BIN_EXE_pith")),
        };
        command
            .arg("--mode")
            .arg(options.mode)
            .args(&options.args)
            .current_dir(&start_dir)
            .env("PITH_AGENT_DIR", dir.path().join("agent"))
            .env("PITH_CACHE_DIR", super::shared_cache())
            .env("TMPDIR", dir.path().join("tmp"))
            .env_remove("PITH_FAUX_SCRIPT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if options.capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .kill_on_drop(true);
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
        ] {
            command.env_remove(var);
        }
        if options.program.is_some() {
            command.env("PI_CODING_AGENT_DIR", dir.path().join("agent"));
        }
        if let Some(script) = &options.faux_script {
            command.env("PITH_FAUX_SCRIPT", script.to_string());
        }
        if let Some(plugins) = &options.plugins_dir {
            command.arg("--plugins-dir").arg(plugins);
        }
        for key in &options.env_remove {
            command.env_remove(key);
        }
        for (key, value) in &options.env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn pith");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut stderr_reader = None;
        if let Some(piped) = child.stderr.take() {
            let lines = stderr.clone();
            stderr_reader = Some(tokio::spawn(async move {
                let mut reader = BufReader::new(piped).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    eprintln!("{line}");
                    lines.lock().unwrap().push(line);
                }
            }));
        }
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Pith {
            child,
            stdin,
            stdout,
            frames: Vec::new(),
            garbage: Vec::new(),
            dir,
            frame_timeout: TIMEOUT,
            sent_at: 0,
            stderr,
            stderr_reader,
        }
    }

    /// The lines written on stderr so far (with [`Options::capture_stderr`]).
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Every line written on stderr, once pith has closed it (after its exit).
    pub async fn stderr_to_the_end(&mut self) -> Vec<String> {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(TIMEOUT, reader).await;
        }
        self.stderr_lines()
    }

    /// The working directory.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Sends a raw line (a newline is added).
    pub async fn send_line(&mut self, line: &str) {
        self.sent_at = self.frames.len();
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends raw bytes.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Sends a command.
    pub async fn send(&mut self, command: Value) {
        self.send_line(&command.to_string()).await;
    }

    /// Takes stdin, to write from another task.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    /// Closes stdin.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Lets each frame take up to `limit`: for a step whose time is a compile's, not pith's
    /// (a large component compiled on a busy machine), so the test waits on the frame that
    /// proves the state rather than on a guess of how fast the machine is.
    pub fn allow_slow_frames(&mut self, limit: Duration) {
        self.frame_timeout = limit;
    }

    /// The next frame, or `None` at EOF.
    pub async fn next_frame(&mut self) -> Option<Value> {
        let limit = self.frame_timeout;
        loop {
            let line = tokio::time::timeout(limit, self.stdout.next_line())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "no frame within {limit:?}; frames so far: {:#?}",
                        self.frames
                    )
                })
                .unwrap()?;
            match serde_json::from_str::<Value>(&line) {
                Ok(frame) => {
                    self.frames.push(frame.clone());
                    return Some(frame);
                }
                Err(_) => self.garbage.push(line),
            }
        }
    }

    /// Reads frames until one matches `pred`; returns it.
    pub async fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.next_frame().await.unwrap_or_else(|| {
                panic!("EOF before the expected frame; frames: {:#?}", self.frames)
            });
            if pred(&frame) {
                return frame;
            }
        }
    }

    /// The first frame since the last line was sent that `pred` accepts, read already (an
    /// extension command's notices come before its answer, as pi's) or still to come.
    pub async fn since_sent(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(frame) = self.frames[self.sent_at..].iter().find(|f| pred(f)) {
            return frame.clone();
        }
        self.wait_for(pred).await
    }

    /// Reads frames until the response with this id.
    pub async fn response(&mut self, id: &str) -> Value {
        self.wait_for(|f| f["type"] == "response" && f["id"] == id)
            .await
    }

    /// Sends a command with an id and returns its response.
    pub async fn call(&mut self, id: &str, mut command: Value) -> Value {
        command["id"] = json!(id);
        self.send(command).await;
        self.response(id).await
    }

    /// Reads frames until `agent_end`.
    pub async fn until_agent_end(&mut self) -> Value {
        self.wait_for(|f| f["type"] == "agent_end").await
    }

    /// Frames since index `from`.
    pub fn since(&self, from: usize) -> &[Value] {
        &self.frames[from..]
    }

    /// Waits for the process to exit; returns its exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("pith exits")
            .ok()?
            .code()
    }
}

/// A compact description of a frame's shape: its type, event subtype and key order (top level,
/// `message`, `assistantMessageEvent`), and its content block types with their keys.
pub fn shape(frame: &Value) -> String {
    let keys = |v: &Value| {
        v.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
            .unwrap_or_default()
    };
    let blocks = |v: &Value| {
        v.get("content")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .map(|b| format!("{}({})", b["type"].as_str().unwrap_or("?"), keys(b)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    let mut out = format!(
        "{} [{}]",
        frame["type"].as_str().unwrap_or("?"),
        keys(frame)
    );
    if frame["type"] == "response" {
        out.push_str(&format!(
            " command={} success={}",
            frame["command"], frame["success"]
        ));
    }
    // The content of `message_update` snapshots is not compared: pi serializes them late, so
    // they can hold blocks that arrived after the event and in-progress fields (`index`,
    // `partialJson`, an empty `thinkingSignature`); pith's snapshots are exact.
    let streaming = frame["type"] == "message_update";
    if let Some(message) = frame.get("message").filter(|m| m.is_object()) {
        let content = if streaming {
            String::new()
        } else {
            blocks(message)
        };
        out.push_str(&format!(" message[{}] {}", keys(message), content));
    }
    if let Some(event) = frame.get("assistantMessageEvent") {
        let mut event_keys: Vec<String> = event
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        event_keys.retain(|k| k != "partial");
        out.push_str(&format!(
            " event={} [{}] partial[{}]",
            event["type"].as_str().unwrap_or("?"),
            event_keys.join(","),
            keys(&event["partial"])
        ));
    }
    out
}

/// The out-frames of a stored pi transcript.
pub fn golden_frames(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["dir"] == "out")
        .filter_map(|l| serde_json::from_str::<Value>(l["line"].as_str()?).ok())
        .collect()
}

/// Options that point the `fake` provider (anthropic-messages) at a fake server.
pub fn anthropic_fake(url: &str, model: &str) -> Options {
    let models = serde_json::json!({"providers": {"fake": {
    "baseUrl": url, "api": "anthropic-messages", "apiKey": "fake-key",
    "models": [
        {"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192},
        {"id": "fake-reasoner", "name": "Fake Reasoner", "reasoning": true, "contextWindow": 200000, "maxTokens": 16384},
        {"id": "fake-small", "name": "Fake Small", "contextWindow": 4096, "maxTokens": 8192}
    ]}}});
    Options {
        args: vec![
            "--provider".into(),
            "fake".into(),
            "--model".into(),
            model.into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    }
}

/// Options that point the `fake-openai` provider (openai-completions, declared only in
/// models.json) at a fake server.
pub fn openai_fake(url: &str, model: &str) -> Options {
    let models = serde_json::json!({"providers": {"fake-openai": {
    "baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "fake-key",
    "models": [
        {"id": "fake-gpt", "name": "Fake GPT", "contextWindow": 128000, "maxTokens": 4096},
        {"id": "fake-o", "name": "Fake O", "reasoning": true, "contextWindow": 128000, "maxTokens": 8192}
    ]}}});
    Options {
        args: vec![
            "--provider".into(),
            "fake-openai".into(),
            "--model".into(),
            model.into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    }
}

/// The roles of a list of messages (`agent_end.messages`, `get_messages`' `messages`).
pub fn roles(messages: &Value) -> Vec<&str> {
    messages
        .as_array()
        .map(|list| list.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default()
}

/// The first text of each message of a `get_messages` answer, the system message left out.
pub fn message_texts(answer: &Value) -> Vec<String> {
    answer["data"]["messages"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|m| m["role"] != "system")
                .map(|m| {
                    m["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The tool results among an `agent_end`'s messages, in order.
pub fn tool_results(end: &Value) -> Vec<Value> {
    end["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "toolResult")
        .cloned()
        .collect()
}

/// Writes, in `dir`, a node script that runs the `pith` binary with its arguments and passes
/// signals on (pi's `RpcClient` spawns `node <cliPath> …`); returns its path.
pub fn node_shim(dir: &Path) -> std::path::PathBuf {
    let shim = dir.join("pith-shim.cjs");
    std::fs::write(
        &shim,
        format!(
            "const {{ spawn }} = require('node:child_process');\n\
             const child = spawn({bin:?}, process.argv.slice(2), {{ stdio: 'inherit' }});\n\
             for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));\n\
             child.on('exit', (code) => process.exit(code ?? 1));\n",
            bin = env!("CARGO_BIN_EXE_pith"),
        ),
    )
    .unwrap();
    shim
}

/// A node driver of pi's `RpcClient` (the module at `client`): a client that spawns pith
/// through `$PITH_SHIM` in `$PITH_WORK` with the `faux` model, an empty `report`, a
/// `lastText(events)` helper, the started client, then `body`.
pub fn rpc_client_driver(client: &Path, body: &str) -> String {
    format!(
        r#"import {{ RpcClient }} from "file://{}";

const client = new RpcClient({{
  cliPath: process.env.PITH_SHIM,
  cwd: process.env.PITH_WORK,
  provider: "faux",
  model: "faux-model",
  args: ["--no-session"],
}});
const report = {{}};
const lastText = (events) => {{
  const ends = events.filter((e) => e.type === "message_end" && e.message.role === "assistant");
  const message = ends[ends.length - 1].message;
  return message.content.filter((c) => c.type === "text").map((c) => c.text).join("");
}};
await client.start();
{body}"#,
        client.display()
    )
}

/// A run of a pi `RpcClient` driver (see [`drive_rpc_client`]).
pub struct ClientRun<'a> {
    /// The directory of the `node` to run it on (first in `PATH`, as the client spawns `node`);
    /// the system's when `None`.
    pub node_bin: Option<&'a Path>,
    /// The `rpc-client.js` module.
    pub client: &'a Path,
    /// The driver's body (see [`rpc_client_driver`]).
    pub body: &'a str,
    /// The `faux` script.
    pub script: Value,
    /// More environment for the driver and pith.
    pub env: Vec<(&'a str, String)>,
    /// Files written into the agent directory (relative path, contents).
    pub agent_files: Vec<(&'a str, String)>,
}

/// Runs a pi `RpcClient` driver against the `pith` binary in a fresh directory; returns the
/// JSON report it prints last.
pub async fn drive_rpc_client(run: ClientRun<'_>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let shim = node_shim(dir.path());
    let (work, agent) = (dir.path().join("work"), dir.path().join("agent"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&agent).unwrap();
    for (name, contents) in &run.agent_files {
        std::fs::write(agent.join(name), contents).unwrap();
    }
    let driver = dir.path().join("drive.mjs");
    std::fs::write(&driver, rpc_client_driver(run.client, run.body)).unwrap();
    let mut command = tokio::process::Command::new(
        run.node_bin
            .map_or_else(|| "node".into(), |bin| bin.join("node")),
    );
    if let Some(bin) = run.node_bin {
        let path = std::env::var("PATH").unwrap_or_default();
        command.env("PATH", format!("{}:{path}", bin.display()));
    }
    let output = command
        .arg(&driver)
        .env("PITH_SHIM", &shim)
        .env("PITH_WORK", &work)
        .env("PITH_AGENT_DIR", &agent)
        .env("PITH_CACHE_DIR", super::shared_cache())
        .env("PITH_FAUX_SCRIPT", run.script.to_string())
        .envs(run.env)
        .output()
        .await
        .expect("node runs (the CI script installs Node.js)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "driver failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap()
}
