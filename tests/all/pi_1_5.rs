//! What pi 1.5.2 added, beyond the recorded transcripts: the system message's tool set (tool
//! globs, tools added and removed between runs), thinking level `max`, model switches that
//! leave the thinking level as it is (pi 0.73's profile still raises it), and retried summary
//! requests.

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake};

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .map(|list| list.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default()
}

fn with_args(args: &[&str], script: Value) -> Options {
    let mut options = Options::faux(script);
    options.args.extend(args.iter().map(|a| a.to_string()));
    options
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_globs_shape_the_system_message() {
    let options = with_args(
        &["--tools", "*", "--exclude-tools", "ed*,w*"],
        json!([{"text": "ok"}]),
    );
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.until_agent_end().await;
    let system = &end["messages"][0];
    assert_eq!(system["role"], "system");
    assert_eq!(
        names(&system["toolsAdded"]),
        ["read", "bash", "powershell", "grep", "find", "ls", "todo"]
    );
    let keys: Vec<&String> = system["sections"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["preamble", "tools", "rules", "docs", "cwd"]);
    assert!(
        system["sections"]["tools"]
            .as_str()
            .unwrap()
            .contains("- grep: ")
    );
    assert_eq!(
        system["toolsAdded"][0]["constrainedSampling"],
        json!({"type": "json_schema", "strict": "prefer"})
    );
}

/// Prompts `id` and returns the run's messages.
async fn run(pith: &mut Pith, id: &str) -> Value {
    pith.call(id, json!({"type": "prompt", "message": id}))
        .await;
    pith.until_agent_end().await["messages"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_tool_set_is_recorded_by_the_next_run() {
    let options = with_args(
        &["--tools", "read"],
        json!([{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}]),
    );
    let mut pith = Pith::spawn(options).await;
    let first = run(&mut pith, "p1").await;
    assert_eq!(names(&first[0]["toolsAdded"]), ["read"]);
    // Nothing changed: no record.
    let second = run(&mut pith, "p2").await;
    assert_eq!(second[0]["role"], "user");
    let tool = json!({"name": "lookup", "description": "Looks a word up", "parameters": {"type": "object", "properties": {}}});
    pith.call("h", json!({"type": "set_host_tools", "tools": [tool]}))
        .await;
    let third = run(&mut pith, "p3").await;
    assert_eq!(third[0]["role"], "system");
    assert_eq!(names(&third[0]["toolsAdded"]), ["lookup"]);
    assert!(third[0].get("toolsRemoved").is_none());
    pith.call("h2", json!({"type": "set_host_tools", "tools": []}))
        .await;
    let fourth = run(&mut pith, "p4").await;
    assert_eq!(fourth[0]["toolsRemoved"], json!([{"name": "lookup"}]));
    assert!(fourth[0].get("toolsAdded").is_none());
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let systems = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .count();
    assert_eq!(systems, 3);
    // The model never gets them as messages.
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["messageCount"], 11);
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_max_and_switching_to_a_reasoning_model() {
    for (profile, raised) in [("1.5", "off"), ("0.73", "medium")] {
        let options = with_args(
            &[
                "--models",
                "faux-model,faux-reasoner",
                "--pi-protocol",
                profile,
            ],
            json!([]),
        );
        let mut pith = Pith::spawn(options).await;
        let cycled = pith.call("c", json!({"type": "cycle_model"})).await;
        assert_eq!(cycled["data"]["model"]["id"], "faux-reasoner");
        assert_eq!(cycled["data"]["thinkingLevel"], raised, "under {profile}");
        let set = pith
            .call("t", json!({"type": "set_thinking_level", "level": "max"}))
            .await;
        assert_eq!(set["success"], true, "{set}");
        // The highest this model has.
        let state = pith.call("s", json!({"type": "get_state"})).await;
        assert_eq!(state["data"]["thinkingLevel"], "high");
    }
}

/// A compaction's summary request that fails transiently is retried, with pi 1.5's
/// `summarization_retry_*` events, and the compaction succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_summary_request_is_retried() {
    let overloaded =
        json!({"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}});
    let server = FakeLlm::start(json!([
        {"text": "First answer."},
        {"text": "Second answer."},
        overloaded,
        {"text": "## Summary\nTwo answers."}
    ]))
    .await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"baseDelayMs": 20}, "compaction": {"keepRecentTokens": 10}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    for id in ["question one", "question two"] {
        run(&mut pith, id).await;
    }
    let compacted = pith.call("c", json!({"type": "compact"})).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    assert!(
        compacted["data"]["summary"]
            .as_str()
            .unwrap()
            .contains("Two answers."),
        "{compacted}"
    );
    let retries: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| {
            f["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("summarization_retry"))
        })
        .collect();
    assert_eq!(retries.len(), 3, "{retries:?}");
    assert_eq!(retries[0]["type"], "summarization_retry_scheduled");
    assert_eq!(retries[0]["attempt"], 1);
    assert_eq!(retries[0]["maxAttempts"], 3);
    assert_eq!(retries[0]["delayMs"], 20);
    assert!(
        retries[0]["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("529 ")
    );
    assert_eq!(
        *retries[1],
        json!({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"})
    );
    assert_eq!(*retries[2], json!({"type": "summarization_retry_finished"}));
}

/// Parallel calls of one answer: each `tool_execution_end` as its call finishes (a quick `read`
/// is not held back by slow commands beside it), then the results in call order, as pi 1.5.2.
#[tokio::test(flavor = "multi_thread")]
async fn each_parallel_call_ends_as_it_finishes() {
    let script = json!([
        {"tool_calls": [
            {"id": "slow1", "name": "bash", "arguments": {"command": "sleep 0.6; echo one"}},
            {"id": "slow2", "name": "bash", "arguments": {"command": "sleep 0.3; echo two"}},
            {"id": "quick", "name": "read", "arguments": {"path": "note.txt"}}
        ]},
        {"text": "done"}
    ]);
    let mut options = Options::faux(script);
    options
        .work_files
        .push(("note.txt".into(), "a note\n".into()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    let ends: Vec<&str> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .filter_map(|f| f["toolCallId"].as_str())
        .collect();
    assert_eq!(ends, ["quick", "slow2", "slow1"]);
    let results: Vec<&str> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "toolResult")
        .filter_map(|f| f["message"]["toolCallId"].as_str())
        .collect();
    assert_eq!(results, ["slow1", "slow2", "quick"]);
    // Every end before the first result.
    let last_end = pith
        .frames
        .iter()
        .rposition(|f| f["type"] == "tool_execution_end")
        .unwrap();
    let first_result = pith
        .frames
        .iter()
        .position(|f| f["type"] == "message_end" && f["message"]["role"] == "toolResult")
        .unwrap();
    assert!(last_end < first_result);
}

/// The two requests of a run that reads a PNG (a prompt with an image, then `read` of one) on
/// a model whose input is `input`, with the agent's `settings`.
async fn requests_with_images(input: Value, settings: Value) -> Vec<Value> {
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "dot.png"}}]},
        {"text": "seen"}
    ]))
    .await;
    let models = json!({"providers": {"local": {"baseUrl": format!("{}/v1", server.url), "api": "openai-completions", "apiKey": "none",
        "models": [{"id": "the-model", "input": input, "contextWindow": 100000, "maxTokens": 1000}]}}});
    let options = Options {
        args: ["--model", "local/the-model", "--no-session"]
            .map(String::from)
            .to_vec(),
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            ("settings.json".into(), settings.to_string()),
        ],
        ..Options::default()
    };
    // A 1×1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let mut pith = Pith::spawn(options).await;
    use base64::Engine as _;
    std::fs::write(
        pith.work_dir().join("dot.png"),
        base64::engine::general_purpose::STANDARD
            .decode(png)
            .unwrap(),
    )
    .unwrap();
    pith.call(
        "p",
        json!({"type": "prompt", "message": "look", "images": [{"type": "image", "data": png, "mimeType": "image/png"}]}),
    )
    .await;
    pith.until_agent_end().await;
    server.requests()
}

/// A model without image input gets pi's note in place of each run of images, in a prompt and
/// in a tool result, as pi 1.5.2 sends it.
#[tokio::test(flavor = "multi_thread")]
async fn a_text_only_model_gets_pi_s_note_for_images() {
    let requests = requests_with_images(json!(["text"]), json!({})).await;
    let first = &requests[0]["body"]["messages"];
    assert_eq!(
        first[1]["content"],
        json!([{"type": "text", "text": "look"}, {"type": "text", "text": "(image omitted: model does not support images)"}])
    );
    let second = requests[1]["body"]["messages"].to_string();
    assert!(
        second.contains("(tool image omitted: model does not support images)"),
        "{second}"
    );
    assert!(!second.contains("image_url"), "{second}");
}

/// pi's `images.blockImages`: no image reaches even a model that takes them; each becomes
/// pi's "Image reading is disabled.".
#[tokio::test(flavor = "multi_thread")]
async fn blocked_images_never_reach_the_model() {
    let requests = requests_with_images(
        json!(["text", "image"]),
        json!({"images": {"blockImages": true}}),
    )
    .await;
    assert_eq!(
        requests[0]["body"]["messages"][1]["content"],
        json!([{"type": "text", "text": "look"}, {"type": "text", "text": "Image reading is disabled."}])
    );
    let second = requests[1]["body"]["messages"].to_string();
    assert!(second.contains("Image reading is disabled."), "{second}");
    assert!(!second.contains("image_url"), "{second}");
}

/// An answer of another model is replayed without its thinking (pi 1.5.2: it would read as
/// part of the visible answer).
#[tokio::test(flavor = "multi_thread")]
async fn thinking_of_another_model_is_not_replayed() {
    let server = FakeLlm::start(json!([
        {"thinking": "pondering", "text": "answer"},
        {"text": "second"}
    ]))
    .await;
    let models = json!({"providers": {
        "a": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "k",
            "models": [{"id": "ma", "reasoning": true, "contextWindow": 100000, "maxTokens": 1000}]},
        "b": {"baseUrl": format!("{}/v1", server.url), "api": "openai-completions", "apiKey": "k",
            "models": [{"id": "mb", "contextWindow": 100000, "maxTokens": 1000}]}}});
    let options = Options {
        args: ["--model", "a/ma", "--no-session"]
            .map(String::from)
            .to_vec(),
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "first"}))
        .await;
    pith.until_agent_end().await;
    pith.call(
        "m",
        json!({"type": "set_model", "provider": "b", "modelId": "mb"}),
    )
    .await;
    pith.call("p2", json!({"type": "prompt", "message": "next"}))
        .await;
    pith.until_agent_end().await;
    let replay = server.requests()[1]["body"]["messages"].to_string();
    assert!(replay.contains("answer"), "{replay}");
    assert!(!replay.contains("pondering"), "{replay}");
}
