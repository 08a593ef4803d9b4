//! `get_argument_completions`: an extension's own completions for its command (the optional
//! `completions` export), file paths for prompt templates, and clear errors.

use serde_json::json;

use crate::support;
use crate::support::rpc::{Options, Pith};

#[tokio::test(flavor = "multi_thread")]
async fn commands_complete_their_arguments() {
    let plugins = support::plugins_dir_with(&["examples/hello-extension"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files.push((
        "prompts/review.md".into(),
        "---\ndescription: Review a file\n---\nReview $1\n".into(),
    ));
    options.work_files.extend([
        ("notes.md".into(), "".into()),
        ("src/main.rs".into(), "".into()),
    ]);
    let mut pith = Pith::spawn(options).await;

    let hello = pith
        .call(
            "h",
            json!({"type": "get_argument_completions", "commandName": "hello", "argumentPrefix": "w"}),
        )
        .await;
    assert_eq!(
        hello["data"],
        json!({"completions": [
            {"value": "world", "description": "Say hello to world"},
            {"value": "wasm", "description": "Say hello to wasm"}
        ]}),
        "{hello}"
    );
    let review = pith
        .call(
            "r",
            json!({"type": "get_argument_completions", "commandName": "/review", "argumentPrefix": "no"}),
        )
        .await;
    assert_eq!(
        review["data"],
        json!({"completions": [{"value": "notes.md", "label": "notes.md"}]}),
        "{review}"
    );
    let nested = pith
        .call(
            "n",
            json!({"type": "get_argument_completions", "commandName": "review", "argumentPrefix": "src/"}),
        )
        .await;
    assert_eq!(
        nested["data"]["completions"][0]["value"], "src/main.rs",
        "{nested}"
    );

    let unknown = pith
        .call(
            "u",
            json!({"type": "get_argument_completions", "commandName": "nope"}),
        )
        .await;
    assert_eq!(unknown["success"], false);
    assert_eq!(
        unknown["error"],
        "Unknown command: nope (get_commands lists the commands)"
    );
    let missing = pith
        .call("m", json!({"type": "get_argument_completions"}))
        .await;
    assert_eq!(missing["error"], "Missing required field \"commandName\"");
}

/// An extension built against the package before `completions` existed (the example
/// hello-extension at commit fa29cdb, kept in `tests/fixtures/components/`) still loads and
/// runs; its command simply has no completions.
#[tokio::test(flavor = "multi_thread")]
async fn an_extension_built_before_completions_still_loads() {
    let plugins = tempfile::tempdir().unwrap();
    std::fs::copy(
        support::repo_root()
            .join("tests/fixtures/components/hello_extension_before_completions.wasm"),
        plugins.path().join("hello_extension.wasm"),
    )
    .unwrap();
    std::fs::copy(
        support::repo_root().join("plugins/examples/hello-extension/pith.toml"),
        plugins.path().join("hello_extension.toml"),
    )
    .unwrap();
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    let plugins_json = pith.call("g", json!({"type": "get_plugins"})).await;
    assert!(
        plugins_json["data"]["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "hello-extension"),
        "{plugins_json}"
    );
    let none = pith
        .call(
            "c",
            json!({"type": "get_argument_completions", "commandName": "hello", "argumentPrefix": "w"}),
        )
        .await;
    assert_eq!(none["data"], json!({"completions": []}), "{none}");
    pith.call("h", json!({"type": "prompt", "message": "/hello old"}))
        .await;
    pith.since_sent(|f| f["method"] == "notify" && f["message"] == "hello old (#1)")
        .await;
}
