//! Loading a session file of 10,000 entries and building its context.

use criterion::{Criterion, criterion_group, criterion_main};
use pith::agent::conversation::message::AgentMessage;
use pith::agent::session::file::SessionFile;
use serde_json::json;

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut file = SessionFile::create(Some(path.clone()), "bench", dir.path(), None);
    for i in 0..5000 {
        file.append_message(&AgentMessage::user(
            &format!("question {i} with some words in it"),
            vec![],
        ));
        let answer: AgentMessage = serde_json::from_value(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {i}: a paragraph of reasonable length that a model might write in reply to the question")}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 1000 + i, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050 + i, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 0}))
        .unwrap();
        file.append_message(&answer);
    }
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!("session file: 10,000 entries, {:.1} MB", size as f64 / 1e6);
    let mut group = c.benchmark_group("sessions");
    group.sample_size(20);
    group.bench_function("open a 10,000-entry session and build its context", |b| {
        b.iter(|| {
            let (file, _) = SessionFile::open(&path).unwrap();
            file.context().messages.len()
        })
    });
    group.finish();
}

criterion_group!(sessions, benches);
criterion_main!(sessions);
