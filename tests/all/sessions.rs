//! Sessions on disk over the real binary: pi's file format both ways, lazy append-only writes,
//! switching, forking, names and damaged files (the export's page: `export_viewer.rs`;
//! compaction: `compaction.rs`).

use crate::support;

use crate::support::rpc::{Options, Pith, persistent};
use serde_json::{Value, json};

fn lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_is_written_lazily_in_pis_format() {
    let mut pith = Pith::spawn(persistent(json!([{"text": "one"}, {"text": "two"}]), &[])).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let file = state["data"]["sessionFile"].as_str().unwrap().to_string();
    assert!(
        file.ends_with(&format!(
            "_{}.jsonl",
            state["data"]["sessionId"].as_str().unwrap()
        )),
        "{file}"
    );
    let path = pith.work_dir().join(&file);
    assert!(!path.exists(), "nothing is written before an answer");
    pith.call("p", json!({"type": "prompt", "message": "first"}))
        .await;
    pith.until_agent_end().await;
    let written = lines(path.to_str().unwrap());
    assert_eq!(written[0]["type"], "session");
    assert_eq!(written[0]["version"], 3);
    let keys: Vec<&str> = written[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["type", "version", "id", "timestamp", "cwd"]);
    let kinds: Vec<&str> = written[1..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message"
        ]
    );
    // pi 1.5's system message comes first: the prompt's sections and the tools.
    assert_eq!(written[3]["message"]["role"], "system");
    assert_eq!(written[3]["message"]["content"], "");
    assert!(
        written[3]["message"]["toolsAdded"]
            .as_array()
            .unwrap()
            .len()
            >= 4
    );
    let keys: Vec<&str> = written[3]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["type", "id", "parentId", "timestamp", "message"]);
    assert_eq!(written[1]["parentId"], Value::Null);
    assert_eq!(written[2]["parentId"], written[1]["id"]);
    assert_eq!(written[5]["message"]["role"], "assistant");
    assert_eq!(written[1]["id"].as_str().unwrap().len(), 8);
    pith.call(
        "n",
        json!({"type": "set_session_name", "name": "my session"}),
    )
    .await;
    let written = lines(path.to_str().unwrap());
    assert_eq!(written.last().unwrap()["type"], "session_info");
    assert_eq!(written.last().unwrap()["name"], "my session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_written_by_pi_opens_and_continues() {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("from-pi.jsonl");
    std::fs::copy(
        support::repo_root().join("tests/fixtures/pi-sessions/pi-session.jsonl"),
        &copy,
    )
    .unwrap();
    let mut pith = Pith::spawn(persistent(
        json!([{"text": "x"}, {"text": "y"}, {"text": "continued"}]),
        &["--session", copy.to_str().unwrap()],
    ))
    .await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(
        state["data"]["sessionId"],
        "01a200f4-ee58-7432-ade9-1920099602ae"
    );
    assert_eq!(state["data"]["sessionName"], "golden session");
    assert_eq!(state["data"]["messageCount"], 4);
    let forks = pith.call("f", json!({"type": "get_fork_messages"})).await;
    assert_eq!(
        forks["data"]["messages"],
        json!([{"entryId": "b40929ba", "text": "first question"}, {"entryId": "858a912e", "text": "second question"}])
    );
    pith.call("p", json!({"type": "prompt", "message": "third question"}))
        .await;
    let end = pith.until_agent_end().await;
    // A session written before pi 1.5 gets its first system message with the next run.
    assert_eq!(
        support::rpc::roles(&end["messages"]),
        ["system", "user", "assistant"]
    );
    assert_eq!(end["messages"][2]["content"][0]["text"], "continued");
    let written = lines(copy.to_str().unwrap());
    assert_eq!(written.len(), 8 + 3);
    assert_eq!(
        written[8]["parentId"], "f4f709dc",
        "appended after pi's last entry"
    );
    assert_eq!(written[8]["message"]["role"], "system");
    assert_eq!(written[10]["message"]["role"], "assistant");
}

#[tokio::test(flavor = "multi_thread")]
async fn switch_session_refuses_missing_and_invalid_files() {
    let mut pith = Pith::spawn(persistent(json!([{"text": "one"}]), &[])).await;
    let missing = pith.work_dir().join("nope.jsonl");
    let err = pith
        .call(
            "a",
            json!({"type": "switch_session", "sessionPath": missing.to_str().unwrap()}),
        )
        .await;
    assert_eq!(err["success"], false);
    assert_eq!(
        err["error"],
        format!("Session file not found: {}", missing.display())
    );
    assert!(!missing.exists(), "never created");
    let invalid = pith.work_dir().join("bad.jsonl");
    std::fs::write(&invalid, "not a header\n").unwrap();
    let err = pith
        .call(
            "b",
            json!({"type": "switch_session", "sessionPath": "bad.jsonl"}),
        )
        .await;
    assert_eq!(
        err["error"],
        format!(
            "Invalid session file (no session header): {}",
            invalid.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&invalid).unwrap(),
        "not a header\n",
        "never truncated"
    );
    let missing_field = pith.call("c", json!({"type": "switch_session"})).await;
    assert_eq!(
        missing_field["error"],
        "Missing required field \"sessionPath\""
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn switch_back_fork_and_new_session() {
    let mut pith = Pith::spawn(persistent(
        json!([{"text": "A1"}, {"text": "A2"}, {"text": "in fork"}, {"text": "fresh"}]),
        &[],
    ))
    .await;
    pith.call("p1", json!({"type": "prompt", "message": "q1"}))
        .await;
    pith.until_agent_end().await;
    pith.call("p2", json!({"type": "prompt", "message": "q2"}))
        .await;
    pith.until_agent_end().await;
    let first_file = pith.call("s", json!({"type": "get_state"})).await["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let forks = pith.call("f", json!({"type": "get_fork_messages"})).await;
    let second = forks["data"]["messages"][1]["entryId"]
        .as_str()
        .unwrap()
        .to_string();
    let bad = pith
        .call("bad", json!({"type": "fork", "entryId": "00000000"}))
        .await;
    assert_eq!(bad["error"], "Invalid entry ID for forking");
    let forked = pith
        .call("fk", json!({"type": "fork", "entryId": second}))
        .await;
    assert_eq!(forked["data"], json!({"text": "q2", "cancelled": false}));
    let state = pith.call("s2", json!({"type": "get_state"})).await;
    let fork_file = state["data"]["sessionFile"].as_str().unwrap().to_string();
    assert_ne!(fork_file, first_file);
    assert_eq!(
        state["data"]["messageCount"], 3,
        "the conversation before q2, after the system message"
    );
    let header = &lines(pith.work_dir().join(&fork_file).to_str().unwrap())[0];
    assert!(
        header["parentSession"]
            .as_str()
            .unwrap()
            .ends_with(&first_file)
    );

    let fresh = pith
        .call(
            "ns",
            json!({"type": "new_session", "parentSession": first_file}),
        )
        .await;
    assert_eq!(fresh["data"], json!({"cancelled": false}));
    assert_eq!(
        pith.call("s3", json!({"type": "get_state"})).await["data"]["messageCount"],
        0
    );
    let back = pith
        .call(
            "sw",
            json!({"type": "switch_session", "sessionPath": first_file}),
        )
        .await;
    assert_eq!(back["data"], json!({"cancelled": false}));
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    assert_eq!(
        crate::support::rpc::message_texts(&messages),
        ["q1", "A1", "q2", "A2"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn export_html_is_one_self_contained_page() {
    let mut pith = Pith::spawn(persistent(
        json!([{"thinking": "hmm <b>", "text": "Hello & welcome"}]),
        &[],
    ))
    .await;
    let early = pith.call("e0", json!({"type": "export_html"})).await;
    assert_eq!(
        early["error"],
        "Nothing to export yet - start a conversation first"
    );
    pith.call("p", json!({"type": "prompt", "message": "say <hi>"}))
        .await;
    pith.until_agent_end().await;
    let exported = pith
        .call(
            "e",
            json!({"type": "export_html", "outputPath": "out/page.html"}),
        )
        .await;
    assert_eq!(exported["data"], json!({"path": "out/page.html"}));
    let html = std::fs::read_to_string(pith.work_dir().join("out/page.html")).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    // The session is data for the page's script, every `<` escaped (it cannot close the
    // script element); `export_viewer.rs` checks what the page makes of it in Chromium.
    assert!(html.contains(r#""text":"say \u003chi>""#), "the prompt");
    assert!(html.contains(r#""text":"Hello & welcome""#), "the answer");
    assert!(
        html.contains(r#""thinking":"hmm \u003cb>""#),
        "the thinking"
    );
    assert!(!html.contains("<hi>") && !html.contains("<b>"));
    // No network: the policy forbids every request (Chromium checks it in export_viewer.rs).
    assert!(html.contains("content=\"default-src 'none'; script-src 'nonce-"));
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    let default = pith.call("e2", json!({"type": "export_html"})).await;
    let name = default["data"]["path"].as_str().unwrap();
    assert!(name.starts_with("pith-session-") && name.ends_with(".html"));
    assert!(pith.work_dir().join(name).exists());

    let mut memory = Pith::spawn(Options::faux(json!([{"text": "x"}]))).await;
    let err = memory.call("e", json!({"type": "export_html"})).await;
    assert_eq!(err["error"], "Cannot export in-memory session to HTML");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_file_loads_its_good_lines() {
    let mut pith = Pith::spawn(persistent(json!([{"text": "A"}]), &[])).await;
    pith.call("p", json!({"type": "prompt", "message": "keep me"}))
        .await;
    pith.until_agent_end().await;
    let file = pith.call("s", json!({"type": "get_state"})).await["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let path = pith.work_dir().join(&file);
    pith.close_stdin();
    pith.exit_code().await;
    // A torn last line, as a crash mid-write would leave.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"type\":\"message\",\"id\":\"dead\",\"par");
    std::fs::write(&path, text).unwrap();

    let (good, problems) = pith::agent::session::file::SessionFile::open(&path).unwrap();
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("not a session entry"), "{problems:?}");
    assert_eq!(good.context().messages.len(), 3, "system, prompt, answer");
}

#[test]
fn appending_to_a_file_without_a_final_newline_starts_a_new_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let pi = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/pi-sessions/pi-session.jsonl"),
    )
    .unwrap();
    std::fs::write(&path, pi.trim_end()).unwrap();
    let (mut file, _) = pith::agent::session::file::SessionFile::open(&path).unwrap();
    file.append(
        "session_info",
        serde_json::from_value(json!({"name": "renamed"})).unwrap(),
    );
    let written = lines(path.to_str().unwrap());
    assert_eq!(written.len(), 9);
    assert_eq!(written[8]["name"], "renamed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_mid_stream_loses_nothing_complete() {
    let script = json!([{"text": "complete answer"}, {"text": "this one is cut off by the kill", "chunks": 30, "delay_ms": 50}, {"text": "continued"}]);
    let mut pith = Pith::spawn(persistent(script.clone(), &[])).await;
    pith.call("p1", json!({"type": "prompt", "message": "first"}))
        .await;
    pith.until_agent_end().await;
    let file = pith.call("s", json!({"type": "get_state"})).await["data"]["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let path = pith.work_dir().join(&file);
    pith.call("p2", json!({"type": "prompt", "message": "second"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    pith.child.start_kill().unwrap(); // SIGKILL
    let _ = pith.child.wait().await;

    let written = lines(path.to_str().unwrap());
    let kinds: Vec<String> = written[1..]
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["type"].as_str().unwrap(),
                e["message"]["role"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "model_change:",
            "thinking_level_change:",
            "message:system",
            "message:user",
            "message:assistant",
            "message:user"
        ]
    );

    let mut resumed = Pith::spawn(persistent(script, &["--session", path.to_str().unwrap()])).await;
    let state = resumed.call("s", json!({"type": "get_state"})).await;
    assert_eq!(
        state["data"]["messageCount"], 4,
        "system, user, answer, user"
    );
    resumed
        .call("p3", json!({"type": "prompt", "message": "third"}))
        .await;
    let end = resumed.until_agent_end().await;
    // faux answers by the number of answers in the conversation: one, so its turn 1 again.
    // This pith works in another folder: the run records the `cwd` section's change first.
    let messages = end["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system", "{end}");
    assert_eq!(
        messages[0]["sections"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["cwd"]
    );
    assert_eq!(
        messages[2]["content"][0]["text"], "this one is cut off by the kill",
        "{end}"
    );
    let written = lines(path.to_str().unwrap());
    assert_eq!(
        written.len(),
        7 + 3,
        "the patch of the folder, the prompt and the answer"
    );
}

#[test]
fn a_file_pith_writes_has_the_shape_pi_reads() {
    // The fixture was written by pith and opened by pi 0.73.1 (see the fixture's README).
    let dir = support::repo_root().join("tests/fixtures/pith-sessions");
    let (file, problems) =
        pith::agent::session::file::SessionFile::open(&dir.join("written-by-pith.jsonl")).unwrap();
    assert!(problems.is_empty());
    let context = file.context();
    assert_eq!(context.messages.len(), 2);
    let pi_answer: Value = serde_json::from_str(
        std::fs::read_to_string(dir.join("pi-0.73.1-get_messages.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let ours: Vec<Value> = context.messages.iter().map(|(_, m)| m.to_json()).collect();
    assert_eq!(
        pi_answer["data"]["messages"],
        Value::Array(ours),
        "pi read back exactly what pith wrote"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_opens_the_latest_session() {
    let shared = tempfile::tempdir().unwrap();
    let dir = shared.path().join("sessions").to_str().unwrap().to_string();
    let options = |script: Value, extra: &[&str]| {
        let mut o = persistent(script, extra);
        let at = o.args.iter().position(|a| a == "sessions").unwrap();
        o.args[at] = dir.clone();
        o
    };
    let mut first = Pith::spawn(options(json!([{"text": "remembered"}]), &[])).await;
    first
        .call("p", json!({"type": "prompt", "message": "remember this"}))
        .await;
    first.until_agent_end().await;
    let id = first.call("s", json!({"type": "get_state"})).await["data"]["sessionId"].clone();
    first.close_stdin();
    first.exit_code().await;
    let mut second = Pith::spawn(options(json!([]), &["--continue"])).await;
    let state = second.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionId"], id);
    assert_eq!(state["data"]["messageCount"], 3);
}

/// `kill -9` at ten points through a run of answers and tool calls: every time, every line of
/// the session file is whole JSON, and the session opens again and goes on.
#[tokio::test(flavor = "multi_thread")]
async fn kill_at_many_points_leaves_a_valid_file() {
    let turns: Vec<Value> = (0..6)
        .flat_map(|i| {
            [
                json!({"tool_calls": [{"id": format!("r{i}"), "name": "read", "arguments": {"path": "notes.txt"}}], "delay_ms": 10}),
                json!({"text": format!("answer {i} in several pieces"), "chunks": 8, "delay_ms": 10}),
            ]
        })
        .collect();
    for (round, delay) in (0..10).map(|i| (i, 40 + i * 45)) {
        let mut options = persistent(json!(turns), &[]);
        options
            .work_files
            .push(("notes.txt".into(), "some notes\n".into()));
        let mut pith = Pith::spawn(options).await;
        pith.call("p", json!({"type": "prompt", "message": "read and answer"}))
            .await;
        pith.wait_for(|f| f["type"] == "message_update").await;
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
        let dir = pith.work_dir().join("sessions");
        pith.child.start_kill().unwrap(); // SIGKILL
        let _ = pith.child.wait().await;
        let Some(file) = std::fs::read_dir(&dir)
            .ok()
            .and_then(|mut entries| entries.next())
            .map(|e| e.unwrap().path())
        else {
            continue; // killed before the first answer: nothing written, nothing to lose
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            assert!(
                serde_json::from_str::<Value>(line).is_ok(),
                "round {round} ({delay} ms): a broken line {line:?}"
            );
        }
        let mut resumed = Pith::spawn(persistent(
            json!([]),
            &["--session", file.to_str().unwrap()],
        ))
        .await;
        resumed
            .call("p", json!({"type": "prompt", "message": "go on"}))
            .await;
        let end = resumed.until_agent_end().await;
        let answer = end["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(answer["role"], "assistant", "round {round}");
        assert_eq!(answer["stopReason"], "stop", "round {round}: {answer}");
    }
}

/// A damaged file whose duplicate ids link entries in a cycle (found by the session-file fuzz
/// target) still gives its tree, at once and bounded.
#[test]
fn a_cycle_of_duplicate_ids_does_not_hang_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cycle.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}"#,
        r#"{"type":"session_info","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:01Z","name":"x"}"#,
        r#"{"type":"session_info","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02Z","name":"y"}"#,
        r#"{"type":"session_info","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:03Z","name":"z"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (file, _) = pith::agent::session::file::SessionFile::open(&path).unwrap();
    let tree = file.tree();
    assert!(tree.len() <= 3, "{tree:?}");
}
