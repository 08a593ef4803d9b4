//! The binary's command line: help, version, usage errors, `pith plugins`, `pith tool`, and
//! signals.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn pith(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(args)
        .current_dir(dir)
        .env("PITH_AGENT_DIR", dir.join("agent"))
        .env("PITH_CACHE_DIR", support::shared_cache())
        .output()
        .expect("run pith")
}

#[test]
fn help_version_and_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let help = pith(&["--help"], dir.path());
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("pith --mode rpc [options]"));
    let version = pith(&["--version"], dir.path());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("pith {}", env!("CARGO_PKG_VERSION"))
    );
    let unknown = pith(&["--mode", "rpc", "--frobnicate"], dir.path());
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).starts_with("pith: unknown option --frobnicate")
    );
    assert!(unknown.stdout.is_empty());
    let missing = pith(
        &["--mode", "rpc", "--plugins-dir", "no-such-dir"],
        dir.path(),
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("--plugins-dir no-such-dir: no such directory"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
    let mode = pith(&["--mode", "json"], dir.path());
    assert_eq!(mode.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&mode.stderr).contains("--mode json is not supported"));
    let model = pith(
        &["--mode", "rpc", "--model", "no-such-model-anywhere"],
        dir.path(),
    );
    assert_eq!(model.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&model.stderr)
            .contains("Model \"no-such-model-anywhere\" not found")
    );
}

#[test]
fn plugins_lists_kinds_versions_sources_and_grants() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        support::built_component("word-count"),
        plugins.join("word_count.wasm"),
    )
    .unwrap();
    std::fs::copy(
        support::repo_root().join("plugins/examples/word-count/pith.toml"),
        plugins.join("word_count.toml"),
    )
    .unwrap();
    let out = pith(
        &[
            "plugins",
            "--json",
            "--plugins-dir",
            plugins.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let find = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {list}"))
    };
    let faux = find("faux");
    assert_eq!(faux["kinds"], json!(["provider"]));
    assert_eq!(faux["origin"], "embedded");
    assert_eq!(faux["granted"]["config"], json!(["PITH_FAUX_SCRIPT"]));
    let word_count = find("word-count");
    assert_eq!(word_count["version"], "0.1.0");
    assert_eq!(word_count["origin"], "flag");
    assert_eq!(word_count["tools"], json!(["word_count"]));
    assert_eq!(
        word_count["granted"],
        json!({"workspace": "read", "http": [], "config": [], "process": false})
    );

    std::fs::write(dir.path().join("a.txt"), "x y\n").unwrap();
    let call = pith(
        &[
            "tool",
            "word_count",
            "{\"path\":\"a.txt\"}",
            "--plugins-dir",
            plugins.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(call.status.success());
    let result: Value = serde_json::from_slice(&call.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "1 lines, 2 words, 4 bytes");
    let bad = pith(&["tool", "word_count", "[1]"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn sigterm_ends_the_process_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!([{"text": "slow", "chunks": 4, "delay_ms": 5000}]).to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "--mode",
            "rpc",
            "--provider",
            "faux",
            "--model",
            "faux-model",
            "--no-session",
        ])
        .current_dir(dir.path())
        .env("PITH_AGENT_DIR", dir.path().join("agent"))
        .env("PITH_CACHE_DIR", support::shared_cache())
        .env("PITH_FAUX_SCRIPT", script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::{BufRead, BufReader, Write};
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"p\",\"type\":\"prompt\",\"message\":\"go\"}\n")
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("text_start")
        && !line.contains("\"message_start\",\"message\":{\"role\":\"assistant\"")
    {
        line.clear();
        reader.read_line(&mut line).unwrap();
    }
    let started = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc_kill(child.id() as i32, 15);
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(0));
    // The run was aborted and its end flushed.
    assert!(rest.contains("\"stopReason\":\"aborted\""), "{rest}");
    assert!(rest.contains("\"type\":\"agent_end\""), "{rest}");
    drop(stdin);
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}
