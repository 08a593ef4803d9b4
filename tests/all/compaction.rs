//! Compaction over the real binary: pi's summary request on `compact`, automatic compaction
//! past the threshold and on a context overflow (the prompt retried), and the cut that keeps
//! recent turns whole.

use crate::support;

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// pi 0.73's compaction (its profile keeps it): the whole short conversation is summarized.
/// Under pi 1.5's the same session is "too small" (see the conformance tests).
#[tokio::test(flavor = "multi_thread")]
async fn compact_sends_pis_summary_request_and_survives_a_reload() {
    let server = support::fake_llm::FakeLlm::start(json!([
        {"text": "First answer.", "usage": {"input": 5000, "output": 100}},
        {"text": "Second answer.", "usage": {"input": 6000, "output": 100}},
        {"text": "## Summary\nTwo questions, two answers."},
        {"text": "after"}
    ]))
    .await;
    let mut options = support::rpc::anthropic_fake(&server.url, "fake-model");
    options.args = vec![
        "--provider".into(),
        "fake".into(),
        "--model".into(),
        "fake-model".into(),
        "--session-dir".into(),
        "sessions".into(),
        "--pi-protocol".into(),
        "0.73".into(),
    ];
    let mut pith = Pith::spawn(options).await;
    assert_eq!(
        pith.call("c0", json!({"type": "compact"})).await["error"],
        "Nothing to compact (session too small)"
    );
    for (id, q) in [("p1", "question one"), ("p2", "question two")] {
        pith.call(id, json!({"type": "prompt", "message": q})).await;
        pith.until_agent_end().await;
    }
    let compacted = pith
        .call(
            "c",
            json!({"type": "compact", "customInstructions": "Keep it short"}),
        )
        .await;
    let result = &compacted["data"];
    assert_eq!(result["summary"], "## Summary\nTwo questions, two answers.");
    assert_eq!(result["tokensBefore"], 6100);
    assert_eq!(
        result["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    let request = &server.requests()[2]["body"];
    assert_eq!(request["max_tokens"], 13107);
    assert!(request.get("tools").is_none());
    assert_eq!(
        request["system"][0]["text"],
        pith::agent::conversation::compaction::SYSTEM_PROMPT
    );
    let expected = format!(
        "<conversation>\n\n</conversation>\n\n{}\n\nAdditional focus: Keep it short",
        pith::agent::conversation::compaction::summary_prompt()
    );
    assert_eq!(request["messages"][0]["content"][0]["text"], expected);
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "compactionSummary",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(
        pith.call("c2", json!({"type": "compact"})).await["error"],
        "Already compacted"
    );
    let stats = pith.call("st", json!({"type": "get_session_stats"})).await;
    assert!(
        stats["data"]["sessionFile"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl")
    );
    // The next request carries the summary first, then the kept messages.
    pith.call("p3", json!({"type": "prompt", "message": "question three"}))
        .await;
    pith.until_agent_end().await;
    let after = &server.requests()[3]["body"]["messages"];
    assert!(after[0]["content"][0]["text"].as_str().unwrap().starts_with("The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Summary\nTwo questions, two answers."));
    assert_eq!(after[1]["content"][0]["text"], "question one");
    assert_eq!(after.as_array().unwrap().len(), 6);

    // After a reload the model sees the summary and what follows firstKeptEntryId.
    let file = pith.call("s", json!({"type": "get_state"})).await["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let path = pith.work_dir().join(&file);
    // pi 1.5.2's fields: the summary request's usage, fromHook.
    let entry: serde_json::Value = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "compaction")
        .unwrap();
    assert!(entry["usage"]["output"].is_number(), "{entry}");
    assert_eq!(entry["fromHook"], false);
    let (store, _) = pith::agent::session::file::SessionFile::open(&path).unwrap();
    let context = store.context();
    assert!(matches!(
        context.messages[0].1,
        pith::agent::conversation::message::AgentMessage::CompactionSummary(_)
    ));
    assert_eq!(context.messages.len(), 7);
    assert_eq!(
        context.messages[1].0,
        result["firstKeptEntryId"].as_str().unwrap()
    );
}

#[test]
fn the_cut_keeps_recent_turns_whole() {
    use pith::agent::conversation::compaction::{cut_point, serialize};
    use pith::agent::conversation::message::AgentMessage;
    let long = "x".repeat(40_000);
    let messages: Vec<AgentMessage> = vec![
        AgentMessage::user(&long, vec![]),
        AgentMessage::user("recent question", vec![]),
        serde_json::from_value(json!({"role": "assistant", "content": [{"type": "text", "text": "recent answer"}], "api": "a", "provider": "p", "model": "m",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 0})).unwrap(),
    ];
    assert_eq!(
        cut_point(&messages, 20_000),
        0,
        "the big first message alone passes the budget: keep from it"
    );
    assert_eq!(
        cut_point(&messages, 5),
        1,
        "a small budget keeps the last turn, from its user message"
    );
    assert_eq!(
        serialize(&messages[1..]),
        "[User]: recent question\n\n[Assistant]: recent answer"
    );
}

fn small_window(url: &str) -> Options {
    let models = json!({"providers": {"fake": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "small", "contextWindow": 20000, "maxTokens": 4096}]}}});
    Options {
        args: vec!["--model".into(), "fake/small".into(), "--no-session".into()],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    }
}

/// Under pi 0.73's profile a short session past the threshold is summarized whole; under pi
/// 1.5's it is "too small" (its text fits the kept tail; the prompt and tools fill the window):
/// as in pi 1.5, no compaction starts, no frame says so, and the run settles.
#[tokio::test(flavor = "multi_thread")]
async fn automatic_compaction_past_the_threshold() {
    let script = json!([{"text": "big answer", "usage": {"input": 5000, "output": 10}}, {"text": "## Summary\nsmall"}]);
    let server = support::fake_llm::FakeLlm::start(script.clone()).await;
    let mut pith = Pith::spawn(small_window(&server.url)).await;
    pith.call("p", json!({"type": "prompt", "message": "q"}))
        .await;
    pith.wait_for(|f| f["type"] == "agent_settled").await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["isCompacting"], false);
    assert!(
        !pith
            .frames
            .iter()
            .any(|f| f["type"].as_str().unwrap_or("").contains("compaction")),
        "{:?}",
        pith.frames
    );

    let server = support::fake_llm::FakeLlm::start(script).await;
    let mut options = small_window(&server.url);
    options.args.extend(["--pi-protocol".into(), "0.73".into()]);
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "q"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "auto_compaction_end").await;
    assert_eq!(end["willRetry"], false);
    assert_eq!(end["aborted"], false);
    assert_eq!(end["result"]["summary"], "## Summary\nsmall");
    let kinds: Vec<&str> = pith
        .frames
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .filter(|k| k.contains("compaction"))
        .collect();
    assert_eq!(
        kinds,
        [
            "auto_compaction_start",
            "compaction_start",
            "compaction_end",
            "auto_compaction_end"
        ]
    );
    let start = pith
        .frames
        .iter()
        .find(|f| f["type"] == "auto_compaction_start")
        .unwrap();
    assert_eq!(start["reason"], "threshold");
    // Prompts wait for the compaction until the run settles (pi 0.73's frames do not say
    // when: the state does).
    let mut state = Value::Null;
    for attempt in 0..100 {
        state = pith
            .call(&format!("s{attempt}"), json!({"type": "get_state"}))
            .await;
        if state["data"]["isCompacting"] == false {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(state["data"]["isStreaming"], false);
    assert_eq!(state["data"]["isCompacting"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_is_compacted_and_the_prompt_retried() {
    let server = support::fake_llm::FakeLlm::start(json!([
        {"error": {"status": 400, "type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"}},
        {"text": "## Summary\nearlier"},
        {"text": "answered after compaction"}
    ]))
    .await;
    let mut pith = Pith::spawn(small_window(&server.url)).await;
    pith.call("p", json!({"type": "prompt", "message": "huge"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "compaction_end").await;
    assert_eq!(end["willRetry"], true);
    let start = pith
        .frames
        .iter()
        .find(|f| f["type"] == "compaction_start")
        .unwrap();
    assert_eq!(start["reason"], "overflow");
    let retried = pith.until_agent_end().await;
    let last = retried["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["text"], "answered after compaction");
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let roles: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // pi 1.5: the failed answer is taken out of the context by a `context_edit` entry, which
    // the host sees (`entry_appended`) after the `agent_end` that will be retried.
    assert_eq!(roles, ["system", "compactionSummary", "user", "assistant"]);
    let first_end = pith
        .frames
        .iter()
        .position(|f| f["type"] == "agent_end")
        .unwrap();
    // pi 1.5.2 ends the failed run with `willRetry` false and says the retry in
    // `compaction_end` (its capture `r_overflow_recovery`).
    assert_eq!(pith.frames[first_end]["willRetry"], false);
    let failed = pith.frames[first_end]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(failed["stopReason"], "error");
    let edit = &pith.frames[first_end + 1];
    assert_eq!(edit["type"], "entry_appended", "{edit}");
    assert_eq!(edit["entry"]["type"], "context_edit");
    assert_eq!(edit["entry"]["replacement"], Value::Null);
    assert_eq!(edit["entry"]["targetId"], edit["entry"]["parentId"]);
    let retry_request = &server.requests()[2]["body"]["messages"];
    assert!(
        !retry_request.to_string().contains("prompt is too long"),
        "the model never sees the failure"
    );
}
