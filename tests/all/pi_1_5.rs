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
        ["read", "bash", "grep", "find", "ls", "todo"]
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
    assert_eq!(fourth[0]["toolsRemoved"], json!(["lookup"]));
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
