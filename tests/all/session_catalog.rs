//! `list_sessions` and `delete_session` over the real pipes, on session files in pi's format.

use std::time::{Duration, SystemTime};

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// Writes a session file of `lines` (JSON values) modified `age` ago.
fn session_file(path: &std::path::Path, lines: &[Value], age: Duration) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

fn header(id: &str) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-11-01T10:00:00.000Z", "cwd": "/w"})
}

fn user(id: &str, parent: Option<&str>, content: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-11-01T10:00:01.000Z",
        "message": {"role": "user", "content": content, "timestamp": 1}})
}

async fn list(pith: &mut Pith, id: &str, args: Value) -> Value {
    let mut command = json!({"type": "list_sessions"});
    for (key, value) in args.as_object().unwrap() {
        command[key] = value.clone();
    }
    pith.call(id, command).await
}

fn ids(page: &Value) -> Vec<&str> {
    page["data"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_listed_newest_first_by_page_and_deleted_by_path() {
    let mut options = Options::faux(json!([{"text": "one"}]));
    options.args = [
        "--provider",
        "faux",
        "--model",
        "faux-model",
        "--session-dir",
        "sessions",
    ]
    .map(String::from)
    .to_vec();
    let mut pith = Pith::spawn(options).await;
    let dir = pith.work_dir().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let assistant = json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-01T10:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "api": "faux",
            "provider": "faux", "model": "faux-model", "usage": {"input": 1, "output": 1, "cacheRead": 0,
            "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0,
            "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": 2}});
    let info = |name: &str| json!({"type": "session_info", "id": "i1", "parentId": "a2", "timestamp": "2026-11-01T10:00:03.000Z", "name": name});
    session_file(
        &dir.join("a.jsonl"),
        &[
            header("aaa"),
            user("a1", None, json!([{"type": "text", "text": "hello a"}])),
            assistant,
            info("Alpha"),
            info("  "),
        ],
        Duration::from_secs(300),
    );
    session_file(
        &dir.join("b.jsonl"),
        &[header("bbb"), user("b1", None, json!("hello b"))],
        Duration::from_secs(200),
    );
    session_file(
        &dir.join("c.jsonl"),
        &[header("ccc")],
        Duration::from_secs(100),
    );
    std::fs::write(dir.join("junk.jsonl"), "not a session\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not listed\n").unwrap();

    let first = list(&mut pith, "l1", json!({"limit": 2})).await;
    assert_eq!(ids(&first), ["ccc", "bbb"], "{first}");
    let cursor = first["data"]["nextCursor"].as_str().unwrap().to_string();
    let second = list(&mut pith, "l2", json!({"limit": 2, "cursor": cursor})).await;
    assert_eq!(ids(&second), ["aaa"], "{second}");
    assert!(second["data"].get("nextCursor").is_none(), "{second}");
    let alpha = &second["data"]["sessions"][0];
    let keys = crate::support::keys(alpha);
    assert_eq!(
        keys,
        [
            "id",
            "path",
            "cwd",
            "name",
            "firstMessage",
            "modified",
            "messageCount"
        ]
    );
    assert_eq!(
        (
            &alpha["name"],
            &alpha["firstMessage"],
            &alpha["messageCount"],
            &alpha["cwd"]
        ),
        (&json!("Alpha"), &json!("hello a"), &json!(2), &json!("/w"))
    );
    assert!(alpha["path"].as_str().unwrap().ends_with("a.jsonl"));
    let all = list(&mut pith, "l3", json!({"scope": "all"})).await;
    assert_eq!(ids(&all), ["ccc", "bbb", "aaa"]);
    assert_eq!(all["data"]["sessions"][1]["firstMessage"], "hello b");

    // Bad input says what to send.
    for (id, args, error) in [
        ("e1", json!({"limit": 0}), "limit must be 1 to 1000, got 0"),
        (
            "e2",
            json!({"cursor": "x"}),
            "Invalid cursor \"x\": pass the nextCursor of the previous page",
        ),
        (
            "e3",
            json!({"scope": "nope"}),
            "Unknown scope \"nope\": use \"cwd\" or \"all\" (the saved sessions), or \"host\" (the sessions this process holds)",
        ),
    ] {
        let failed = list(&mut pith, id, args).await;
        assert_eq!(failed["error"], error, "{failed}");
    }

    // Deleting: a listed file goes; the open session, other files and paths elsewhere stay.
    let b = dir.join("b.jsonl").display().to_string();
    let deleted = pith
        .call("d1", json!({"type": "delete_session", "path": b}))
        .await;
    assert_eq!(deleted["success"], true, "{deleted}");
    assert!(!dir.join("b.jsonl").exists());
    assert_eq!(ids(&list(&mut pith, "l4", json!({})).await), ["ccc", "aaa"]);
    let again = pith
        .call("d2", json!({"type": "delete_session", "path": b}))
        .await;
    assert_eq!(again["error"], format!("No session file at {b}"));
    let outside = pith.work_dir().join("elsewhere.jsonl");
    std::fs::write(&outside, format!("{}\n", header("zzz"))).unwrap();
    let outside = outside.display().to_string();
    let refused = pith
        .call("d3", json!({"type": "delete_session", "path": outside}))
        .await;
    assert_eq!(
        refused["error"],
        format!("{outside} is not in the sessions directory: pith deletes only its session files")
    );
    let junk = dir.join("junk.jsonl").display().to_string();
    let not_session = pith
        .call("d4", json!({"type": "delete_session", "path": junk}))
        .await;
    assert_eq!(
        not_session["error"],
        format!("{junk} is not a session file (no session header)")
    );
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    pith.until_agent_end().await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let open = state["data"]["sessionFile"].as_str().unwrap().to_string();
    let kept = pith
        .call("d5", json!({"type": "delete_session", "path": open}))
        .await;
    assert_eq!(
        kept["error"],
        "Cannot delete the open session: switch_session or new_session first"
    );
    let missing = pith.call("d6", json!({"type": "delete_session"})).await;
    assert_eq!(missing["success"], false);
}

/// pi's `sessionDir` setting: new sessions are saved there (a relative one from the working
/// directory); `--session-dir` and `PI_CODING_AGENT_SESSION_DIR` come before it.
#[tokio::test(flavor = "multi_thread")]
async fn the_session_dir_setting_is_where_sessions_go() {
    let saved_in = |pith: &Pith, dir: &str| -> usize {
        std::fs::read_dir(pith.work_dir().join(dir))
            .map(|entries| entries.flatten().count())
            .unwrap_or(0)
    };
    let run = |env: Option<&'static str>| async move {
        let mut options = Options::faux(json!([{"text": "ok"}]));
        options.args.retain(|a| a != "--no-session");
        options.agent_files.push((
            "settings.json".into(),
            json!({"sessionDir": "from-settings"}).to_string(),
        ));
        if let Some(dir) = env {
            options
                .env
                .push(("PI_CODING_AGENT_SESSION_DIR".into(), dir.into()));
        }
        let mut pith = Pith::spawn(options).await;
        pith.call("p", json!({"type": "prompt", "message": "hi"}))
            .await;
        pith.until_agent_end().await;
        pith
    };
    let pith = run(None).await;
    assert_eq!(saved_in(&pith, "from-settings"), 1);
    let pith = run(Some("from-env")).await;
    assert_eq!(saved_in(&pith, "from-settings"), 0);
    assert_eq!(saved_in(&pith, "from-env"), 1);
}
