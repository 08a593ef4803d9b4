//! The sandbox over the real binary and pipes: the shell (the `bash` command's and the `bash`
//! tool's processes) held by the kernel (Landlock) to the mode — writes only where the mode
//! allows, no reads of the deny list, no network with `network: false` — and the same commands
//! allowed under `full-access`. Each denial is the process's own failure: it ran and tried.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith};

/// A pith whose HOME is `home` and whose settings are `settings`.
pub(crate) async fn pith_with(home: &Path, settings: Value, extra: &[&str], script: Value) -> Pith {
    let mut options = Options::faux(script);
    options
        .env
        .push(("HOME".into(), home.display().to_string()));
    options
        .agent_files
        .push(("settings.json".into(), settings.to_string()));
    options.args.extend(extra.iter().map(|a| a.to_string()));
    Pith::spawn(options).await
}

/// The first tool result of a run.
pub(crate) fn first_tool_result(end: &Value) -> Value {
    end["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "toolResult"))
        .cloned()
        .expect("a tool result in the run")
}

pub(crate) async fn bash(pith: &mut Pith, id: &str, command: &str) -> Value {
    let response = pith
        .call(id, json!({"type": "bash", "command": command}))
        .await;
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

/// True when the tests run as root (the namespace's covers are then empty, not closed).
pub(crate) fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

struct Places {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    outside: std::path::PathBuf,
}

/// A home and an outside directory, out of the temp dir (a writable root of the default
/// sandbox), as a user's home is.
fn places() -> Places {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY").unwrap();
    let outside = root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    Places {
        _dir: dir,
        home,
        outside,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_shell_is_held_to_the_mode_by_the_kernel() {
    assert!(
        pith::sandbox::kernel::landlock_abi().is_some(),
        "these machines have Landlock"
    );
    let at = places();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let settings = json!({"sandbox": {"writableRoots": [], "network": false}});
    let mut pith = pith_with(&at.home, settings.clone(), &[], json!([])).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sandbox"]["mode"], "workspace-write");
    assert!(
        state["data"]["sandbox"]["kernel"]
            .as_str()
            .unwrap()
            .starts_with("landlock v")
    );
    std::os::unix::fs::symlink(&at.outside, pith.work_dir().join("escape")).unwrap();
    let outside = at.outside.display();
    let cases = [
        (
            "touch",
            format!("touch {outside}/x && echo made"),
            "Permission denied",
        ),
        (
            "ssh",
            format!("cat {}/.ssh/id_test && echo made", at.home.display()),
            // The fallback's Landlock denies it; the namespace covers it with an empty
            // directory no one but root may open.
            if pith::sandbox::kernel::mechanism() == "landlock" || !is_root() {
                "Permission denied"
            } else {
                "No such file or directory"
            },
        ),
        (
            "symlink",
            "echo pwned > escape/through-link && echo made".to_string(),
            "Permission denied",
        ),
        (
            "network",
            format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
            "Permission denied",
        ),
    ];
    for (id, command, expected) in &cases {
        let data = bash(&mut pith, id, command).await;
        let output = data["output"].as_str().unwrap();
        assert!(
            output.contains(expected) && !output.contains("made") && !output.contains("connected"),
            "{id}: {data}"
        );
        assert_ne!(data["exitCode"], 0, "{id}: {data}");
    }
    assert!(!at.outside.join("x").exists());
    assert!(!at.outside.join("through-link").exists());
    // Inside the workspace, and reads elsewhere, work.
    let data = bash(
        &mut pith,
        "in",
        "echo ok > inside.txt && cat inside.txt && ls /usr >/dev/null && echo read",
    )
    .await;
    assert_eq!(data["output"], "ok\nread\n", "{data}");

    // The same under full-access.
    let mut full = pith_with(&at.home, settings, &["--sandbox", "full-access"], json!([])).await;
    std::os::unix::fs::symlink(&at.outside, full.work_dir().join("escape")).unwrap();
    for (id, command, _) in &cases {
        let data = bash(&mut full, id, command).await;
        assert_eq!(data["exitCode"], 0, "{id}: {data}");
    }
    assert!(at.outside.join("x").exists());
    drop(listener);
}

/// The `bash` tool's processes too, and its result says the sandbox may be why.
#[tokio::test(flavor = "multi_thread")]
async fn the_bash_tool_is_held_too_and_says_why() {
    let at = places();
    let outside = at.outside.display().to_string();
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": format!("touch {outside}/y")}}]},
        {"text": "done"}
    ]);
    let settings = json!({"sandbox": {"writableRoots": []}});
    let mut pith = pith_with(&at.home, settings, &[], script).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = first_tool_result(&end);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["isError"], true);
    assert!(text.contains("Permission denied"), "{text}");
    assert!(
        text.contains(&format!(
            "[sandbox] write to {outside}/y denied: outside the workspace in sandbox mode workspace-write"
        )) && text.contains("chown, chmod and sudo will not help"),
        "{text}"
    );
    assert!(!at.outside.join("y").exists());
}

/// `read-only`: the shell writes nowhere, not even in the workspace.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_shell() {
    let at = places();
    let mut pith = pith_with(&at.home, json!({}), &["--sandbox", "read-only"], json!([])).await;
    let data = bash(
        &mut pith,
        "w",
        "echo x > here.txt; ls /usr >/dev/null && echo read",
    )
    .await;
    let output = data["output"].as_str().unwrap();
    assert!(
        output.contains("Permission denied") && output.ends_with("read\n"),
        "{data}"
    );
    assert!(!pith.work_dir().join("here.txt").exists());
}

/// The Emacs client's contract: in the default mode the model reads a file in /tmp, made
/// after start, while `HOME` is a scratch directory under /tmp (as its harness sets it: /tmp
/// then holds the deny list's `~/.ssh`).
#[tokio::test(flavor = "multi_thread")]
async fn the_default_mode_reads_outside_the_workspace() {
    let scratch = tempfile::Builder::new()
        .prefix("pith-emacs-home")
        .tempdir_in("/tmp")
        .unwrap();
    let home = scratch.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY").unwrap();
    let dir = tempfile::Builder::new()
        .prefix("fake-tool")
        .tempdir_in("/tmp")
        .unwrap();
    let path = dir.path().join("made-after-start.txt");
    let shown = path.display().to_string();
    let script = json!([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": shown}}]},
        {"text": "read it"}
    ]);
    let mut pith = pith_with(&home, json!({}), &[], script).await;
    std::fs::write(&path, "from /tmp\n").unwrap();
    pith.call("p", json!({"type": "prompt", "message": "read the file"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = first_tool_result(&end);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "from /tmp\n");
}

/// `sandbox.approval: "on-escalation"`: a write beyond the mode is asked with a `confirm`
/// dialog; "no" leaves the file untouched, "yes" allows that one call.
#[tokio::test(flavor = "multi_thread")]
async fn an_escalation_is_asked_and_answered_both_ways() {
    let at = places();
    let refused = at.outside.join("refused.txt");
    let allowed = at.outside.join("allowed.txt");
    let script = json!([
        {"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": refused.display().to_string(), "content": "no"}}]},
        {"tool_calls": [{"id": "w2", "name": "write", "arguments": {"path": allowed.display().to_string(), "content": "yes"}}]},
        {"text": "done"}
    ]);
    let settings = json!({"sandbox": {"writableRoots": [], "approval": "on-escalation"}});
    let mut pith = pith_with(&at.home, settings, &[], script).await;
    pith.call("p", json!({"type": "prompt", "message": "write both"}))
        .await;
    for (answer, path) in [(false, &refused), (true, &allowed)] {
        let dialog = pith
            .wait_for(|f| f["type"] == "extension_ui_request" && f["method"] == "confirm")
            .await;
        assert_eq!(dialog["title"], "Allow the write tool beyond the sandbox?");
        let message = dialog["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "write to {} denied: outside the workspace in sandbox mode workspace-write",
                path.display()
            )),
            "{message}"
        );
        pith.send(
            json!({"type": "extension_ui_response", "id": dialog["id"], "confirmed": answer}),
        )
        .await;
        // Wait for this call's end before the next dialog.
        let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
        assert_eq!(end["isError"], !answer, "{end}");
        pith.frames
            .retain(|f| f["type"] != "tool_execution_end" && f["type"] != "extension_ui_request");
    }
    pith.until_agent_end().await;
    assert!(!refused.exists(), "a no leaves the file untouched");
    assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "yes");
}

/// `shellPath` (pi's setting) names the shell commands run in, and `shellCommandPrefix` goes
/// before each command (the `bash` command's and the bash tool's); a missing shell is an error
/// that names it, and the process keeps serving.
#[tokio::test(flavor = "multi_thread")]
async fn the_shell_path_setting_chooses_the_shell() {
    let at = places();
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo tool $X"}}]},
        {"text": "done"}
    ]);
    let settings = json!({"shellPath": "/bin/sh", "shellCommandPrefix": "X=prefixed"});
    let mut pith = pith_with(&at.home, settings, &[], script).await;
    let data = bash(&mut pith, "sh", "echo $0 $X").await;
    assert_eq!(data["output"], "/bin/sh prefixed\n", "{data}");
    pith.call("p", json!({"type": "prompt", "message": "run it"}))
        .await;
    let end = pith.until_agent_end().await;
    assert_eq!(
        first_tool_result(&end)["content"][0]["text"],
        "tool prefixed\n",
        "{end}"
    );
    let mut missing = pith_with(
        &at.home,
        json!({"shellPath": "/nowhere/bash"}),
        &[],
        json!([]),
    )
    .await;
    let response = missing
        .call("b", json!({"type": "bash", "command": "echo hi"}))
        .await;
    assert_eq!(response["success"], false, "{response}");
    assert!(
        response["error"]
            .as_str()
            .unwrap_or("")
            .contains("Custom shell path not found: /nowhere/bash (shellPath in settings.json)"),
        "{response}"
    );
    let state = missing.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true, "{state}");
}
