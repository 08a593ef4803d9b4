//! What hosts written for pi 0.73 and later rely on beyond the seeds: `clone`,
//! `get_available_thinking_levels`, `get_entries`, `get_tree`, `agent_settled`,
//! `pendingMessageCount`, and pi's own `RpcClient` driving pith.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake};
use serde_json::{Value, json};

fn with_sessions(mut options: Options) -> Options {
    options.args.retain(|a| a != "--no-session");
    options
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_levels_follow_the_model() {
    let server = FakeLlm::start(json!([])).await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-reasoner")).await;
    let levels = pith
        .call("l", json!({"type": "get_available_thinking_levels"}))
        .await;
    assert_eq!(
        levels["data"],
        json!({"levels": ["off", "minimal", "low", "medium", "high"]})
    );
    pith.call(
        "m",
        json!({"type": "set_model", "provider": "fake", "modelId": "fake-model"}),
    )
    .await;
    let levels = pith
        .call("l2", json!({"type": "get_available_thinking_levels"}))
        .await;
    assert_eq!(levels["data"], json!({"levels": ["off"]}));
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_tree_and_clone() {
    let mut pith = Pith::spawn(with_sessions(Options::faux(
        json!([{"text": "one"}, {"text": "two"}]),
    )))
    .await;
    pith.call("p", json!({"type": "prompt", "message": "first"}))
        .await;
    pith.until_agent_end().await;

    let all = pith.call("e", json!({"type": "get_entries"})).await;
    let entries = all["data"]["entries"].as_array().unwrap().clone();
    let types: Vec<&str> = entries
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message"
        ]
    );
    assert_eq!(all["data"]["leafId"], entries[4]["id"]);
    let since = pith
        .call(
            "s",
            json!({"type": "get_entries", "since": entries[1]["id"]}),
        )
        .await;
    assert_eq!(since["data"]["entries"], json!(entries[2..]));
    let unknown = pith
        .call("u", json!({"type": "get_entries", "since": "nope"}))
        .await;
    assert_eq!(unknown["success"], false);
    assert_eq!(unknown["error"], "Entry not found: nope");
    let bad = pith
        .call("b", json!({"type": "get_entries", "since": 5}))
        .await;
    assert_eq!(bad["success"], false);

    let tree = pith.call("t", json!({"type": "get_tree"})).await;
    assert_eq!(tree["data"]["leafId"], entries[4]["id"]);
    let roots = tree["data"]["tree"].as_array().unwrap();
    assert_eq!(roots.len(), 1);
    let mut node = &roots[0];
    for entry in &entries {
        assert_eq!(node["entry"], *entry);
        assert_eq!(
            node.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["entry", "children"]
        );
        if let Some(child) = node["children"].get(0) {
            node = child;
        }
    }

    let before = pith.call("g", json!({"type": "get_state"})).await["data"]["sessionFile"].clone();
    let cloned = pith.call("c", json!({"type": "clone"})).await;
    assert_eq!(cloned["data"], json!({"cancelled": false}), "{cloned}");
    let state = pith.call("g2", json!({"type": "get_state"})).await;
    let after = state["data"]["sessionFile"].as_str().unwrap().to_string();
    assert_ne!(json!(after), before);
    assert_eq!(state["data"]["messageCount"], 3);
    let text = std::fs::read_to_string(&after).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], before);
    assert_eq!(
        text.lines().count(),
        6,
        "the header and the five entries: {text}"
    );
    // The clone goes on from where the original was.
    pith.call("p2", json!({"type": "prompt", "message": "second"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(end["messages"][1]["content"][0]["text"], "two");
}

#[tokio::test(flavor = "multi_thread")]
async fn clone_is_cancelled_by_a_session_before_fork_hook() {
    let script = json!([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"text": "written"}
    ]);
    let plugins = support::plugins_dir_with(&["examples/switch-guard"]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(script)
    })
    .await;
    pith.call("p", json!({"type": "prompt", "message": "write"}))
        .await;
    pith.until_agent_end().await;
    let cloned = pith.call("c", json!({"type": "clone"})).await;
    assert_eq!(cloned["data"], json!({"cancelled": true}));
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_settled_comes_once_after_the_retries() {
    let overloaded =
        json!({"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}});
    let server = FakeLlm::start(json!([overloaded, {"text": "finally"}])).await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"baseDelayMs": 50}}).to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["type"] == "agent_settled").await;
    let kinds: Vec<&str> = pith
        .frames
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .filter(|t| {
            matches!(
                *t,
                "agent_start"
                    | "agent_end"
                    | "auto_retry_start"
                    | "auto_retry_end"
                    | "agent_settled"
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_start",
            "agent_end",
            "auto_retry_start",
            "agent_start",
            "auto_retry_end",
            "agent_end",
            "agent_settled"
        ]
    );
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["isStreaming"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_message_count_counts_both_queues_while_streaming() {
    let script = json!([{"text": "a slow answer", "chunks": 20, "delay_ms": 40}]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let first = pith.call("s0", json!({"type": "get_state"})).await;
    assert_eq!(first["data"]["pendingMessageCount"], 0);
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    pith.call("a", json!({"type": "steer", "message": "also this"}))
        .await;
    pith.call("b", json!({"type": "follow_up", "message": "then that"}))
        .await;
    pith.call(
        "c",
        json!({"type": "prompt", "message": "and more", "streamingBehavior": "followUp"}),
    )
    .await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["isStreaming"], true);
    assert_eq!(state["data"]["pendingMessageCount"], 3);
    pith.wait_for(|f| f["type"] == "agent_settled").await;
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["pendingMessageCount"], 0);
}

/// Installs pi 0.73.1's npm package (for its `RpcClient`) once per build directory.
fn pi_package() -> std::path::PathBuf {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pi-client");
    let client =
        root.join("node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
    if !client.is_file() {
        std::fs::create_dir_all(&root).unwrap();
        let status = std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--prefix",
            ])
            .arg(&root)
            .arg("@mariozechner/pi-coding-agent@0.73.1")
            .status()
            .expect("npm runs (the CI script installs Node.js and npm)");
        assert!(status.success(), "npm install failed");
    }
    client
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_rpc_client_drives_pith() {
    let client = pi_package();
    let script = json!([
        {"text": "hello back"},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo tool-ok"}}]},
        {"text": "tool done"},
        {"text": "a long answer that will be steered", "chunks": 30, "delay_ms": 30},
        {"text": "steered"},
        {"text": "slow answer to abort", "chunks": 100, "delay_ms": 50}
    ]);
    let report = support::rpc::drive_rpc_client(support::rpc::ClientRun {
        node_bin: None,
        client: &client,
        body: DRIVER,
        script,
        // pi 0.73.1's client drives pith under its profile, chosen by the environment.
        env: vec![("PITH_PI_PROTOCOL", "0.73".into())],
        agent_files: Vec::new(),
    })
    .await;
    assert_eq!(report["model"], "faux-model");
    assert_eq!(report["answer"], "hello back");
    assert_eq!(report["toolOutput"], "tool-ok\n");
    assert_eq!(report["steeredLast"], "steered");
    assert!(report["steerDelivered"].as_bool().unwrap(), "{report}");
    assert_eq!(report["abortStop"], "aborted");
    assert_eq!(report["setModel"], "faux-model");
    assert_eq!(report["forkCancelled"], false);
    assert_eq!(report["forkText"], "hello");
    assert!(
        report["summary"].as_str().is_some_and(|s| !s.is_empty()),
        "{report}"
    );
    assert_eq!(report["stateAfter"]["isStreaming"], false);
}

/// The body of the driver of pi 0.73.1's `RpcClient` (see `support::rpc::rpc_client_driver`);
/// prints a JSON report as its last line.
const DRIVER: &str = r#"
try {
  report.model = (await client.getState()).model.id;

  const first = await client.promptAndWait("hello");
  report.answer = lastText(first);

  const tool = await client.promptAndWait("run a tool");
  const toolEnd = tool.find((e) => e.type === "tool_execution_end");
  report.toolOutput = toolEnd.result.content[0].text;

  const streamed = client.collectEvents();
  await client.prompt("a long one");
  await new Promise((resolve) => {
    const off = client.onEvent((e) => {
      if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") { off(); resolve(); }
    });
  });
  await client.steer("change course");
  let events = await streamed;
  // The run ends after the steering message was answered.
  report.steerDelivered = events.some((e) => e.type === "message_start" && e.message.role === "user"
    && e.message.content[0].text === "change course");
  report.steeredLast = lastText(events);

  const aborted = client.collectEvents();
  await client.prompt("slow");
  await new Promise((resolve) => setTimeout(resolve, 300));
  await client.abort();
  events = await aborted;
  const ends = events.filter((e) => e.type === "message_end" && e.message.role === "assistant");
  report.abortStop = ends[ends.length - 1].message.stopReason;

  const models = await client.getAvailableModels();
  const faux = models.find((m) => m.provider === "faux");
  report.setModel = (await client.setModel(faux.provider, faux.id)).id;

  const forkable = await client.getForkMessages();
  const fork = await client.fork(forkable[0].entryId);
  report.forkCancelled = fork.cancelled;
  report.forkText = fork.text;

  // Listening before the prompt: an answer as quick as faux's can end before a listener
  // attached after `prompt` resolves (its `agent_end` arrives in the same read).
  const again = client.collectEvents();
  await client.prompt("again, after the fork");
  await again;
  const compacted = await client.compact();
  report.summary = compacted.summary;
  report.stateAfter = await client.getState();
} finally {
  await client.stop();
}
console.log(JSON.stringify(report));
"#;

/// pi 1.5's `clear_queue` (the removed texts, and a `queue_update` with empty queues) and
/// `bash` with `excludeFromContext` (recorded, shown, never sent to the model).
#[tokio::test(flavor = "multi_thread")]
async fn clear_queue_and_bash_excluded_from_context() {
    let script = json!([{"text": "a slow answer", "chunks": 20, "delay_ms": 40}]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let empty = pith.call("c0", json!({"type": "clear_queue"})).await;
    assert_eq!(empty["data"], json!({"steering": [], "followUp": []}));
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    pith.call("a", json!({"type": "steer", "message": "queued steer"}))
        .await;
    pith.call(
        "b",
        json!({"type": "follow_up", "message": "queued follow-up"}),
    )
    .await;
    let cleared = pith.call("c", json!({"type": "clear_queue"})).await;
    assert_eq!(
        cleared["data"],
        json!({"steering": ["queued steer"], "followUp": ["queued follow-up"]})
    );
    let update = pith
        .frames
        .iter()
        .rev()
        .find(|f| f["type"] == "queue_update")
        .unwrap()
        .clone();
    assert_eq!(
        update,
        json!({"type": "queue_update", "steering": [], "followUp": []})
    );
    pith.wait_for(|f| f["type"] == "agent_settled").await;

    let bad = pith
        .call(
            "b0",
            json!({"type": "bash", "command": "true", "excludeFromContext": "yes"}),
        )
        .await;
    assert_eq!(
        bad["error"],
        "Field \"excludeFromContext\" must be a boolean, got a string"
    );
    pith.call(
        "b1",
        json!({"type": "bash", "command": "echo private", "excludeFromContext": true}),
    )
    .await;
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let record = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "bashExecution")
        .unwrap()
        .clone();
    assert_eq!(record["excludeFromContext"], true, "{record}");
}
