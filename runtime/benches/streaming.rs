//! The whole engine under a long answer: pith (release) spawned over pipes, the `faux` provider
//! streaming 5,000 text deltas, every `message_update` frame read from stdout. Measures
//! prompt → `agent_end` under each protocol profile (pi 1.5's frames, the default; pi 0.73's
//! full snapshots) and with pith's lean `messageUpdates: "delta"` frames, and reports bytes
//! written and peak memory (VmHWM). `bench/vs_pi.py` puts the same answer beside
//! pi 1.5.2.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

struct Run {
    elapsed: Duration,
    bytes: usize,
    peak_kb: u64,
}

/// Which frames pith writes.
#[derive(Clone, Copy)]
enum Frames {
    /// pi 1.5's (the default profile).
    Pi15,
    /// pi 0.73's full snapshots (`--pi-protocol 0.73`).
    Pi073,
    /// pith's lean delta frames (`set_event_filter`).
    Delta,
}

impl Frames {
    fn name(self) -> &'static str {
        match self {
            Frames::Pi15 => "pi 1.5 frames (default)",
            Frames::Pi073 => "pi 0.73 full frames",
            Frames::Delta => "lean delta frames",
        }
    }
}

fn run(frames: Frames) -> Run {
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
            "--pi-protocol",
            if matches!(frames, Frames::Pi073) {
                "0.73"
            } else {
                "1.5"
            },
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
    if matches!(frames, Frames::Delta) {
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
    run(Frames::Pi15); // warms the compile cache
    let all = [Frames::Pi15, Frames::Pi073, Frames::Delta];
    for frames in all {
        let sample = run(frames);
        eprintln!(
            "5,000 deltas ({}): {:?}, {:.1} MB written, peak RSS {:.1} MB",
            frames.name(),
            sample.elapsed,
            sample.bytes as f64 / 1e6,
            sample.peak_kb as f64 / 1024.0
        );
    }
    let mut group = c.benchmark_group("5,000-delta answer, prompt to agent_end");
    group.sample_size(10);
    for frames in all {
        group.bench_function(frames.name(), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| run(frames).elapsed).sum())
        });
    }
    group.finish();
}

criterion_group!(streaming, benches);
criterion_main!(streaming);
