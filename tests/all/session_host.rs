//! The multi-session host over the real binary: sessions opened in several folders and driven
//! concurrently through the `sessionId` envelope, a session parked in one process and resumed
//! in another started afresh on the same sessions directory, a runaway plugin in one session
//! while another streams, and the caps refusing with clear errors.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith, persistent, tool_results};

/// The frames of session `id` read so far.
fn of<'a>(pith: &'a Pith, id: &str) -> Vec<&'a Value> {
    pith.since(0)
        .iter()
        .filter(|f| f["sessionId"] == id)
        .collect()
}

/// Opens session `id` in `cwd`; returns the response's data.
async fn open(pith: &mut Pith, id: &str, cwd: &std::path::Path) -> Value {
    let response = pith
        .call(
            &format!("open-{id}"),
            json!({"type": "open_session", "sessionId": id, "cwd": cwd}),
        )
        .await;
    assert_eq!(response["success"], true, "{response}");
    assert!(
        response.get("sessionId").is_none(),
        "the host's own answer is not tagged"
    );
    response["data"].clone()
}

/// Opens a session with `fields`; returns the response's data.
async fn open_with(pith: &mut Pith, fields: Value) -> Value {
    let mut command = json!({"type": "open_session"});
    command
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let response = pith.call("open", command).await;
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn three_sessions_in_three_folders_run_at_once_through_the_envelope() {
    // Each session's first request runs `pwd` in its folder, then answers in streamed chunks.
    let script = json!([
        {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "done here", "chunks": 6, "delay_ms": 40}
    ]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let info = pith
        .call("info", json!({"type": "get_protocol_info"}))
        .await;
    assert_eq!(info["data"]["multiSession"], true, "{info}");
    assert_eq!(info["data"]["envelope"], "sessionId");
    let names = ["north", "south", "west"];
    let mut folders = Vec::new();
    for name in names {
        let folder = pith.work_dir().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        let folder = folder.canonicalize().unwrap();
        let data = open(&mut pith, name, &folder).await;
        assert_eq!(data["sessionId"], name);
        assert_eq!(data["cwd"], folder.display().to_string());
        folders.push(folder);
    }
    for name in names {
        pith.send(json!({"type": "prompt", "sessionId": name, "message": format!("hello {name}")}))
            .await;
    }
    let mut ended = Vec::new();
    while ended.len() < names.len() {
        let end = pith.wait_for(|f| f["type"] == "agent_end").await;
        ended.push(end);
    }
    for (name, folder) in names.iter().zip(&folders) {
        let end = ended
            .iter()
            .find(|end| end["sessionId"] == *name)
            .unwrap_or_else(|| panic!("no agent_end for {name}"));
        let user = &end["messages"][1]["content"][0]["text"];
        assert_eq!(user, &json!(format!("hello {name}")), "{end}");
        let results = tool_results(end);
        let output = results[0]["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            output.trim(),
            folder.display().to_string(),
            "{name} ran in its folder"
        );
        // Every frame of the session is tagged, and the runs overlapped.
        let frames = of(&pith, name);
        assert!(
            frames
                .iter()
                .any(|f| f["type"] == "response" && f["command"] == "prompt")
        );
    }
    let first_end = pith
        .since(0)
        .iter()
        .position(|f| f["type"] == "agent_end")
        .unwrap();
    let starts_before = pith.since(0)[..first_end]
        .iter()
        .filter(|f| f["type"] == "agent_start")
        .count();
    assert_eq!(starts_before, 3, "the three runs went on at once");
    // The process's own session is untouched and untagged.
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert!(state.get("sessionId").is_none());
    assert_eq!(state["data"]["messageCount"], 0, "{state}");
    let listed = pith
        .call("l", json!({"type": "list_sessions", "scope": "host"}))
        .await;
    let sessions = listed["data"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 3, "{listed}");
    assert!(sessions.iter().all(|s| s["state"] == "idle"), "{listed}");
    // A session's get_state says what it holds.
    let state = pith
        .call("m", json!({"type": "get_state", "sessionId": "north"}))
        .await;
    assert_eq!(state["sessionId"], "north");
    let memory = &state["data"]["memory"];
    assert_eq!(memory["messages"], 5, "{state}");
    assert!(memory["bytes"].as_u64().unwrap() > 0, "{state}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_parked_in_one_process_resumes_in_another() {
    let shared = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sessions = shared.path().join("sessions");
    let folder = shared.path().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    let folder = folder.canonicalize().unwrap();
    let options = || {
        let mut options = persistent(
            json!([{"text": "first answer"}, {"text": "second answer"}]),
            &[],
        );
        options
            .args
            .retain(|arg| arg != "sessions" && arg != "--session-dir");
        options.args.push("--session-dir".into());
        options.args.push(sessions.display().to_string());
        options
    };
    let mut first = Pith::spawn(options()).await;
    open(&mut first, "durable-1", &folder).await;
    first
        .call(
            "p",
            json!({"type": "prompt", "sessionId": "durable-1", "message": "remember me"}),
        )
        .await;
    first.wait_for(|f| f["type"] == "agent_end").await;
    let parked = first
        .call(
            "park",
            json!({"type": "park_session", "sessionId": "durable-1"}),
        )
        .await;
    assert_eq!(parked["success"], true, "{parked}");
    let file = parked["data"]["sessionFile"].as_str().unwrap().to_string();
    assert!(file.ends_with("_durable-1.jsonl"), "{file}");
    let listed = first
        .call("l", json!({"type": "list_sessions", "scope": "host"}))
        .await;
    assert_eq!(listed["data"]["sessions"][0]["state"], "parked", "{listed}");
    first.close_stdin();
    assert_eq!(first.exit_code().await, Some(0));

    // A process started afresh, on the same sessions directory: the first command naming the
    // session resumes it, with its conversation.
    let mut second = Pith::spawn(options()).await;
    let messages = second
        .call(
            "m",
            json!({"type": "get_messages", "sessionId": "durable-1"}),
        )
        .await;
    assert_eq!(messages["sessionId"], "durable-1", "{messages}");
    let texts: Vec<String> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"][0]["text"].as_str().map(str::to_string))
        .collect();
    assert_eq!(texts, ["remember me", "first answer"], "{messages}");
    second
        .call(
            "p",
            json!({"type": "prompt", "sessionId": "durable-1", "message": "and again"}),
        )
        .await;
    let end = second.wait_for(|f| f["type"] == "agent_end").await;
    assert_eq!(end["sessionId"], "durable-1");
    let state = second
        .call("s", json!({"type": "get_state", "sessionId": "durable-1"}))
        .await;
    assert_eq!(
        state["data"]["sessionFile"],
        file.as_str(),
        "the same file goes on"
    );
    let listed = second
        .call("l", json!({"type": "list_sessions", "scope": "host"}))
        .await;
    let entry = &listed["data"]["sessions"][0];
    assert_eq!(entry["cwd"], folder.display().to_string(), "{listed}");
    let lines = std::fs::read_to_string(&file).unwrap();
    assert!(
        lines.contains("remember me") && lines.contains("second answer"),
        "{lines}"
    );
    // An id never saved is refused with the way out.
    let unknown = second
        .call("u", json!({"type": "get_state", "sessionId": "never-seen"}))
        .await;
    assert_eq!(unknown["success"], false);
    assert!(
        unknown["error"].as_str().unwrap().contains("open_session"),
        "{unknown}"
    );
    assert_eq!(unknown["sessionId"], "never-seen");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_runaway_plugin_in_one_session_leaves_another_streaming() {
    let plugins = crate::support::plugins_dir_with(&["testing/ext-probe"]);
    let script = json!([{"repeat": {"text": "word ", "count": 40}, "delay_ms": 10}]);
    // The spin lasts 4 s of guest time (the user's limits for the plugin).
    let settings = json!({"plugins": {"ext-probe": {"limits": {"deadlineMs": 4000}}}});
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        agent_files: vec![("settings.json".into(), settings.to_string())],
        ..Options::faux(script)
    })
    .await;
    let work = pith.work_dir().canonicalize().unwrap();
    open(&mut pith, "spinner", &work).await;
    open(&mut pith, "streamer", &work).await;
    // `/spin` loops in the extension until its guest-time deadline.
    pith.send(json!({"type": "prompt", "sessionId": "spinner", "message": "/spin"}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let began = Instant::now();
    pith.send(json!({"type": "prompt", "sessionId": "streamer", "message": "go"}))
        .await;
    let mut deltas = Vec::new();
    loop {
        let frame = pith.next_frame().await.expect("a frame");
        if frame["sessionId"] != "streamer" {
            continue;
        }
        if frame["assistantMessageEvent"]["type"] == "text_delta" {
            deltas.push(began.elapsed());
        }
        if frame["type"] == "agent_end" {
            break;
        }
    }
    let took = began.elapsed();
    assert_eq!(deltas.len(), 40);
    let widest = deltas
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .max()
        .unwrap();
    assert!(
        took < Duration::from_secs(3),
        "the stream took {took:?} beside the spin"
    );
    assert!(
        widest < Duration::from_secs(1),
        "a gap of {widest:?} between deltas"
    );
    // The spinner was still held by its plugin meanwhile, and ends at the deadline.
    let spinning = |f: &Value| f["sessionId"] == "spinner" && f["type"] == "extension_error";
    assert!(
        !pith.since(0).iter().any(spinning),
        "the spin outlasts the stream"
    );
    let spin_error = pith.wait_for(spinning).await;
    assert!(
        spin_error["error"].as_str().unwrap().contains("deadline"),
        "{spin_error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_caps_refuse_with_a_clear_error() {
    let settings = json!({"sessionHost": {"maxOpenSessions": 2, "maxConcurrentRuns": 1}});
    let script = json!([{"text": "slow answer", "chunks": 10, "delay_ms": 100}]);
    let mut pith = Pith::spawn(Options {
        agent_files: vec![("settings.json".into(), settings.to_string())],
        ..persistent(script, &[])
    })
    .await;
    let work = pith.work_dir().canonicalize().unwrap();
    open(&mut pith, "one", &work).await;
    open(&mut pith, "two", &work).await;
    let refused = pith
        .call(
            "three",
            json!({"type": "open_session", "sessionId": "three", "cwd": work}),
        )
        .await;
    assert_eq!(refused["success"], false, "{refused}");
    let error = refused["error"].as_str().unwrap();
    assert!(
        error.contains("maxOpenSessions") && error.contains("park_session"),
        "{error}"
    );
    // A command naming a session that is not open is refused the same way (not resumed).
    let named = pith
        .call("x", json!({"type": "get_state", "sessionId": "four"}))
        .await;
    assert!(
        named["error"].as_str().unwrap().contains("maxOpenSessions"),
        "{named}"
    );

    // One run at a time: the second session's prompt is refused while the first streams.
    pith.call(
        "p1",
        json!({"type": "prompt", "sessionId": "one", "message": "a"}),
    )
    .await;
    let second = pith
        .call(
            "p2",
            json!({"type": "prompt", "sessionId": "two", "message": "b"}),
        )
        .await;
    assert_eq!(second["success"], false, "{second}");
    assert_eq!(second["sessionId"], "two");
    assert!(
        second["error"]
            .as_str()
            .unwrap()
            .contains("maxConcurrentRuns"),
        "{second}"
    );
    pith.wait_for(|f| f["type"] == "agent_end").await;

    // Parking one makes room, and its queue and state are answered.
    let parked = pith
        .call("park", json!({"type": "park_session", "sessionId": "two"}))
        .await;
    assert_eq!(parked["success"], true, "{parked}");
    open(&mut pith, "three", &work).await;
    let again = pith
        .call("again", json!({"type": "park_session", "sessionId": "two"}))
        .await;
    assert!(
        again["error"].as_str().unwrap().contains("parked already"),
        "{again}"
    );
    let bad = pith
        .call("bad", json!({"type": "open_session", "sessionId": "a/b"}))
        .await;
    assert!(
        bad["error"].as_str().unwrap().contains("Invalid sessionId"),
        "{bad}"
    );
    // A session without a file cannot be parked (nothing would be left), and stays open.
    let memory = pith
        .call(
            "mem",
            json!({"type": "open_session", "sessionId": "mem", "noSession": true}),
        )
        .await;
    assert_eq!(memory["success"], false, "the cap holds: {memory}");
    pith.call("c", json!({"type": "close_session", "sessionId": "three"}))
        .await;
    open_with(&mut pith, json!({"sessionId": "mem", "noSession": true})).await;
    let kept = pith
        .call("pm", json!({"type": "park_session", "sessionId": "mem"}))
        .await;
    assert!(
        kept["error"].as_str().unwrap().contains("no file"),
        "{kept}"
    );
    let state = pith
        .call("sm", json!({"type": "get_state", "sessionId": "mem"}))
        .await;
    assert_eq!(state["success"], true, "still open: {state}");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_session_has_its_own_dialogs_and_parking_cancels_them_with_a_notice() {
    let plugins = crate::support::plugins_dir_with(&["testing/ext-probe"]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..persistent(json!([]), &[])
    })
    .await;
    let work = pith.work_dir().canonicalize().unwrap();
    open(&mut pith, "left", &work).await;
    open(&mut pith, "right", &work).await;
    let dialog = |session: &'static str, method: &'static str| {
        move |f: &Value| {
            f["sessionId"] == session
                && f["type"] == "extension_ui_request"
                && f["method"] == method
        }
    };
    pith.send(json!({"type": "prompt", "sessionId": "left", "message": "/ask confirm"}))
        .await;
    let confirm = pith.wait_for(dialog("left", "confirm")).await;
    pith.send(json!({"type": "prompt", "sessionId": "right", "message": "/ask select"}))
        .await;
    let select = pith.wait_for(dialog("right", "select")).await;
    // Each dialog is answered within its session; the other session has no such dialog.
    let wrong = pith
        .call(
            "wrong",
            json!({"type": "extension_ui_response", "sessionId": "left", "id": select["id"], "value": "green"}),
        )
        .await;
    assert_eq!(wrong["success"], false, "{wrong}");
    assert_eq!(wrong["sessionId"], "left");
    pith.send(json!({"type": "extension_ui_response", "sessionId": "right", "id": select["id"], "value": "green"}))
        .await;
    let answered = pith
        .wait_for(|f| {
            f["sessionId"] == "right"
                && f["method"] == "notify"
                && f["message"] == "answer: Some(\"green\")"
        })
        .await;
    assert_eq!(answered["sessionId"], "right");
    // Parking the left session cancels its open dialog, says so, and answers how many.
    let parked = pith
        .call("park", json!({"type": "park_session", "sessionId": "left"}))
        .await;
    assert_eq!(parked["data"]["cancelledDialogs"], 1, "{parked}");
    let notice = pith
        .since(0)
        .iter()
        .find(|f| {
            f["sessionId"] == "left"
                && f["method"] == "notify"
                && f["message"].as_str().is_some_and(|m| m.contains("parked"))
        })
        .cloned();
    assert!(notice.is_some(), "a notice of the cancelled dialog");
    assert!(confirm["id"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_envelope_works_under_the_pi_073_profile_too() {
    let mut options = Options::faux(json!([{"text": "answered", "chunks": 3}]));
    options.args.extend(["--pi-protocol".into(), "0.73".into()]);
    let mut pith = Pith::spawn(options).await;
    let info = pith
        .call("info", json!({"type": "get_protocol_info"}))
        .await;
    assert_eq!(info["data"]["protocol"], "0.73", "{info}");
    let work = pith.work_dir().canonicalize().unwrap();
    open(&mut pith, "old-host", &work).await;
    pith.call(
        "p",
        json!({"type": "prompt", "sessionId": "old-host", "message": "hi"}),
    )
    .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    assert_eq!(end["sessionId"], "old-host");
    // pi 0.73's frames inside the session: its message_update carries the partial message.
    let update = pith
        .since(0)
        .iter()
        .find(|f| f["type"] == "message_update")
        .cloned()
        .unwrap();
    assert_eq!(update["sessionId"], "old-host");
    assert!(update.get("message").is_some(), "{update}");
}
