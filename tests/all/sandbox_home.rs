//! The sandbox in directories that hold a denied path, as users' setups are: the home
//! directory as the workspace, `ls ~` from a project, a file made after start beside a denied
//! path, and `HOME` under the temp dir (as test harnesses set it). Each runs with the namespace
//! mechanism and again with it forced off (Landlock alone); the promises that hold in both are
//! checked in both, and each refusal's text names the path, the reason and the fix.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::sandbox::{bash, first_tool_result};
use crate::support::rpc::{Options, Pith};

/// Every tool result of a run, in order.
fn tool_results(end: &Value) -> Vec<Value> {
    end["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "toolResult")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A home with a key in `.ssh`, under a fresh directory out of the temp dir.
fn home() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = dir.path().canonicalize().unwrap().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY").unwrap();
    std::fs::write(home.join(".bashrc"), "# the user's\n").unwrap();
    (dir, home)
}

/// pith started in `start` with `HOME` at `home` (and the variables `env`), the namespace
/// mechanism on or forced off.
async fn pith_in(
    home: &Path,
    start: &Path,
    namespaces: bool,
    env: &[(&str, &Path)],
    script: Value,
) -> Pith {
    let mut options = Options::faux(script);
    options
        .args
        .extend(["--tools".into(), "read,write,edit,ls,bash".into()]);
    options.start_in = Some(start.to_path_buf());
    options
        .env
        .push(("HOME".into(), home.display().to_string()));
    for (name, value) in env {
        options
            .env
            .push((name.to_string(), value.display().to_string()));
    }
    if !namespaces {
        options
            .env
            .push(("PITH_SANDBOX_NAMESPACES".into(), "0".into()));
    }
    Pith::spawn(options).await
}

async fn home_as_the_workspace(namespaces: bool) {
    let (_dir, home) = home();
    let script = json!([
        {"tool_calls": [
            {"id": "w", "name": "write", "arguments": {"path": "notes.txt", "content": "hello\n"}}
        ]},
        {"tool_calls": [
            {"id": "e", "name": "edit", "arguments": {"path": "notes.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}}
        ]},
        {"tool_calls": [
            {"id": "l", "name": "ls", "arguments": {"path": "."}},
            {"id": "later", "name": "read", "arguments": {"path": "later.txt"}},
            {"id": "k", "name": "read", "arguments": {"path": ".ssh/id_test"}},
            {"id": "rc", "name": "write", "arguments": {"path": ".bashrc", "content": "evil\n"}}
        ]},
        {"text": "done"}
    ]);
    let mut pith = pith_in(&home, &home, namespaces, &[], script).await;
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let mechanism = state["data"]["sandbox"]["mechanism"].as_str().unwrap_or("");
    assert_eq!(
        mechanism,
        if namespaces {
            "namespace+landlock"
        } else {
            "landlock"
        },
        "{state}"
    );
    // Made after start, directly in the directory that holds the denied path.
    std::fs::write(home.join("later.txt"), "made after start\n").unwrap();
    pith.call("p", json!({"type": "prompt", "message": "work in home"}))
        .await;
    let end = pith.until_agent_end().await;
    let results = tool_results(&end);
    assert_eq!(results.len(), 6, "{end}");
    let [write, edit, list, later, key, rc] = &results[..] else {
        unreachable!()
    };
    assert_eq!(write["isError"], false, "{write}");
    assert_eq!(edit["isError"], false, "{edit}");
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "bye\n"
    );
    let listing = text(list);
    assert!(
        listing.contains("notes.txt") && !listing.contains(".ssh"),
        "{listing}"
    );
    assert_eq!(text(later), "made after start\n", "{later}");
    assert_eq!(key["isError"], true);
    assert_eq!(
        text(key),
        format!(
            "read of {}/.ssh/id_test denied: it is on the sandbox's deny list (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
            home.display()
        )
    );
    assert_eq!(rc["isError"], true);
    assert!(
        text(rc).starts_with(&format!(
            "write to {}/.bashrc denied: the sandbox never lets",
            home.display()
        )),
        "{}",
        text(rc)
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# the user's\n"
    );

    // The shell: list in home and read the file made after start; with the namespace, create
    // there too (Landlock alone cannot grant a directory that holds a denied path without
    // granting that path: the fallback refuses new files directly in it). The key stays out
    // of reach and .bashrc unwritten either way.
    let data = bash(
        &mut pith,
        "sh",
        "echo hi > notes2.txt; ls; cat later.txt; cat .ssh/id_test; echo evil >> .bashrc; echo END",
    )
    .await;
    let output = data["output"].as_str().unwrap();
    assert!(output.contains("notes.txt\n"), "{output}");
    assert!(output.contains("made after start\n"), "{output}");
    assert!(!output.contains("PRIVATE KEY"), "{output}");
    // (stderr and stdout are two pipes: a refusal's line may come after END.)
    assert!(output.contains("END\n"), "{output}");
    if namespaces {
        assert!(output.contains("notes.txt\nnotes2.txt\n"), "{output}");
        assert_eq!(
            std::fs::read_to_string(home.join("notes2.txt")).unwrap(),
            "hi\n"
        );
    } else {
        assert!(output.contains("Permission denied"), "{output}");
        assert!(!home.join("notes2.txt").exists());
    }
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# the user's\n"
    );
    // `ls ~` works from anywhere.
    let data = bash(&mut pith, "ls", "ls ~").await;
    assert_eq!(data["exitCode"], 0, "{data}");
}

/// The home directory as the workspace: the tools and the shell create, edit and list files
/// in it, read a file made after start, and never reach `~/.ssh` or write `~/.bashrc`.
#[tokio::test(flavor = "multi_thread")]
async fn the_home_directory_as_the_workspace() {
    home_as_the_workspace(true).await;
}

/// The same with the namespace mechanism forced off: Landlock alone.
#[tokio::test(flavor = "multi_thread")]
async fn the_home_directory_as_the_workspace_without_namespaces() {
    home_as_the_workspace(false).await;
}

async fn home_under_the_temp_dir(namespaces: bool) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let tmp = root.join("tmp");
    let home = tmp.join("home");
    let work = root.join("work");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY").unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let out = tmp.join("out.txt").display().to_string();
    let script = json!([
        {"tool_calls": [{"id": "w", "name": "write", "arguments": {"path": out, "content": "x\n"}}]},
        {"text": "done"}
    ]);
    let mut pith = pith_in(&home, &work, namespaces, &[("TMPDIR", &tmp)], script).await;
    pith.call("p", json!({"type": "prompt", "message": "write to tmp"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = first_tool_result(&end);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(std::fs::read_to_string(tmp.join("out.txt")).unwrap(), "x\n");
    let data = bash(
        &mut pith,
        "sh",
        "echo y > \"$TMPDIR/out2.txt\" && cat \"$TMPDIR/out2.txt\"; cat ~/.ssh/id_test; echo END",
    )
    .await;
    let output = data["output"].as_str().unwrap();
    assert!(!output.contains("PRIVATE KEY"), "{output}");
    if namespaces {
        // The shell's output and errors are read as they come: the key's refusal may be first.
        assert!(output.lines().any(|line| line == "y"), "{output}");
    } else {
        // Landlock alone cannot grant the temp dir without the home in it: the shell's new
        // files there are refused (the file tools' are not).
        assert!(output.contains("Permission denied"), "{output}");
    }
}

/// `HOME` under the temp dir (a writable root): writes to the temp dir work with the tools
/// and the shell, and the key under it stays out of reach.
#[tokio::test(flavor = "multi_thread")]
async fn home_under_the_temp_dir_keeps_the_temp_dir_writable() {
    home_under_the_temp_dir(true).await;
}

/// The same with the namespace mechanism forced off.
#[tokio::test(flavor = "multi_thread")]
async fn home_under_the_temp_dir_without_namespaces() {
    home_under_the_temp_dir(false).await;
}
