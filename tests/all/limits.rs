//! Limits as pi handles them, over the real binary and the real providers against the fake
//! server: the tool calls of an answer cut off at the output token limit never run (each is
//! answered with pi's error result and the model is asked again), on anthropic-messages
//! (`stop_reason: "max_tokens"`) and openai-completions (`finish_reason: "length"`), in both
//! protocol profiles.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake, openai_fake};
use pith::agent::tool_calls::truncated_call_text;
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
