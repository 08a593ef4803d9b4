//! Limits as pi handles them, over the real binary and the real providers against the fake
//! server: the tool calls of an answer cut off at the output token limit never run (each is
//! answered with pi's error result and the model is asked again), on anthropic-messages
//! (`stop_reason: "max_tokens"`) and openai-completions (`finish_reason: "length"`), in both
//! protocol profiles.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake, openai_fake};
use pith::agent::run::tool_calls::truncated_call_text;
use serde_json::{Value, json};

/// An answer cut off while it wrote a `write` call over `notes.txt` and a `bash` call, then
/// an answer in text.
fn cut_answer_script(stop_reason: &str) -> Value {
    json!([
        {"text": "Writing the file.", "tool_calls": [
            {"id": "call_write", "name": "write", "arguments": {"path": "notes.txt", "content": "cut sho"}},
            {"id": "call_bash", "name": "bash", "arguments": {"command": "echo ran > ran.txt"}}
        ], "stop_reason": stop_reason, "usage": {"input": 1500, "output": 4096}},
        {"text": "I will write it again in smaller parts."}
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_cut_at_the_output_limit_leave_the_files_untouched() {
    for (api, stop_reason) in [
        ("anthropic-messages", "max_tokens"),
        ("openai-completions", "length"),
    ] {
        for profile in ["1.5", "0.73"] {
            let server = FakeLlm::start(cut_answer_script(stop_reason)).await;
            let mut options = if api == "anthropic-messages" {
                anthropic_fake(&server.url, "fake-model")
            } else {
                openai_fake(&server.url, "fake-gpt")
            };
            options
                .args
                .extend(["--pi-protocol".into(), profile.into()]);
            options.work_files = vec![("notes.txt".into(), "original\n".into())];
            let mut pith = Pith::spawn(options).await;
            pith.call("p", json!({"type": "prompt", "message": "Write notes.txt"}))
                .await;
            let end = pith.until_agent_end().await;
            let case = format!("{api}, profile {profile}");

            let work = pith.work_dir();
            assert_eq!(
                std::fs::read_to_string(work.join("notes.txt")).unwrap(),
                "original\n",
                "{case}"
            );
            assert!(!work.join("ran.txt").exists(), "{case}: bash ran");

            // Each call: a start, then an error end with pi's text, no update between.
            let calls: Vec<&Value> = pith
                .frames
                .iter()
                .filter(|f| {
                    f["type"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("tool_execution"))
                })
                .collect();
            let kinds: Vec<&str> = calls.iter().map(|f| f["type"].as_str().unwrap()).collect();
            assert_eq!(
                kinds,
                [
                    "tool_execution_start",
                    "tool_execution_end",
                    "tool_execution_start",
                    "tool_execution_end"
                ],
                "{case}"
            );
            for (end_frame, name) in [(calls[1], "write"), (calls[3], "bash")] {
                assert_eq!(end_frame["isError"], true, "{case}");
                assert_eq!(
                    end_frame["result"]["content"][0]["text"],
                    truncated_call_text(name),
                    "{case}"
                );
                assert!(end_frame.get("durationMs").is_none(), "{case}");
            }

            // The results reach the model, which answers again; the run ends on that answer.
            let results = support::rpc::tool_results(&end);
            assert_eq!(results.len(), 2, "{case}");
            assert!(results.iter().all(|r| r["isError"] == true), "{case}");
            let last = end["messages"].as_array().and_then(|m| m.last()).unwrap();
            assert_eq!(
                last["content"][0]["text"], "I will write it again in smaller parts.",
                "{case}"
            );
            let requests = server.requests();
            assert_eq!(requests.len(), 2, "{case}");
            let second = requests[1]["body"].to_string();
            assert!(
                second.contains("was not executed: the response hit the output token limit"),
                "{case}: {second}"
            );
        }
    }
}

/// Every request fits the model's window as pi's `clampMaxTokensToContext` computes it: on a
/// 4,096-token window with `maxTokens` 8192 pi 1.5.2 asks for 1 output token (its capture
/// `r2_small_window_no_compaction`); a large window leaves the provider's own limit.
#[tokio::test(flavor = "multi_thread")]
async fn requests_fit_the_window() {
    for (model, expected) in [("fake-small", Some(1)), ("fake-model", Some(8192))] {
        let server = FakeLlm::start(json!([{"text": "Short answer."}])).await;
        let mut pith = Pith::spawn(anthropic_fake(&server.url, model)).await;
        pith.call("p", json!({"type": "prompt", "message": "hello"}))
            .await;
        pith.until_agent_end().await;
        let body = &server.requests()[0]["body"];
        assert_eq!(body["max_tokens"].as_u64(), expected, "{model}");
    }
}

/// llama.cpp's overflow error (through openai-completions) is a context overflow: the
/// session is compacted (reason overflow, `willRetry`) and the prompt answered.
#[tokio::test(flavor = "multi_thread")]
async fn a_llama_cpp_overflow_is_recovered() {
    let server = FakeLlm::start(json!({
        "turns": [
            {"text": "First answer.", "usage": {"input": 5000, "output": 100}},
            {"text": "Second answer.", "usage": {"input": 6000, "output": 100}},
            {"error": {"status": 400, "type": "invalid_request_error",
                       "message": "request (8137 tokens) exceeds the available context size (4096 tokens), try increasing it"}},
            {"text": "## Summary\nTwo questions."},
            {"text": "Recovered answer."}
        ]
    }))
    .await;
    let mut options = openai_fake(&server.url, "fake-gpt");
    options.agent_files.push((
        "settings.json".into(),
        json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    for (id, question) in [("p1", "one"), ("p2", "two"), ("p3", "three")] {
        pith.call(id, json!({"type": "prompt", "message": question}))
            .await;
        pith.wait_for(|f| f["type"] == "agent_settled").await;
    }
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "compaction_end")
        .cloned()
        .unwrap();
    assert_eq!(end["reason"], "overflow");
    assert_eq!(end["willRetry"], true);
    assert!(
        !pith
            .frames
            .iter()
            .any(|f| f["type"] == "auto_compaction_end")
    );
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let last = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["text"], "Recovered answer.");
}

/// Runs one call of `tool` through the model's tool call (anthropic-messages), in a workspace
/// holding `files`; returns the frames and the text of its result.
async fn through_the_model(
    tool: &str,
    arguments: Value,
    files: Vec<(String, String)>,
) -> (Vec<Value>, String) {
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "call_1", "name": tool, "arguments": arguments}]},
        {"text": "done"}
    ]))
    .await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.work_files = files;
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "run it"}))
        .await;
    let end = pith.until_agent_end().await;
    let results = support::rpc::tool_results(&end);
    let text = results[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    // The model got the result's end as the result says it.
    let sent: Value = server.requests()[1]["body"].clone();
    assert!(sent.to_string().contains(&json!(text).to_string()[1..60]));
    let tail = &text[text.len().saturating_sub(60)..];
    assert!(
        sent.to_string()
            .contains(&json!(tail).to_string()[1..json!(tail).to_string().len() - 1])
    );
    (pith.frames.clone(), text)
}

/// `bash` through the model.
async fn bash_through_the_model(command: &str) -> (Vec<Value>, String) {
    through_the_model("bash", json!({"command": command}), Vec::new()).await
}

/// A long file read through the model keeps read's own continuation hint.
#[tokio::test(flavor = "multi_thread")]
async fn reads_continuation_hint_reaches_the_model() {
    let file: String = (1..=5000).map(|n| format!("line {n}\n")).collect();
    let (_, text) = through_the_model(
        "read",
        json!({"path": "big.txt"}),
        vec![("big.txt".into(), file)],
    )
    .await;
    assert!(
        text.ends_with("line 2000\n\n[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]"),
        "{}",
        &text[text.len() - 200..]
    );
}

/// The end of a long failing command reaches the model: bash's own tail with pi's notice and
/// the exit line, not re-cut to its head by the generic bound.
#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_a_long_failing_command_reaches_the_model() {
    let (_, text) = bash_through_the_model("seq 1 3000; echo LAST_LINE_MARKER; exit 3").await;
    assert!(text.starts_with("1002\n1003\n"), "{}", &text[..40]);
    assert!(
        text.contains(
            "2999\n3000\nLAST_LINE_MARKER\n\n[Showing lines 1002-3001 of 3001. Full output:"
        ),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(
        text.ends_with("Command exited with code 3"),
        "{}",
        &text[text.len() - 100..]
    );
}

/// 200 MB of output: the last line still reaches the model, and the host gets a few MB of
/// `tool_execution_update` frames (one per 100 ms at most), not a copy of every chunk.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_output_keeps_its_end_and_a_few_updates() {
    let (frames, text) = bash_through_the_model(
        "head -c 200000000 /dev/zero | tr '\\0' 'a' | fold -w 100; echo END_MARKER",
    )
    .await;
    assert!(
        text.contains("END_MARKER\n\n[Showing lines"),
        "{}",
        &text[text.len() - 300..]
    );
    let updates: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_update")
        .collect();
    let bytes: usize = updates.iter().map(|f| f.to_string().len()).sum();
    eprintln!(
        "200 MB of output: {} updates, {} bytes",
        updates.len(),
        bytes
    );
    assert!(bytes < 20 << 20, "{} updates, {bytes} bytes", updates.len());
}
