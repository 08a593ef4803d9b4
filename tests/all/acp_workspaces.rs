//! ACP sessions in folders other than the one pith started in, over the real pipes: one
//! `pith --mode acp` serves sessions in three folders at once, each prompt running
//! concurrently; each session's tools work in its own folder, a write into another session's
//! folder is refused by the sandbox, its sessions are listed and loaded there; each folder's
//! project plugins are its own.

use serde_json::{Value, json};

use crate::support;
use crate::support::acp::Acp;
use crate::support::rpc::Options;

/// The scripted model's turn: a `write` of `path`, then a `bash` `pwd`.
fn writes(path: &str) -> Value {
    json!({"tool_calls": [
        {"id": "w", "name": "write", "arguments": {"path": path, "content": "mine"}},
        {"id": "b", "name": "bash", "arguments": {"command": "pwd"}}
    ]})
}

/// Opens a session in each folder; their ids.
async fn open_in(acp: &mut Acp, folders: &[std::path::PathBuf]) -> Vec<String> {
    let mut sessions = Vec::new();
    for folder in folders {
        let created = acp
            .request("session/new", json!({"cwd": folder, "mcpServers": []}))
            .await;
        sessions.push(
            created["result"]["sessionId"]
                .as_str()
                .unwrap_or_else(|| panic!("{created}"))
                .to_string(),
        );
    }
    sessions
}

/// Sends a prompt to each session at once, and checks each ends its turn.
async fn prompt_at_once(acp: &mut Acp, sessions: &[String], text: impl Fn(usize) -> String) {
    let mut waiting = Vec::new();
    for (i, session) in sessions.iter().enumerate() {
        waiting.push(
            acp.send(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": text(i)}]}),
            )
            .await,
        );
    }
    for id in waiting {
        // The answers come in any order: one read already is taken from what was read.
        let read = acp
            .pith
            .frames
            .iter()
            .find(|f| f["id"] == id && f.get("method").is_none())
            .cloned();
        let done = match read {
            Some(done) => done,
            None => acp.response(id).await,
        };
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_work_in_their_own_folders_at_once() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let folders: Vec<std::path::PathBuf> = ["one", "two", "three"]
        .iter()
        .map(|name| {
            let folder = dir.path().join(name);
            std::fs::create_dir_all(&folder).unwrap();
            folder.canonicalize().unwrap()
        })
        .collect();
    // The scripted model answers by the conversation's length: every session writes its own
    // file first; the first one's second prompt then tries the second folder.
    let second = folders[1].join("intruder.txt").display().to_string();
    let script = json!([
        writes("mine.txt"), {"text": "done"},
        {"tool_calls": [{"id": "x", "name": "write", "arguments": {"path": second, "content": "no"}}]},
        {"text": "refused"}
    ]);
    let mut options = Options::faux(script);
    // Saved sessions, to list and load.
    options.args.retain(|a| a != "--no-session");
    let mut acp = Acp::start(options, json!({})).await;
    let sessions = open_in(&mut acp, &folders).await;
    // Three prompts in flight at once.
    prompt_at_once(&mut acp, &sessions, |i| format!("go {i}")).await;
    for folder in &folders {
        assert_eq!(
            std::fs::read_to_string(folder.join("mine.txt")).unwrap(),
            "mine"
        );
    }
    assert!(!acp.pith.work_dir().join("mine.txt").exists());
    // Each shell ran in its session's folder.
    let outputs: Vec<String> = acp
        .updates("tool_call_update")
        .iter()
        .filter(|u| u["toolCallId"] == "b" && u["status"] == "completed")
        .map(|u| u.to_string())
        .collect();
    for folder in &folders {
        let shown = folder.display().to_string();
        assert!(
            outputs.iter().any(|o| o.contains(&shown)),
            "{shown}: {outputs:?}"
        );
    }
    // A write into another session's folder is refused by the sandbox.
    let refused = acp.prompt(&sessions[0], "write there").await;
    assert_eq!(refused["result"]["stopReason"], "end_turn", "{refused}");
    assert!(!folders[1].join("intruder.txt").exists());
    // Each folder lists its own session, and a session saved there loads there.
    let listed = acp
        .request("session/list", json!({"cwd": folders[2]}))
        .await;
    let ids: Vec<&str> = listed["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sessionId"].as_str())
        .collect();
    assert_eq!(ids, [sessions[2].as_str()], "{listed}");
    assert_eq!(listed["result"]["sessions"][0]["cwd"], json!(folders[2]));
    acp.request("session/close", json!({"sessionId": sessions[2]}))
        .await;
    let loaded = acp
        .request(
            "session/load",
            json!({"sessionId": sessions[2], "cwd": folders[2], "mcpServers": []}),
        )
        .await;
    assert!(loaded["result"].is_object(), "{loaded}");
    let elsewhere = acp
        .request(
            "session/load",
            json!({"sessionId": sessions[1], "cwd": folders[0], "mcpServers": []}),
        )
        .await;
    assert_eq!(elsewhere["error"]["code"], -32602, "{elsewhere}");
    let says = format!("works in {}", folders[1].display());
    assert!(
        elsewhere["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&says),
        "{elsewhere}"
    );
}

/// The text of the last update of call `call` in session `session`.
fn call_result(acp: &Acp, session: &str, call: &str) -> (String, String) {
    let update = acp
        .pith
        .frames
        .iter()
        .filter(|f| f["method"] == "session/update" && f["params"]["sessionId"] == session)
        .map(|f| &f["params"]["update"])
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call)
        .cloned()
        .unwrap_or_else(|| panic!("no update of {call} in {session}"));
    (
        update["status"].as_str().unwrap_or_default().to_string(),
        update["content"].to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn each_folder_has_its_own_project_plugins() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Three trusted folders: the word counter, its version 2, and an extension (no tool).
    let plugins = [
        "examples/word-count",
        "testing/word-count-v2",
        "examples/hello-extension",
    ];
    let folders: Vec<std::path::PathBuf> = ["one", "two", "three"]
        .iter()
        .zip(plugins)
        .map(|(name, plugin)| {
            let folder = dir.path().join(name);
            let own = folder.join(".pith/plugins");
            std::fs::create_dir_all(&own).unwrap();
            support::install_plugin(&own, plugin);
            std::fs::write(folder.join("notes.txt"), "a b c\n").unwrap();
            folder.canonicalize().unwrap()
        })
        .collect();
    let mut options = Options::faux(json!([
        {"tool_calls": [{"id": "c", "name": "word_count", "arguments": {"path": "notes.txt"}}]},
        {"text": "counted"}
    ]));
    options.agent_files.push((
        "trusted-projects.json".into(),
        json!({"trusted": folders, "untrusted": []}).to_string(),
    ));
    let mut acp = Acp::start(options, json!({})).await;
    let sessions = open_in(&mut acp, &folders).await;
    // Their prompts run at once, each calling `word_count`.
    prompt_at_once(&mut acp, &sessions, |_| "count".to_string()).await;
    let (status, text) = call_result(&acp, &sessions[0], "c");
    assert_eq!(status, "completed", "{text}");
    assert!(
        text.contains("1 lines, 3 words, 6 bytes") && !text.contains("v2"),
        "{text}"
    );
    let (status, text) = call_result(&acp, &sessions[1], "c");
    assert_eq!(status, "completed", "{text}");
    assert!(text.contains("v2: 1 lines, 3 words, 6 bytes"), "{text}");
    let (status, text) = call_result(&acp, &sessions[2], "c");
    assert_eq!(status, "failed", "{text}");
    assert!(text.contains("word_count"), "{text}");
    // The extension's command is the third folder's only.
    let hello = |session: &str| {
        acp.pith.frames.iter().any(|f| {
            f["params"]["sessionId"] == session
                && f["params"]["update"]["sessionUpdate"] == "available_commands_update"
                && f["params"]["update"]["availableCommands"]
                    .as_array()
                    .is_some_and(|list| list.iter().any(|c| c["name"] == "hello"))
        })
    };
    assert!(hello(&sessions[2]));
    assert!(!hello(&sessions[0]) && !hello(&sessions[1]));
    // The start folder's session has none of them.
    let home = acp.new_session().await;
    let done = acp.prompt(&home, "count").await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let (status, _) = call_result(&acp, &home, "c");
    assert_eq!(status, "failed");
}
