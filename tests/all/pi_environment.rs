//! What a pi user's scripts and flags rely on, over the real binary: the bash tool's children
//! get pi's session variables, and `--tools` takes pi's `+name` / `-name` forms and short
//! spellings.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn the_shell_gets_pis_session_variables() {
    let command = "echo \"$AI_AGENT|$PI_CODING_AGENT|$PI_SESSION_ID|$PI_PROVIDER|$PI_MODEL|$PI_REASONING_LEVEL\"";
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "call_1", "name": "bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ]))
    .await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.args.extend([
        "--session-id".into(),
        "0199aaaa-0000-7000-8000-0000000000aa".into(),
    ]);
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "env"}))
        .await;
    let end = pith.until_agent_end().await;
    let text = support::rpc::tool_results(&end)[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        text,
        "pi|true|0199aaaa-0000-7000-8000-0000000000aa|fake|fake-model|off\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_take_pis_plus_and_minus_forms() {
    let active = |extra: &'static [&'static str]| async move {
        let server = FakeLlm::start(json!([])).await;
        let mut options = anthropic_fake(&server.url, "fake-model");
        options.args.extend(extra.iter().map(|a| a.to_string()));
        let mut pith = Pith::spawn(options).await;
        let listed = pith.call("t", json!({"type": "get_tools"})).await;
        let mut names: Vec<String> = listed["data"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["active"] == true)
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        active(&["--tools", "+ls,-write"]).await,
        ["bash", "edit", "ls", "read"]
    );
    assert_eq!(active(&["-t", "read,grep"]).await, ["grep", "read"]);
    assert_eq!(active(&["-xt", "bash"]).await, ["edit", "read", "write"]);
    assert!(active(&["-nbt"]).await.is_empty());
}

/// `-e` of a path that is not there stops with exit 1 and says so, as pi does (it ran without
/// the extension before).
#[test]
fn a_missing_extension_path_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["--mode", "rpc", "-e", "no-such-plugin"])
        .current_dir(dir.path())
        .env("PITH_AGENT_DIR", dir.path().join("agent"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("-e no-such-plugin: no such file or directory"),
        "{stderr}"
    );
}

/// `PI_CACHE_RETENTION=long`, as pi 1.5.2 reads it: Anthropic's cache breakpoints keep the
/// prefix an hour (`ttl: "1h"` on the system prompt, the tools and the last user message);
/// without it they are plain `ephemeral`.
#[tokio::test(flavor = "multi_thread")]
async fn pi_cache_retention_long_keeps_the_prefix_an_hour() {
    for (value, ttl) in [(Some("long"), Some("1h")), (None, None)] {
        let server = FakeLlm::start(json!([{"text": "ok"}])).await;
        let mut options = anthropic_fake(&server.url, "fake-model");
        if let Some(value) = value {
            options
                .env
                .push(("PI_CACHE_RETENTION".into(), value.into()));
        }
        options.env_remove.push("PI_CACHE_RETENTION".into());
        let mut pith = Pith::spawn(options).await;
        pith.call("p", json!({"type": "prompt", "message": "hello"}))
            .await;
        pith.until_agent_end().await;
        let body = &server.requests()[0]["body"];
        let controls = [
            &body["system"][0]["cache_control"],
            &body["tools"].as_array().unwrap().last().unwrap()["cache_control"],
            &body["messages"][0]["content"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["cache_control"],
        ];
        for control in controls {
            assert_eq!(control["type"], "ephemeral", "{body}");
            assert_eq!(control.get("ttl").and_then(|t| t.as_str()), ttl, "{body}");
        }
    }
}
