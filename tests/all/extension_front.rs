//! What an extension sees of how pith was started and what it may ask of the front-end, over the
//! real binary: its command-line flags (pi's `registerFlag`/`getFlag`, with pi's parsing, the
//! unknown ones refused, `--help` listing them, and pith's fix for a switch that swallowed the
//! prompt after it), pi's `ctx.mode`/`hasUI`, `getCommands` and `getSettings`, and the requests
//! `switchSession`, `reload` and `shutdown`.

use crate::extensions::{is_ui, notified};
use crate::support;
use crate::support::rpc::{Options, Pith, persistent};
use serde_json::{Value, json};

/// The agent directory's settings granting the probe the config `key`, set on.
fn probe_config(key: &str) -> Vec<(String, String)> {
    let settings =
        json!({"plugins": {"ext-probe": {"grant": {"config": [key]}, "config": {key: "on"}}}});
    vec![("settings.json".into(), settings.to_string())]
}

/// The probe's `/front` report, once asked.
async fn front(pith: &mut Pith) -> String {
    pith.call("f", json!({"type": "prompt", "message": "/front"}))
        .await;
    notified(pith, "answer: mode=").await
}

#[tokio::test(flavor = "multi_thread")]
async fn flags_reach_the_extension_that_registered_them_with_the_mode_commands_and_settings() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.args = ["--probe-plan", "--probe-preset", "fast"]
        .map(String::from)
        .to_vec();
    options.agent_files = vec![(
        "settings.json".into(),
        json!({"probeSetting": 7}).to_string(),
    )];
    let mut pith = Pith::spawn(options).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    let count = listed["data"]["commands"].as_array().unwrap().len();
    assert_eq!(
        front(&mut pith).await,
        format!(
            "answer: mode=RunMode::Rpc ui=true plan=Some(FlagValue::Boolean(true)) \
             preset=Some(\"fast\") commands={count} probeSetting=7"
        )
    );

    // Not given: the switch's default, and no value for the text flag (pi's `undefined`).
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.args = vec!["--probe-preset=slow".into()];
    let mut pith = Pith::spawn(options).await;
    let report = front(&mut pith).await;
    assert!(
        report.contains("plan=Some(FlagValue::Boolean(false)) preset=Some(\"slow\")"),
        "{report}"
    );
}

/// Runs the binary once with the probe installed and `args`; (exit code, stdout, stderr).
fn run_once(args: &[&str]) -> (Option<i32>, String, String) {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    support::install_plugin(&plugins, "testing/ext-probe");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args([
            "--plugins-dir",
            "plugins",
            "--provider",
            "faux",
            "--model",
            "faux-model",
        ])
        .args(args)
        .current_dir(root.path())
        .env("PITH_AGENT_DIR", root.path().join("agent"))
        .env("PITH_CACHE_DIR", support::shared_cache())
        .env_remove("PITH_FAUX_SCRIPT")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn unknown_flags_stop_pith_and_help_lists_the_extensions_flags() {
    let (code, _, stderr) = run_once(&["--mode", "rpc", "--probe-plann"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown option(s): --probe-plann (not pith's, and no extension"),
        "{stderr}"
    );
    let (code, _, stderr) = run_once(&["--mode", "rpc", "--probe-preset"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("Extension flag \"--probe-preset\" requires a value"),
        "{stderr}"
    );
    let (code, stdout, stderr) = run_once(&["--help"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\nExtension CLI Flags:\n"), "{stdout}");
    assert!(
        stdout.contains("  --probe-plan                Start the probe in plan mode\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  --probe-preset <value>      The probe's preset\n"),
        "{stdout}"
    );
}

#[test]
fn a_switch_flag_leaves_the_prompt_after_it_and_print_modes_have_no_ui() {
    // pi takes "say hi" as --probe-plan's value and drops it; pith gives it back as the prompt
    // (the faux model echoes it).
    let (code, stdout, stderr) = run_once(&["-p", "--probe-plan", "say hi"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("say hi"), "{stdout}\n{stderr}");
    let (code, stdout, stderr) = run_once(&["--mode", "json", "--probe-plan", "/front"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("answer: mode=RunMode::Json ui=false plan=Some(FlagValue::Boolean(true))"),
        "{stdout}\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_switches_sessions_reloads_and_shuts_pith_down() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = persistent(json!([{"text": "first answer"}]), &[]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = probe_config("lifecycle");
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    let first = pith.call("s0", json!({"type": "get_state"})).await;
    let file = first["data"]["sessionFile"].as_str().unwrap().to_string();
    let starts = |pith: &Pith| {
        pith.frames
            .iter()
            .filter(|f| is_ui(f, "setStatus") && f["statusKey"] == "probe")
            .count()
    };
    let started = starts(&pith);
    pith.call("n", json!({"type": "prompt", "message": "/move new"}))
        .await;
    while starts(&pith) < started + 1 {
        pith.wait_for(|f| is_ui(f, "setStatus") && f["statusKey"] == "probe")
            .await;
    }
    let fresh = pith.call("s1", json!({"type": "get_state"})).await;
    assert_ne!(fresh["data"]["sessionFile"], first["data"]["sessionFile"]);

    // Back to the first file, on the extension's request.
    pith.call(
        "w",
        json!({"type": "prompt", "message": format!("/move switch {file}")}),
    )
    .await;
    while starts(&pith) < started + 2 {
        pith.wait_for(|f| is_ui(f, "setStatus") && f["statusKey"] == "probe")
            .await;
    }
    let back = pith.call("s2", json!({"type": "get_state"})).await;
    assert_eq!(back["data"]["sessionFile"], first["data"]["sessionFile"]);
    assert_eq!(back["data"]["messageCount"], first["data"]["messageCount"]);

    // A reload: the instance hears `session_shutdown` (`reload`), and a fresh one starts, told
    // why.
    let mark = pith.frames.len();
    pith.call("r", json!({"type": "prompt", "message": "/move reload"}))
        .await;
    let status = |key: &'static str, text: &'static str| {
        move |f: &Value| {
            is_ui(f, "setStatus")
                && f["statusKey"] == key
                && f["statusText"]
                    .as_str()
                    .is_some_and(|t| t.starts_with(text))
        }
    };
    let shutdown = after(&mut pith, mark, status("lifecycle", "session_shutdown")).await;
    assert_eq!(
        shutdown["statusText"],
        "session_shutdown {\"type\":\"session_shutdown\",\"reason\":\"reload\"}"
    );
    after(&mut pith, mark, status("start-reason", "reload")).await;
    let start = after(&mut pith, mark, status("lifecycle", "session_start")).await;
    assert_eq!(start["statusText"], "session_start #1", "{start}");

    // A shutdown: pith ends once idle, stdin still open.
    pith.call("x", json!({"type": "prompt", "message": "/move shutdown"}))
        .await;
    assert_eq!(pith.exit_code().await, Some(0));
}

/// The first frame from `mark` on that `pred` accepts, read or still to come.
async fn after(pith: &mut Pith, mark: usize, pred: impl Fn(&Value) -> bool) -> Value {
    if let Some(frame) = pith.frames[mark..].iter().find(|f| pred(f)) {
        return frame.clone();
    }
    pith.wait_for(pred).await
}

#[tokio::test(flavor = "multi_thread")]
async fn timers_and_file_watches_call_the_extension_back() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.work_files = vec![("notes/todo.txt".into(), "one\n".into())];
    let mut pith = Pith::spawn(options).await;

    // A one-shot timer, and a repeating one cancelled after it fired twice.
    pith.call(
        "t",
        json!({"type": "prompt", "message": "/wake timer once 20"}),
    )
    .await;
    assert_eq!(notified(&mut pith, "timer:").await, "timer: once");
    pith.call(
        "r",
        json!({"type": "prompt", "message": "/wake timer tick 20 repeat"}),
    )
    .await;
    for _ in 0..2 {
        pith.wait_for(|f| f["method"] == "notify" && f["message"] == "timer: tick")
            .await;
    }
    pith.call(
        "c",
        json!({"type": "prompt", "message": "/wake cancel tick"}),
    )
    .await;
    assert_eq!(
        notified(&mut pith, "answer: cancelled").await,
        "answer: cancelled true"
    );

    pith.close_stdin();
    pith.exit_code().await;

    // A watch (the probe declares `workspace = "read"`, granted here).
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.work_files = vec![("notes/todo.txt".into(), "one\n".into())];
    options.agent_files = vec![(
        "settings.json".into(),
        json!({"plugins": {"ext-probe": {"grant": {"workspace": "read"}}}}).to_string(),
    )];
    let mut pith = Pith::spawn(options).await;
    pith.call(
        "w",
        json!({"type": "prompt", "message": "/wake watch notes notes"}),
    )
    .await;
    assert_eq!(
        notified(&mut pith, "answer: watch").await,
        "answer: watch Ok(())"
    );
    std::fs::write(pith.work_dir().join("notes/todo.txt"), "one\ntwo\n").unwrap();
    let change = pith
        .wait_for(|f| {
            f["method"] == "notify"
                && f["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("file-change: notes"))
        })
        .await;
    assert!(
        change["message"].as_str().unwrap().contains("todo.txt"),
        "{change}"
    );
    // Outside the workspace: refused, with the reason.
    pith.call(
        "o",
        json!({"type": "prompt", "message": "/wake watch etc /etc"}),
    )
    .await;
    let outside = notified(&mut pith, "answer: watch Err").await;
    assert!(
        outside.contains("outside the session's workspace"),
        "{outside}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_follow_up_sent_from_agent_end_continues_the_run_before_it_settles() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([{"text": "first"}, {"text": "second"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = probe_config("end-follow-up");
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.wait_for(|f| f["type"] == "agent_settled").await;
    let kinds: Vec<String> = pith
        .frames
        .iter()
        .filter_map(|f| match f["type"].as_str() {
            Some("extension_ui_request") if f["message"] == "end heard" => Some("heard".into()),
            Some(kind @ ("agent_start" | "agent_end" | "agent_settled")) => Some(kind.into()),
            _ => None,
        })
        .collect();
    // The handler ran before the host saw the first `agent_end`, and its follow-up ran in a
    // new run before the session settled, once.
    assert_eq!(
        kinds,
        [
            "agent_start",
            "heard",
            "agent_end",
            "agent_start",
            "agent_end",
            "agent_settled"
        ]
    );
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let texts: Vec<&str> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["hello", "one more"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_still_compiling_at_start_up_starts_before_the_first_command_is_answered() {
    // An empty compile cache: the plugin compiles after pith is already serving (deferred).
    let cache = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.env = vec![("PITH_CACHE_DIR".into(), cache.path().display().to_string())];
    options.agent_files = probe_config("lifecycle");
    let mut pith = Pith::spawn(options).await;
    pith.call("c", json!({"type": "get_commands"})).await;
    // Its `session_start` came before the answer, and says `startup`: to the extension, a
    // compile that outlasted start-up is still the session's start.
    let reasons: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| is_ui(f, "setStatus") && f["statusKey"] == "start-reason")
        .map(|f| &f["statusText"])
        .collect();
    assert_eq!(reasons, [&json!("startup")], "{:#?}", pith.frames);
}
