//! The whole engine under a long answer: pith (release) spawned over pipes, the `faux` provider
//! streaming 5,000 text deltas, every pi-compatible `message_update` frame read from stdout.
//! Measures prompt → `agent_end`, with full frames and with lean (`messageUpdates: "delta"`)
//! frames, and reports bytes written and peak memory (VmHWM).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

struct Run {
    elapsed: Duration,
    bytes: usize,
    peak_kb: u64,
}

fn run(lean: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"{"turns":[{"repeat":{"text":"word ","count":5000}}]}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "--mode",
            "rpc",
            "--provider",
            "faux",
            "--model",
            "faux-model",
            "--no-session",
        ])
        .env("PITH_AGENT_DIR", dir.path())
        .env(
            "PITH_CACHE_DIR",
            std::env::temp_dir().join("pith-bench-cache"),
        )
        .env("PITH_FAUX_SCRIPT", script)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pith");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let mut line = String::new();
    if lean {
        stdin
            .write_all(
                b"{\"id\":\"f\",\"type\":\"set_event_filter\",\"messageUpdates\":\"delta\"}\n",
            )
            .unwrap();
        stdout.read_line(&mut line).unwrap();
    }
    let started = Instant::now();
    stdin
        .write_all(b"{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"go\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut bytes = 0;
    loop {
        line.clear();
        let n = stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "pith closed stdout before agent_end");
        bytes += n;
        if line.starts_with("{\"type\":\"agent_end\"") {
            break;
        }
    }
    let elapsed = started.elapsed();
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let peak_kb = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    drop(stdin);
    let _ = child.wait();
    Run {
        elapsed,
        bytes,
        peak_kb,
    }
}

fn benches(c: &mut Criterion) {
    run(false); // warms the compile cache
    for lean in [false, true] {
        let sample = run(lean);
        eprintln!(
            "5,000 deltas ({}): {:?}, {:.1} MB written, peak RSS {:.1} MB",
            if lean { "lean" } else { "full frames" },
            sample.elapsed,
            sample.bytes as f64 / 1e6,
            sample.peak_kb as f64 / 1024.0
        );
    }
    let mut group = c.benchmark_group("5,000-delta answer, prompt to agent_end");
    group.sample_size(10);
    group.bench_function("full pi-compatible frames", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(false).elapsed).sum())
    });
    group.bench_function("lean delta frames", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(true).elapsed).sum())
    });
    group.finish();
}

criterion_group!(streaming, benches);
criterion_main!(streaming);
