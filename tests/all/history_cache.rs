//! The provider-history prefix cache over the real binary: on a long session reopened with
//! `--session`, each first-party provider sends the server the very bytes it sends without the
//! cache (`PITH_NO_HISTORY_CACHE`), request after request, while only the messages since the
//! cached prefix are handed to it. The first request is preceded by learning steps (a step of
//! 100 messages here), whose bodies teach the cache and are not sent.

use serde_json::{Value, json};

use crate::long_sessions::{long_session, reopening_with};
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::Pith;

/// The request bodies a run of three prompts (a plain answer, a `bash` call, a plain answer)
/// sent to a server of `api`, on a session of 150 turns (about 330 KB of conversation), and
/// pith's debug lines of the cache.
async fn bodies(api: &str, cache: bool) -> (Vec<String>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    long_session(&file, 150);
    let server = FakeLlm::start(json!([
        {"text": "answer one"},
        {"tool_calls": [{"id": "call_b", "name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "answer two"},
        {"text": "answer three"}
    ]))
    .await;
    let base = if api == "anthropic-messages" {
        server.url.clone()
    } else {
        format!("{}/v1", server.url)
    };
    let mut options = reopening_with(api, &base, &file, json!({"compaction": {"enabled": false}}));
    options
        .env
        .push(("PITH_LOG".into(), "pith::history_cache=debug".into()));
    if cache {
        options
            .env
            .push(("PITH_HISTORY_LEARNING_STEP".into(), "100".into()));
    } else {
        options
            .env
            .push(("PITH_NO_HISTORY_CACHE".into(), "1".into()));
    }
    options.capture_stderr = true;
    let mut pith = Pith::spawn(options).await;
    for (id, text) in [("p1", "first"), ("p2", "second"), ("p3", "third")] {
        let accepted = pith
            .call(id, json!({"type": "prompt", "message": text}))
            .await;
        assert_eq!(accepted["success"], true, "{accepted}");
        let end = pith.until_agent_end().await;
        let last = end["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["stopReason"], "stop", "{api}: {last}");
    }
    // The runs' folders differ; nothing else may.
    let work = pith.work_dir().display().to_string();
    let bodies = server
        .requests()
        .iter()
        .map(|r| r["body"].to_string().replace(&work, "<work>"))
        .collect();
    (bodies, pith.stderr_lines())
}

/// The cached prefix (in messages) of each plan, from the debug lines: the requests' plans, or
/// the learning steps'.
fn plans(lines: &[String], learning: bool) -> Vec<u64> {
    let mode = format!("learning={learning}");
    lines
        .iter()
        .map(|l| plain(l))
        .filter(|l| l.contains("prefix cache plan") && l.contains(&mode))
        .filter_map(|l| {
            let at = l.find("cached=")? + "cached=".len();
            l[at..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

/// `line` without its terminal colours.
fn plain(line: &str) -> String {
    let mut out = String::new();
    let mut escape = false;
    for c in line.chars() {
        match (escape, c) {
            (false, '\u{1b}') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn each_provider_sends_the_same_bytes_with_the_cache() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "mistral-conversations",
    ] {
        let (cached, cached_log) = bodies(api, true).await;
        let (whole, whole_log) = bodies(api, false).await;
        assert_eq!(cached.len(), 4, "{api}");
        for (n, (ours, theirs)) in cached.iter().zip(&whole).enumerate() {
            if ours != theirs {
                let at = ours
                    .bytes()
                    .zip(theirs.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(ours.len().min(theirs.len()));
                let window =
                    |s: &str| s[at.saturating_sub(300)..(at + 300).min(s.len())].to_string();
                panic!(
                    "{api}: request {} differs at byte {at} (lengths {} and {}):\nwith the cache: {}\nwithout: {}",
                    n + 1,
                    ours.len(),
                    theirs.len(),
                    window(ours),
                    window(theirs)
                );
            }
        }
        // Learning steps of about 100 messages each preceded the first request, which took the
        // prefix they learned; each later one took the longest prefix learned before it.
        let steps = plans(&cached_log, true);
        assert!(steps.len() >= 4, "{api}: {steps:?}");
        assert!(
            steps.windows(2).all(|w| w[1] >= w[0] + 100),
            "{api}: {steps:?}"
        );
        let used = plans(&cached_log, false);
        assert_eq!(used.len(), 4, "{api}: {cached_log:#?}");
        assert!(used[0] >= 400, "{api}: {used:?}");
        assert!(
            used[1] > 480 && used[2] > used[1] && used[3] >= used[2],
            "{api}: {used:?}"
        );
        assert!(plans(&whole_log, false).is_empty(), "{api}");
        let parsed: Value = serde_json::from_str(&cached[3]).unwrap();
        assert!(parsed.to_string().contains("third"), "{api}");
    }
}

/// The request bodies of `prompts` on `file` sent to `server` (anthropic-messages), and pith's
/// debug lines, with the cache or without.
async fn run_on(
    server: &FakeLlm,
    file: &std::path::Path,
    prompts: &[&str],
    cache: bool,
) -> (Vec<String>, Vec<String>) {
    let before = server.requests().len();
    let mut options = reopening_with(
        "anthropic-messages",
        &server.url,
        file,
        json!({"compaction": {"enabled": false}}),
    );
    options
        .env
        .push(("PITH_LOG".into(), "pith::history_cache=debug".into()));
    if !cache {
        options
            .env
            .push(("PITH_NO_HISTORY_CACHE".into(), "1".into()));
    }
    options.capture_stderr = true;
    let mut pith = Pith::spawn(options).await;
    for (n, text) in prompts.iter().enumerate() {
        let accepted = pith
            .call(&format!("p{n}"), json!({"type": "prompt", "message": text}))
            .await;
        assert_eq!(accepted["success"], true, "{accepted}");
        pith.until_agent_end().await;
    }
    let work = pith.work_dir().display().to_string();
    let bodies = server
        .requests()
        .iter()
        .skip(before)
        .map(|r| r["body"].to_string().replace(&work, "<work>"))
        .collect();
    (bodies, pith.stderr_lines())
}

/// A session reopened by a second process takes its prefix from the file the first one left
/// (no learning steps, the whole prefix from disk), and sends the bytes it sends without the
/// cache; a changed session file is not served from it.
#[tokio::test(flavor = "multi_thread")]
async fn a_reopened_session_takes_its_prefix_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    long_session(&file, 150);
    // One server throughout: its URL is part of what the prefix is the encoding for.
    let server = FakeLlm::start(json!([
        {"text": "re one"}, {"text": "re two"}, {"text": "re three"},
        {"text": "re three"}, {"text": "re four"}
    ]))
    .await;
    let (_, first) = run_on(&server, &file, &["one", "two"], true).await;
    assert!(!first.iter().any(|l| l.contains("prefix read from disk")));
    // The same file, as another process finds it, beside a copy without the cache.
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(&file, &copy).unwrap();
    let (cached, log) = run_on(&server, &file, &["three"], true).await;
    let (whole, _) = run_on(&server, &copy, &["three"], false).await;
    assert_eq!(cached, whole, "the bytes sent are those without the cache");
    let read = log
        .iter()
        .map(|l| plain(l))
        .find(|l| l.contains("prefix read from disk"))
        .unwrap_or_else(|| panic!("{log:#?}"));
    assert!(read.contains("messages="), "{read}");
    assert!(plans(&log, true).is_empty(), "no learning step: {log:#?}");
    let used = plans(&log, false);
    assert!(used.len() == 1 && used[0] > 600, "{used:?}");
    // Another program rewrites the file (an entry's line changes length): the prefix on disk
    // does not match it, and the request learns again.
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "turn 3: list the files",
        "turn 3: list the files, rewritten",
        1,
    );
    std::fs::write(&file, text).unwrap();
    let (_, log) = run_on(&server, &file, &["four"], true).await;
    assert!(
        !log.iter().any(|l| l.contains("prefix read from disk")),
        "{log:#?}"
    );
}

/// A prefix file cut short by another program while a session uses it: the next request sees
/// that the prefix is no longer there, says so, and learns the conversation again; the server
/// gets the whole conversation. Nothing is lost.
#[tokio::test(flavor = "multi_thread")]
async fn a_prefix_file_cut_short_under_a_session_is_learned_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    long_session(&file, 150);
    let server = FakeLlm::start(json!([{"text": "answer one"}, {"text": "answer two"}])).await;
    let cache = dir.path().join("cache");
    let mut options = reopening_with(
        "anthropic-messages",
        &server.url,
        &file,
        json!({"compaction": {"enabled": false}}),
    );
    options.env.extend([
        ("PITH_CACHE_DIR".into(), cache.display().to_string()),
        ("PITH_HISTORY_LEARNING_STEP".into(), "100".into()),
    ]);
    options.capture_stderr = true;
    let mut pith = Pith::spawn(options).await;
    let mut answer = async |id: &str, text: &str| {
        let accepted = pith
            .call(id, json!({"type": "prompt", "message": text}))
            .await;
        assert_eq!(accepted["success"], true, "{accepted}");
        let end = pith.until_agent_end().await;
        end["messages"].as_array().unwrap().last().unwrap().clone()
    };
    assert_eq!(answer("p1", "first").await["stopReason"], "stop");
    let prefix = std::fs::read_dir(cache.join("history"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|x| x == "prefix"))
        .expect("the prefix file");
    let len = std::fs::metadata(&prefix).unwrap().len();
    assert!(len > 100_000, "the learned prefix is on disk: {len} bytes");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&prefix)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    let last = answer("p2", "second").await;
    assert_eq!(last["stopReason"], "stop", "{last}");
    assert_eq!(last["content"][0]["text"], "answer two", "{last}");
    let stderr = pith.stderr_lines().join("\n");
    assert!(stderr.contains("no longer in its file"), "{stderr}");
    // The request carries the whole conversation, its first turn included.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "no request failed");
    let body = requests[1]["body"].to_string();
    assert!(body.contains("turn 0:") && body.contains("turn 149:") && body.contains("second"));
}
