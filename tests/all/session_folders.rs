//! RPC `switch_session` to a session saved in another folder, over the real binary: as pi 1.5.2
//! rebuilds its runtime for the file's `cwd`, the session moves there — the shell, the sandbox,
//! the context files, the system prompt's folder, the project's trust and resources, and where
//! new session files go — with pi's error for a folder that is gone and nothing on stdout.

use crate::support;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake, tool_results};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The start folder (`work/start`) and the other one (`work/other`, with its own `AGENTS.md`, a
/// project prompt template and pi's saved session `saved.jsonl`), for pith started in the first.
fn folders(options: &mut Options) {
    options.cwd = "start";
    options.work_files.extend([
        ("other/AGENTS.md".into(), "OTHER folder rules\n".into()),
        (
            "other/.pi/prompts/other-template.md".into(),
            "---\ndescription: the other folder's template\n---\nDo it\n".into(),
        ),
    ]);
}

/// Saves pi's session file at `file`, as if it had been written in `cwd`.
fn save_session(file: &Path, cwd: &Path) {
    let saved = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/pi-sessions/pi-session.jsonl"),
    )
    .unwrap()
    .replace("$SCRATCH/j_session/work", cwd.to_str().unwrap());
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, saved).unwrap();
}

/// The other folder, as the session sees it (links resolved).
fn other(pith: &Pith) -> PathBuf {
    pith.work_dir().join("other").canonicalize().unwrap()
}

/// The prompt template names `get_commands` lists.
async fn templates(pith: &mut Pith, id: &str) -> Vec<String> {
    let commands = pith.call(id, json!({"type": "get_commands"})).await;
    commands["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "prompt")
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_switch_to_another_folders_session_moves_the_session_there() {
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "b", "name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "here"},
        {"tool_calls": [{"id": "w", "name": "write", "arguments": {"path": "../start/escape.txt", "content": "no"}}]},
        {"text": "refused"}
    ]))
    .await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    folders(&mut options);
    let mut pith = Pith::spawn(options).await;
    let other = other(&pith);
    save_session(&other.join("saved.jsonl"), &other);
    let before = pith.call("s0", json!({"type": "get_state"})).await;

    // Relative to the folder pith started in, as pi resolves it.
    let switched = pith
        .call(
            "w",
            json!({"type": "switch_session", "sessionPath": "../other/saved.jsonl"}),
        )
        .await;
    assert_eq!(switched["data"], json!({"cancelled": false}), "{switched}");
    let state = pith.call("s1", json!({"type": "get_state"})).await;
    assert_eq!(
        state["data"]["sessionId"], "01a200f4-ee58-7432-ade9-1920099602ae",
        "{state}"
    );
    assert_ne!(state["data"]["sessionId"], before["data"]["sessionId"]);
    assert_eq!(state["data"]["messageCount"], 4);
    // Nothing on stdout but the responses (pi says nothing of the move).
    let told: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] != "response")
        .collect();
    assert!(told.is_empty(), "{told:?}");

    // The shell works there, and the model is told of that folder and its context file.
    pith.call("p", json!({"type": "prompt", "message": "where are you"}))
        .await;
    let end = pith.until_agent_end().await;
    let results = tool_results(&end);
    assert!(
        results[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(other.to_str().unwrap()),
        "{results:?}"
    );
    let system = server.requests()[0]["body"]["system"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("OTHER folder rules"), "{system}");
    assert!(
        system.contains(&format!("<cwd>\n{}\n</cwd>", other.display())),
        "{system}"
    );
    // The conversation went on from the saved one.
    let sent = server.requests()[0]["body"]["messages"].clone();
    assert!(sent.to_string().contains("first question"), "{sent}");

    // The sandbox's workspace is that folder: the start folder is not writable any more.
    pith.call(
        "p2",
        json!({"type": "prompt", "message": "write back home"}),
    )
    .await;
    let end = pith.until_agent_end().await;
    let results = tool_results(&end);
    assert_eq!(results[0]["isError"], true, "{results:?}");
    assert!(!pith.work_dir().join("start/escape.txt").exists());

    // The folder is not trusted (no `-a`, no record): its own template is left out.
    assert!(templates(&mut pith, "c").await.is_empty());

    // New sessions go beside the switched file, and are of that folder.
    let new = pith.call("n", json!({"type": "new_session"})).await;
    assert_eq!(new["data"], json!({"cancelled": false}), "{new}");
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
    assert_eq!(file.parent().unwrap(), other, "{state}");
    // Ending the input after the switch ends the process.
    pith.close_stdin();
    assert_eq!(pith.exit_code().await, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_applies_to_the_folder_switched_to_and_a_gone_folder_is_refused() {
    let mut options = Options::faux(json!([{"text": "x"}]));
    folders(&mut options);
    options.args.push("-a".into());
    let mut pith = Pith::spawn(options).await;
    let other = other(&pith);
    let before = pith.call("s0", json!({"type": "get_state"})).await;

    // A session whose folder is gone: pi's error, and the session is unchanged.
    let gone = pith.work_dir().join("gone");
    let file = pith.work_dir().join("start/gone.jsonl");
    save_session(&file, &gone);
    let refused = pith
        .call(
            "g",
            json!({"type": "switch_session", "sessionPath": "gone.jsonl"}),
        )
        .await;
    assert_eq!(refused["success"], false, "{refused}");
    let start = pith.work_dir().join("start");
    assert_eq!(
        refused["error"],
        format!(
            "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}",
            gone.display(),
            file.display(),
            start.canonicalize().unwrap().display()
        )
    );
    let state = pith.call("s1", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionId"], before["data"]["sessionId"]);

    // `-a` trusts the folder switched to, as pi applies it to every folder.
    let saved = other.join("sessions/saved.jsonl");
    save_session(&saved, &other);
    let switched = pith
        .call(
            "w",
            json!({"type": "switch_session", "sessionPath": saved.to_str().unwrap()}),
        )
        .await;
    assert_eq!(switched["data"], json!({"cancelled": false}), "{switched}");
    assert_eq!(templates(&mut pith, "c").await, ["other-template"]);

    // A clone lands beside the switched file, its header naming that folder.
    let cloned = pith.call("k", json!({"type": "clone"})).await;
    assert_eq!(cloned["data"], json!({"cancelled": false}), "{cloned}");
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
    assert_eq!(file.parent().unwrap(), other.join("sessions"), "{state}");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["cwd"], json!(other), "{header}");
}
