//! Hot reload over the real pipes: plugin files replaced (with a good and with a broken build),
//! deleted and added while pith serves; calls in flight never fail.

use crate::support;

use std::path::Path;

use crate::support::rpc::{Options, Pith, tool_results};
use serde_json::{Value, json};

/// Replaces `target` atomically with `bytes` (written beside it, then renamed over it).
fn replace(target: &Path, bytes: &[u8]) {
    let temporary = target.with_extension("partial");
    std::fs::write(&temporary, bytes).unwrap();
    std::fs::rename(&temporary, target).unwrap();
}

async fn spawn(script: Value) -> (Pith, tempfile::TempDir) {
    let plugins = support::plugins_dir_with(&["examples/word-count"]);
    let pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        ..Options::faux(script)
    })
    .await;
    std::fs::write(pith.work_dir().join("notes.txt"), "a b c\n").unwrap();
    (pith, plugins)
}

/// A run keeps the plugin versions it started with (the tools the model was shown are the ones
/// that run); the new version serves from the next run, and no call fails.
#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_plugin_serves_its_new_version_from_the_next_run_without_failing_a_call() {
    let mut turns: Vec<Value> = (0..60)
        .map(|i| json!({"first_delay_ms": 25, "tool_calls": [{"id": format!("w{i}"), "name": "word_count", "arguments": {"path": "notes.txt"}}]}))
        .collect();
    turns.push(json!({"text": "counted"}));
    turns.push(json!({"tool_calls": [{"id": "next", "name": "word_count", "arguments": {"path": "notes.txt"}}]}));
    turns.push(json!({"text": "counted again"}));
    let (mut pith, plugins) = spawn(json!(turns)).await;
    pith.call("p", json!({"type": "prompt", "message": "count in a loop"}))
        .await;
    pith.wait_for(|f| f["type"] == "tool_execution_end").await;
    let v2 = std::fs::read(support::built_component("word-count-v2")).unwrap();
    replace(&plugins.path().join("word-count.wasm"), &v2);
    let changed = pith.wait_for(|f| f["type"] == "plugins_changed").await;
    assert_eq!(changed["updated"], json!(["word-count"]), "{changed}");
    assert_eq!(changed["added"], json!([]));
    assert_eq!(changed["removed"], json!([]));
    let end = pith.until_agent_end().await;
    let results = tool_results(&end);
    assert_eq!(results.len(), 60);
    for result in &results {
        assert_eq!(result["isError"], false, "{result}");
    }
    let text = |r: &Value| r["content"][0]["text"].as_str().unwrap().to_string();
    assert!(
        results
            .iter()
            .all(|r| text(r) == "1 lines, 3 words, 6 bytes"),
        "the run calls the version it started with"
    );
    pith.call("p2", json!({"type": "prompt", "message": "count again"}))
        .await;
    let next = tool_results(&pith.until_agent_end().await);
    assert_eq!(text(&next[0]), "v2: 1 lines, 3 words, 6 bytes");
}

/// Runs one prompt whose answer calls `word_count`; the call's result.
async fn count(pith: &mut Pith, id: &str) -> Value {
    pith.call(id, json!({"type": "prompt", "message": "count"}))
        .await;
    let end = pith.until_agent_end().await;
    tool_results(&end)[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_build_keeps_the_old_version_and_removal_and_addition_apply() {
    let mut turns = Vec::new();
    for i in 0..4 {
        turns.push(json!({"tool_calls": [{"id": format!("w{i}"), "name": "word_count", "arguments": {"path": "notes.txt"}}]}));
        turns.push(json!({"text": "done"}));
    }
    let (mut pith, plugins) = spawn(json!(turns)).await;
    let first = count(&mut pith, "a").await;
    assert_eq!(first["content"][0]["text"], "1 lines, 3 words, 6 bytes");

    let component = plugins.path().join("word-count.wasm");
    replace(&component, b"\0asm this is not a component");
    let error = pith.wait_for(|f| f["type"] == "extension_error").await;
    assert_eq!(error["event"], "reload");
    assert!(
        error["extensionPath"]
            .as_str()
            .unwrap()
            .contains("word-count"),
        "{error}"
    );
    let kept = count(&mut pith, "b").await;
    assert_eq!(
        kept["isError"], false,
        "the old version keeps serving: {kept}"
    );
    assert_eq!(kept["content"][0]["text"], "1 lines, 3 words, 6 bytes");

    std::fs::remove_file(&component).unwrap();
    std::fs::remove_file(plugins.path().join("word-count.toml")).unwrap();
    let removed = pith.wait_for(|f| f["type"] == "plugins_changed").await;
    assert_eq!(removed["removed"], json!(["word-count"]), "{removed}");
    let gone = count(&mut pith, "c").await;
    assert_eq!(gone["content"][0]["text"], "Tool word_count not found");

    support::install_plugin(plugins.path(), "examples/word-count");
    let added = pith.wait_for(|f| f["type"] == "plugins_changed").await;
    assert_eq!(added["added"], json!(["word-count"]), "{added}");
    let back = count(&mut pith, "d").await;
    assert_eq!(back["content"][0]["text"], "1 lines, 3 words, 6 bytes");
    let listed = pith.call("l", json!({"type": "get_plugins"})).await;
    assert!(
        listed["data"]["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "word-count")
    );
}
