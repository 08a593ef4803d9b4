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
        String::from_utf8_lossy(&unknown.stderr)
            .starts_with("pith: unknown option(s): --frobnicate")
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
    let mode = pith(&["--mode", "tui"], dir.path());
    assert_eq!(mode.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&mode.stderr).contains("--mode tui is not supported"));
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

/// A temporary directory with a `plugins/` holding the word-count component (the caller
/// writes its manifest).
fn word_count_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        support::built_component("word-count"),
        plugins.join("word_count.wasm"),
    )
    .unwrap();
    (dir, plugins)
}

#[test]
fn plugins_lists_kinds_versions_sources_and_grants() {
    let (dir, plugins) = word_count_dir();
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
        json!({"workspace": "read", "http": [], "config": [], "process": false, "models": false, "providers": false, "dirs": []})
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

/// Runs `pith --mode rpc` with `args` in `dir`, sends `lines` and closes stdin; returns the
/// exit code, the frames and stderr.
fn rpc_once(
    args: &[&str],
    dir: &std::path::Path,
    env: &[(&str, &str)],
    lines: &[Value],
) -> (Option<i32>, Vec<Value>, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["--mode", "rpc"])
        .args(args)
        .current_dir(dir)
        .env("PITH_AGENT_DIR", dir.join("agent"))
        .env("PITH_CACHE_DIR", support::shared_cache())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pith");
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        // A process that exited at startup has closed its stdin.
        let _ = writeln!(stdin, "{line}");
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let frames = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (
        output.status.code(),
        frames,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn protocol_profiles_are_chosen_by_flag_environment_or_settings() {
    let dir = tempfile::tempdir().unwrap();
    let faux = [
        "--provider",
        "faux",
        "--model",
        "faux-model",
        "--no-session",
    ];
    let known = "the known versions are 1.5 (the default) and 0.73";
    let (code, frames, stderr) = rpc_once(
        &[&faux[..], &["--pi-protocol", "0.9"]].concat(),
        dir.path(),
        &[],
        &[],
    );
    assert_eq!(code, Some(1));
    assert!(frames.is_empty());
    assert!(
        stderr.contains("unknown pi protocol version \"0.9\"") && stderr.contains(known),
        "{stderr}"
    );
    let (code, _, stderr) = rpc_once(&faux, dir.path(), &[("PITH_PI_PROTOCOL", "2")], &[]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains(known), "{stderr}");
    std::fs::create_dir_all(dir.path().join("agent")).unwrap();
    std::fs::write(
        dir.path().join("agent/settings.json"),
        json!({"rpc": {"protocol": "0.73"}}).to_string(),
    )
    .unwrap();
    let prompt = json!({"id": "p", "type": "prompt", "message": "hi"});
    // Settings choose 0.73: a prompt's response has no disposition, there is no agent_settled.
    let (code, frames, _) = rpc_once(&faux, dir.path(), &[], std::slice::from_ref(&prompt));
    assert_eq!(code, Some(0));
    assert_eq!(
        frames[0],
        json!({"id": "p", "type": "response", "command": "prompt", "success": true})
    );
    assert!(!frames.iter().any(|f| f["type"] == "agent_settled"));
    // The environment overrides the settings, and the flag the environment.
    let (_, frames, _) = rpc_once(
        &faux,
        dir.path(),
        &[("PITH_PI_PROTOCOL", "1.5")],
        std::slice::from_ref(&prompt),
    );
    assert_eq!(frames[0]["data"], json!({"disposition": "started"}));
    assert_eq!(frames.last().unwrap()["type"], "agent_settled");
    let (_, frames, _) = rpc_once(
        &[&faux[..], &["--pi-protocol", "0.73"]].concat(),
        dir.path(),
        &[("PITH_PI_PROTOCOL", "1.5")],
        std::slice::from_ref(&prompt),
    );
    assert!(frames[0].get("data").is_none(), "{}", frames[0]);
}

#[test]
fn pi_1_5_flags() {
    let dir = tempfile::tempdir().unwrap();
    // `--provider` alone is pi 1.5's startup error.
    let (code, _, stderr) = rpc_once(&["--provider", "faux"], dir.path(), &[], &[]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(
            "--provider requires --model (for example: --provider faux --model <pattern>)"
        ),
        "{stderr}"
    );
    // The project's own resources load only with --approve; without it, stderr says so.
    std::fs::create_dir_all(dir.path().join(".pi/prompts")).unwrap();
    std::fs::write(dir.path().join(".pi/prompts/fix.md"), "Fix it\n").unwrap();
    let state = json!({"id": "s", "type": "get_state"});
    let commands = json!({"id": "c", "type": "get_commands"});
    let args = [
        "--provider",
        "faux",
        "--model",
        "faux-model",
        "--no-session",
        "--no-mcp",
        "-n",
        "named at startup",
        "--session-id",
        "0199aaaa-0000-7000-8000-000000000001",
        "--exclude-tools",
        "ed*",
    ];
    let (code, frames, stderr) =
        rpc_once(&args, dir.path(), &[], &[state.clone(), commands.clone()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "the project's own prompt templates (.pi/prompts) are not loaded: pass --approve (-a)"
        ),
        "{stderr}"
    );
    // Commands are answered concurrently: the responses are found by id.
    let by_id = |id: &str| frames.iter().find(|f| f["id"] == id).unwrap().clone();
    assert_eq!(by_id("s")["data"]["sessionName"], "named at startup");
    assert_eq!(
        by_id("s")["data"]["sessionId"],
        "0199aaaa-0000-7000-8000-000000000001"
    );
    assert_eq!(by_id("c")["data"]["commands"], json!([]));
    for approve in ["-a", "--approve"] {
        let (_, frames, stderr) = rpc_once(
            &[&args[..], &[approve]].concat(),
            dir.path(),
            &[],
            std::slice::from_ref(&commands),
        );
        assert!(!stderr.contains("not loaded"), "{stderr}");
        assert_eq!(frames[0]["data"]["commands"][0]["name"], "fix");
    }
    let (_, frames, _) = rpc_once(
        &[&args[..], &["-a", "-na"]].concat(),
        dir.path(),
        &[],
        &[commands],
    );
    assert_eq!(
        frames[0]["data"]["commands"],
        json!([]),
        "the last of -a and -na wins"
    );
}

#[test]
fn trust_is_remembered_and_the_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".pi/prompts")).unwrap();
    std::fs::write(dir.path().join(".pi/prompts/fix.md"), "Fix it\n").unwrap();
    let faux = [
        "--provider",
        "faux",
        "--model",
        "faux-model",
        "--no-session",
    ];
    let commands = json!({"id": "c", "type": "get_commands"});
    let state = json!({"id": "s", "type": "get_state"});
    let listed = |extra: &[&str]| {
        let (_, frames, _) = rpc_once(
            &[&faux[..], extra].concat(),
            dir.path(),
            &[],
            &[commands.clone(), state.clone()],
        );
        let by_id = |id: &str| frames.iter().find(|f| f["id"] == id).unwrap().clone();
        (
            by_id("c")["data"]["commands"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["sourceInfo"]["source"] != "builtin")
                .count(),
            by_id("s")["data"]["project"].clone(),
        )
    };
    assert_eq!(
        listed(&[]),
        (
            0,
            json!({"trusted": false, "notLoaded": ["prompt templates (.pi/prompts)"]})
        )
    );
    let trust = pith(&["trust"], dir.path());
    assert!(trust.status.success());
    assert!(String::from_utf8_lossy(&trust.stdout).contains("is trusted"));
    assert_eq!(listed(&[]), (1, json!({"trusted": true, "notLoaded": []})));
    assert_eq!(listed(&["--no-approve"]).0, 0, "the flag wins for this run");
    assert!(pith(&["untrust"], dir.path()).status.success());
    assert_eq!(listed(&[]).0, 0);
    assert_eq!(listed(&["-a"]).0, 1);
}

/// A project's own plugin (`.pith/plugins/`) loads only in a trusted project.
#[test]
fn an_untrusted_projects_plugin_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    support::install_plugin(
        &{
            let project_plugins = dir.path().join(".pith/plugins");
            std::fs::create_dir_all(&project_plugins).unwrap();
            project_plugins
        },
        "examples/word-count",
    );
    let listed = |extra: &[&str]| {
        let out = pith(&[&["plugins", "--json"][..], extra].concat(), dir.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        let found = list
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == "word-count");
        (found, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (found, stderr) = listed(&[]);
    assert!(!found);
    assert!(
        stderr.contains(
            "the project's own plugins (.pith/plugins) are not loaded: pass --approve (-a)"
        ),
        "{stderr}"
    );
    assert!(listed(&["--approve"]).0);
}

/// A tool whose manifest declares no workspace access fails to read with a hint naming the
/// grant it lacks, not a bare WASI error number.
#[test]
fn a_missing_workspace_grant_is_named() {
    let (dir, plugins) = word_count_dir();
    std::fs::write(
        plugins.join("word_count.toml"),
        "id = \"word-count\"\nversion = \"0.1.0\"\nkind = \"tool\"\n",
    )
    .unwrap();
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
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&call.stdout),
        String::from_utf8_lossy(&call.stderr)
    );
    assert!(
        out.contains("this plugin has no workspace grant (add `workspace = \\\"read\\\"` under [capabilities] in its pith.toml)"),
        "{out}"
    );
}

/// `PITH_FAUX_SCRIPT` naming a script file replays that file (the README's demo).
#[test]
fn the_faux_script_may_be_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"[{"text": "from the file"}]"#).unwrap();
    let run = |value: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_pith"))
            .args(["-p", "hi", "--provider", "faux", "--model", "faux-model"])
            .args(["--no-session"])
            .current_dir(dir.path())
            .env("PITH_AGENT_DIR", dir.path().join("agent"))
            .env("PITH_CACHE_DIR", support::shared_cache())
            .env("PITH_FAUX_SCRIPT", value)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let answered = run(&script);
    assert_eq!(String::from_utf8_lossy(&answered.stdout), "from the file\n");
    let missing = run(&dir.path().join("no-such-script.json"));
    assert!(
        String::from_utf8_lossy(&missing.stderr)
            .contains("PITH_FAUX_SCRIPT is neither JSON nor a readable file"),
        "{}",
        String::from_utf8_lossy(&missing.stderr)
    );
}

/// An argument that is not UTF-8 is a usage error (exit 2), not a panic.
#[test]
fn a_non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_pith"))
        .arg("-p")
        .arg(std::ffi::OsStr::from_bytes(b"caf\xe9"))
        .current_dir(dir.path())
        .env("PITH_AGENT_DIR", dir.path().join("agent"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not valid UTF-8"), "{stderr}");
}
