//! Long sessions over the real binary: a pi-format session of thousands of turns reopened with
//! `--session` and prompted against an Anthropic server on loopback. The file pith reads is
//! the file it keeps writing (the old lines byte for byte), its entries come back as the file
//! holds them, and the provider is not held to a memory limit smaller than the conversation it
//! is handed.

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

/// A session file of `turns` turns as pi writes them: a prompt, a `bash` call, its result of
/// about 2 KB and an answer (4 entries a turn).
pub(crate) fn long_session(path: &std::path::Path, turns: usize) {
    let mut text = String::new();
    let stamp = |n: usize| {
        format!(
            "2026-01-01T00:{:02}:{:02}.{:03}Z",
            n / 60_000 % 60,
            n / 1000 % 60,
            n % 1000
        )
    };
    text.push_str(
        &json!({"type": "session", "version": 3, "id": "long-1", "timestamp": stamp(0), "cwd": "/w"})
            .to_string(),
    );
    text.push('\n');
    let result = ("x".repeat(79) + "\n").repeat(26);
    let usage = json!({"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let mut parent = Value::Null;
    let mut n = 0;
    let mut push = |text: &mut String, parent: &mut Value, message: Value| {
        n += 1;
        let id = format!("e{n:07}");
        let line = json!({"type": "message", "id": id, "parentId": parent.clone(), "timestamp": stamp(n), "message": message});
        text.push_str(&line.to_string());
        text.push('\n');
        *parent = json!(id);
    };
    for turn in 0..turns {
        push(
            &mut text,
            &mut parent,
            json!({"role": "user", "content": [{"type": "text", "text": format!("turn {turn}: list the files")}], "timestamp": 1}),
        );
        push(
            &mut text,
            &mut parent,
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("toolu_{turn}"), "name": "bash", "arguments": {"command": "ls"}}],
                "api": "anthropic-messages", "provider": "fake", "model": "fake-model", "usage": usage, "stopReason": "toolUse", "timestamp": 2}),
        );
        push(
            &mut text,
            &mut parent,
            json!({"role": "toolResult", "toolCallId": format!("toolu_{turn}"), "toolName": "bash",
                "content": [{"type": "text", "text": result}], "isError": false, "timestamp": 3}),
        );
        push(
            &mut text,
            &mut parent,
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("done with turn {turn}")}],
                "api": "anthropic-messages", "provider": "fake", "model": "fake-model", "usage": usage, "stopReason": "stop", "timestamp": 4}),
        );
    }
    std::fs::write(path, text).unwrap();
}

/// pith against `url` with a model whose window holds any conversation here, reopening `file`.
fn reopening(url: &str, file: &std::path::Path, settings: Value) -> Options {
    reopening_with("anthropic-messages", url, file, settings)
}

/// The same with a model of the wire format `api`.
pub(crate) fn reopening_with(
    api: &str,
    url: &str,
    file: &std::path::Path,
    settings: Value,
) -> Options {
    let models = json!({"providers": {"fake": {
        "baseUrl": url, "api": api, "apiKey": "fake-key",
        "models": [{"id": "fake-model", "name": "Fake Model", "contextWindow": 100_000_000, "maxTokens": 8192}]}}});
    Options {
        args: vec![
            "--provider".into(),
            "fake".into(),
            "--model".into(),
            "fake-model".into(),
            "--session".into(),
            file.display().to_string(),
        ],
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            ("settings.json".into(), settings.to_string()),
        ],
        ..Options::default()
    }
}

/// A 3,000-turn session (about 8 MB of conversation) is answered by a provider held to 4 MiB:
/// the conversation it is handed is the host's data, allowed on top of its limit. The server
/// gets the whole conversation.
#[tokio::test(flavor = "multi_thread")]
async fn a_provider_held_to_a_small_limit_answers_a_long_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    long_session(&file, 3_000);
    let server = FakeLlm::start(json!([{"text": "answered"}])).await;
    let settings = json!({"compaction": {"enabled": false},
        "plugins": {"anthropic": {"limits": {"memoryMb": 4}}}});
    let mut pith = Pith::spawn(reopening(&server.url, &file, settings)).await;
    let accepted = pith
        .call("p", json!({"type": "prompt", "message": "one more"}))
        .await;
    assert_eq!(accepted["success"], true, "{accepted}");
    let end = pith.until_agent_end().await;
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["stopReason"], "stop", "{last}");
    assert_eq!(last["content"][0]["text"], "answered", "{last}");
    let request = &server.requests()[0]["body"];
    let messages = request["messages"].as_array().unwrap();
    // Each turn is a prompt, an answer with the call, the result (a user message) and an
    // answer; the new prompt follows.
    assert_eq!(messages.len(), 3_000 * 4 + 1);
    assert_eq!(
        messages.last().unwrap()["content"][0]["text"],
        "one more",
        "the new prompt is last"
    );
}

/// The file pith reopens is the file it goes on writing: every old line stays as it was, byte
/// for byte, and the new entries follow; `get_entries` gives every entry as the file holds it,
/// and `get_messages` (written from the lines pith left in the file) every message.
#[tokio::test(flavor = "multi_thread")]
async fn a_reopened_long_session_keeps_its_lines_and_gives_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    long_session(&file, 500);
    let before = std::fs::read_to_string(&file).unwrap();
    let server = FakeLlm::start(json!([{"text": "answered"}])).await;
    let mut pith = Pith::spawn(reopening(
        &server.url,
        &file,
        json!({"compaction": {"enabled": false}}),
    ))
    .await;
    pith.call("p", json!({"type": "prompt", "message": "one more"}))
        .await;
    pith.until_agent_end().await;
    let entries = pith.call("e", json!({"type": "get_entries"})).await;
    let entries = entries["data"]["entries"].as_array().unwrap().clone();
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(
        after.starts_with(&before),
        "the old lines are kept as they were"
    );
    let lines: Vec<Value> = after
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(entries, lines, "get_entries gives the file's entries");
    let appended = &lines[500 * 4..];
    assert_eq!(appended[0]["parentId"], lines[500 * 4 - 1]["id"]);
    assert!(
        appended
            .iter()
            .any(|entry| entry["message"]["content"][0]["text"] == "one more"),
        "{appended:?}"
    );
    assert_eq!(
        appended.last().unwrap()["message"]["content"][0]["text"],
        "answered"
    );
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let from_file: Vec<Value> = lines.iter().map(|entry| entry["message"].clone()).collect();
    assert_eq!(messages["data"]["messages"].as_array().unwrap(), &from_file);
}
