//! pi's example extensions ported to pith's SDK (`plugins/examples/`), over the real binary
//! with the same scripted model, doing what pi's originals do.

use crate::extensions::notified;
use crate::support;
use crate::support::rpc::{Options, Pith};
use serde_json::json;
use std::process::Command;

/// `git` with `args` in `dir`; its trimmed stdout.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_commit_on_exit_commits_the_work_named_after_the_last_answer() {
    let plugins = support::plugins_dir_with(&["examples/auto-commit-on-exit"]);
    let mut options = Options::faux(json!([{"text": "Fixed the widget\nwith details below"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = vec![(
        "settings.json".into(),
        json!({"plugins": {"auto-commit-on-exit": {"grant": {"process": true}}}}).to_string(),
    )];
    let mut pith = Pith::spawn(options).await;
    let work = pith.work_dir();
    git(&work, &["init", "-q"]);
    git(&work, &["config", "user.email", "test@example.com"]);
    git(&work, &["config", "user.name", "Test"]);
    std::fs::write(work.join("widget.txt"), "fixed\n").unwrap();

    pith.call("p", json!({"type": "prompt", "message": "fix the widget"}))
        .await;
    pith.until_agent_end().await;
    // The end of the session: pi's `session_shutdown`, awaited before the process exits.
    pith.close_stdin();
    assert_eq!(
        notified(&mut pith, "Auto-committed").await,
        "Auto-committed: [pi] Fixed the widget"
    );
    assert_eq!(pith.exit_code().await, Some(0));
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s"]),
        "[pi] Fixed the widget"
    );
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn bookmark_labels_the_last_answer_and_removes_it() {
    let plugins = support::plugins_dir_with(&["examples/bookmark"]);
    let mut options = Options::faux(json!([{"text": "an answer worth keeping"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    pith.call("n", json!({"type": "prompt", "message": "/bookmark"}))
        .await;
    assert_eq!(
        notified(&mut pith, "No assistant").await,
        "No assistant message to bookmark"
    );
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    pith.call(
        "b",
        json!({"type": "prompt", "message": "/bookmark keeper"}),
    )
    .await;
    assert_eq!(
        notified(&mut pith, "Bookmarked").await,
        "Bookmarked as: keeper"
    );
    let tree = pith.call("t", json!({"type": "get_tree"})).await;
    assert_eq!(
        answer_label(&tree["data"]["tree"]),
        Some(json!("keeper")),
        "{tree}"
    );
    pith.call("u", json!({"type": "prompt", "message": "/unbookmark"}))
        .await;
    assert_eq!(
        notified(&mut pith, "Removed").await,
        "Removed bookmark: keeper"
    );
    let tree = pith.call("t2", json!({"type": "get_tree"})).await;
    assert_eq!(answer_label(&tree["data"]["tree"]), None, "{tree}");
}

/// The label of the answer's node in a `get_tree` tree, if it has one.
fn answer_label(nodes: &serde_json::Value) -> Option<serde_json::Value> {
    nodes.as_array()?.iter().find_map(|node| {
        if node["entry"]["message"]["role"] == "assistant" {
            return node.get("label").cloned();
        }
        answer_label(&node["children"])
    })
}
