//! The first-party `bash` tool component against pi's behaviour: output, exit codes, timeout,
//! abort, truncation and the full-output file.

use crate::support;

use pith::plugin_host::discovery::Origin;
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn host(workspace: &std::path::Path) -> PluginHost {
    let (host, errors) = PluginHost::load(HostOptions {
        workspace: workspace.to_path_buf(),
        plugin_dirs: Vec::<(std::path::PathBuf, Origin)>::new(),
        cache_dir: Some(support::shared_cache()),
        settings: Settings::from_value(json!({})),
        embedded: true,
        plugin_files: Vec::new(),
        no_extensions: false,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(workspace)),
    })
    .await
    .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    host
}

async fn bash(host: &PluginHost, args: Value) -> pith::content::ToolOutput {
    host.call_tool("bash", "c", &args, None, None)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn output_exit_codes_and_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let ok = bash(
        &host,
        json!({"command": "echo hi; sleep 0.1; echo err >&2"}),
    )
    .await;
    assert!(!ok.is_error);
    assert_eq!(ok.text(), "hi\nerr\n");
    assert_eq!(ok.details, None);
    let empty = bash(&host, json!({"command": "true"})).await;
    assert_eq!(empty.text(), "(no output)");
    let failed = bash(&host, json!({"command": "echo out; exit 7"})).await;
    assert!(failed.is_error);
    assert_eq!(failed.text(), "out\n\n\nCommand exited with code 7");
    let slow = bash(
        &host,
        json!({"command": "echo start; sleep 5", "timeout": 0.3}),
    )
    .await;
    assert!(slow.is_error);
    assert_eq!(
        slow.text(),
        "start\n\n\nCommand timed out after 0.3 seconds"
    );
    let pwd = bash(&host, json!({"command": "pwd"})).await;
    assert_eq!(
        pwd.text().trim(),
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_kills_the_command_and_reports_what_it_printed() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let out = host
        .call_tool(
            "bash",
            "c",
            &json!({"command": "echo before; sleep 10; touch late"}),
            None,
            Some(cancel),
        )
        .await
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert!(out.is_error);
    assert_eq!(out.text(), "before\n\n\nCommand aborted");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!dir.path().join("late").exists());
}

/// As pi's (its `seq 1 2500` case in `tests/fixtures/pi-1.5-tools`): the last 2,000 lines, the
/// final newline no line of its own.
#[tokio::test(flavor = "multi_thread")]
async fn long_output_keeps_the_tail_and_names_the_full_file() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .call_tool(
            "bash",
            "c",
            &json!({"command": "seq 1 30000"}),
            Some(tx),
            None,
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    let text = out.text();
    let details = out.details.unwrap();
    let path = details["fullOutputPath"].as_str().unwrap().to_string();
    assert_eq!(details["truncation"]["truncated"], true);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert!(
        text.ends_with(&format!(
            "29999\n30000\n\n[Showing lines 28001-30000 of 30000. Full output: {path}]"
        )),
        "{}",
        &text[text.len() - 120..]
    );
    let full = std::fs::read_to_string(&path).unwrap();
    assert_eq!(full.lines().count(), 30000);
    std::fs::remove_file(&path).unwrap();
    let mut updates = 0;
    while rx.try_recv().is_ok() {
        updates += 1;
    }
    assert!(updates >= 2, "updates: {updates}");
}

/// A command that starts a server in the background returns when its shell exits (pi's
/// `waitForChildProcess`), not when the background process closes the output it inherited;
/// the background process keeps running.
#[tokio::test(flavor = "multi_thread")]
async fn a_backgrounded_process_does_not_hold_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let started = std::time::Instant::now();
    let out = bash(
        &host,
        json!({"command": "sleep 300 & echo $! > bg.pid; echo started"}),
    )
    .await;
    // Far below the background's 300 s, far above a busy machine's start-up.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(out.text(), "started\n");
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the background process was killed"
    );
    // SAFETY: kill(2) on the test's own child process.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

/// A command a signal ends (not an abort) reports its shell's code, as pi does: 137 for SIGKILL.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_killed_by_a_signal_reports_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(dir.path()).await;
    let out = bash(&host, json!({"command": "echo before; kill -9 $$"})).await;
    assert!(out.is_error);
    assert_eq!(out.text(), "before\n\n\nCommand exited with code 137");
}
