//! The WASM provider path: pith (release) with the anthropic-messages component against the
//! fake Anthropic server streaming 5,000 text deltas. Reports the latency from the server's
//! first byte to the first `message_update` on pith's stdout, and the per-delta cost of the
//! whole path (SSE parsing in the component, host http, the agent loop, lean frames out).

#[path = "../../tests/all/support/fake_llm.rs"]
mod fake_llm;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use fake_llm::{FakeLlm, clock_micros};
use serde_json::json;

const DELTAS: usize = 5000;

struct Sample {
    first_byte_to_update: Duration,
    per_delta: Duration,
    total: Duration,
}

fn run(runtime: &tokio::runtime::Runtime) -> Sample {
    let text = "word ".repeat(DELTAS);
    let server = runtime.block_on(FakeLlm::start(json!([{"text": text, "chunks": DELTAS}])));
    let dir = tempfile::tempdir().unwrap();
    let models = json!({"providers": {"fake": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "k", "models": [{"id": "fake-model", "maxTokens": 8192}]}}});
    std::fs::write(dir.path().join("models.json"), models.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "--mode",
            "rpc",
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "--no-session",
            "--no-tools",
        ])
        .env("PITH_AGENT_DIR", dir.path())
        .env(
            "PITH_CACHE_DIR",
            std::env::temp_dir().join("pith-bench-cache"),
        )
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pith");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdin
        .write_all(b"{\"id\":\"f\",\"type\":\"set_event_filter\",\"messageUpdates\":\"delta\"}\n")
        .unwrap();
    stdout.read_line(&mut line).unwrap();
    let prompt_at = clock_micros();
    stdin
        .write_all(b"{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"go\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut first_update = None;
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "pith closed stdout"
        );
        if first_update.is_none() && line.contains("\"text_delta\"") {
            first_update = Some(clock_micros());
        }
        if line.starts_with("{\"type\":\"agent_end\"") {
            break;
        }
    }
    let end = clock_micros();
    drop(stdin);
    let _ = child.wait();
    let first_byte = server.requests()[0]["firstByteMicros"].as_u64().unwrap();
    let first_update = first_update.unwrap();
    Sample {
        first_byte_to_update: Duration::from_micros(first_update.saturating_sub(first_byte)),
        per_delta: Duration::from_micros((end - first_update) / DELTAS as u64),
        total: Duration::from_micros(end - prompt_at),
    }
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    run(&runtime);
    let samples: Vec<Sample> = (0..5).map(|_| run(&runtime)).collect();
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    eprintln!(
        "provider path (anthropic component, {DELTAS} deltas): first byte → first message_update {:?}, per delta {:?}, prompt → agent_end {:?}",
        median(samples.iter().map(|s| s.first_byte_to_update).collect()),
        median(samples.iter().map(|s| s.per_delta).collect()),
        median(samples.iter().map(|s| s.total).collect()),
    );
    let mut group = c.benchmark_group("provider path");
    group.sample_size(10);
    group.bench_function(
        "5,000 deltas through the anthropic component, prompt to agent_end",
        |b| b.iter_custom(|iters| (0..iters).map(|_| run(&runtime).total).sum()),
    );
    group.finish();
}

criterion_group!(provider_path, benches);
criterion_main!(provider_path);
