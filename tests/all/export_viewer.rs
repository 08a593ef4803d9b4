//! The session viewer page in headless Chromium (Debian's `chromium`, installed by `.ci/run`),
//! driven by `export_viewer_driver.js` after the page's own script ran: markdown rendered, the
//! tree with a branch and a label, filters, toggles, the JSONL download, a deep link — and
//! nothing from the session runs or reaches the network.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support;
use crate::support::rpc::{Pith, persistent};

/// Chromium, or `None` (a failure when `PITH_REQUIRE_CHROMIUM` says it must be there).
fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("PITH_REQUIRE_CHROMIUM").is_none(),
            "chromium is required here (apt-get install chromium)"
        );
        eprintln!("skipped: no chromium on this machine (.ci/run installs it)");
    }
    found
}

/// Adds the test driver to an exported page (with the page's nonce, which the CSP requires),
/// opens it at `fragment` in headless Chromium and returns the driver's report.
fn drive(browser: &Path, page: &Path, fragment: &str, profile: &Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let nonce = html
        .split("<script nonce=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the viewer's script carries a nonce");
    let driver =
        std::fs::read_to_string(support::repo_root().join("tests/all/export_viewer_driver.js"))
            .unwrap();
    let at = html.rfind("</body>").unwrap();
    let driven = format!(
        "{}<script nonce=\"{nonce}\">{driver}</script>{}",
        &html[..at],
        &html[at..]
    );
    let driven_page = page.with_extension("driven.html");
    std::fs::write(&driven_page, driven).unwrap();
    let output = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}{fragment}", driven_page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&output.stdout);
    let report = dom
        .rsplit("<pre id=\"pith-test-report\">")
        .next()
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("no report in the page: {dom}"));
    let report = report
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    serde_json::from_str(&report).unwrap_or_else(|err| panic!("{err}: {report}"))
}

/// Counts connections to a loopback port (a request leaving the page would land here).
fn tripwire() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for _ in listener.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    (port, hits)
}

fn ids(values: &Value) -> Vec<String> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_exported_page_renders_the_whole_tree_safely() {
    let Some(browser) = chromium() else { return };
    let (port, hits) = tripwire();
    let xss = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">";
    let answer = format!(
        "The module is **done**: call `mean(xs)`.\n\n```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```\n\n[docs](javascript:window.__pwned=1) and ![chart](http://127.0.0.1:{port}/track.png)"
    );
    let script = json!([
        {"thinking": "Planning the module.", "text": "I'll write it.",
         "tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "stats.py", "content": "def mean(xs):\n    return 0\n"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit", "arguments": {"path": "stats.py", "edits": [{"oldText": "return 0", "newText": "return sum(xs) / len(xs)"}]}}]},
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": format!("printf '%s' '{xss}'")}}]},
        {"text": answer}
    ]);
    let mut pith = Pith::spawn(persistent(script, &[])).await;
    pith.call(
        "p1",
        json!({"type": "prompt", "message": "Write a stats module"}),
    )
    .await;
    pith.until_agent_end().await;
    // A branch in the same file: back to the shell's output, and another prompt from there.
    let entries = pith.call("g", json!({"type": "get_entries"})).await["data"]["entries"].clone();
    let find = |role: &str, n: usize| {
        entries
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["message"]["role"] == role)
            .nth(n)
            .map(|e| e["id"].as_str().unwrap().to_string())
            .unwrap()
    };
    let (bash_output, first_answer) = (find("toolResult", 2), find("assistant", 0));
    pith.call(
        "n",
        json!({"type": "navigate_tree", "entryId": bash_output}),
    )
    .await;
    pith.call(
        "p2",
        json!({"type": "prompt", "message": "Explain it instead"}),
    )
    .await;
    pith.until_agent_end().await;
    pith.call(
        "l",
        json!({"type": "set_entry_label", "entryId": first_answer, "label": "plan"}),
    )
    .await;
    let exported = pith
        .call(
            "x",
            json!({"type": "export_html", "outputPath": "page.html"}),
        )
        .await;
    assert_eq!(exported["success"], true, "{exported}");
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
    let every: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();

    let page = pith.work_dir().join("page.html");
    let report = drive(&browser, &page, "", &pith.work_dir().join("chrome"));
    assert_eq!(report["complete"], true, "{report}");
    assert!(report.get("error").is_none(), "{report}");
    // Markdown rendered.
    let counts = &report["counts"];
    assert!(counts["strong"].as_u64() >= Some(1), "{counts}");
    assert!(counts["code"].as_u64() >= Some(2), "{counts}");
    assert!(counts["codeBlocks"].as_u64() >= Some(1), "{counts}");
    assert!(counts["highlighted"].as_u64() >= Some(1), "{counts}");
    // Every entry is in the tree, the branch point and the label included.
    assert_eq!(ids(&report["tree"]["all"]), every, "{}", report["tree"]);
    assert!(report["tree"]["branchPoints"].as_u64() >= Some(1));
    assert_eq!(report["tree"]["labels"], json!(["plan"]));
    // Filters change what the tree shows.
    let filters = &report["filters"];
    assert_eq!(ids(&filters["all"]), every);
    let users = ids(&filters["user"]);
    assert!(users.len() < every.len() && users.len() >= 2, "{filters}");
    assert!(
        ids(&filters["labeled"]).contains(&first_answer),
        "{filters}"
    );
    // Toggles: T hides thinking, O tool calls.
    let toggles = &report["toggles"];
    assert!(
        toggles["before"]["thinking"].as_u64() >= Some(1),
        "{toggles}"
    );
    assert_eq!(toggles["afterT"]["thinking"], 0, "{toggles}");
    assert!(toggles["afterT"]["tools"].as_u64() >= Some(1), "{toggles}");
    assert_eq!(toggles["afterO"]["tools"], 0, "{toggles}");
    assert_eq!(toggles["restored"], toggles["before"], "{toggles}");
    // The timeline: each answer on the branch, with its tool calls.
    let timeline = &report["timeline"];
    assert_eq!(timeline["rows"], 4, "{timeline}");
    assert_eq!(timeline["toolSegments"], 3, "{timeline}");
    assert!(
        timeline["summary"]
            .as_str()
            .unwrap()
            .starts_with("Timeline · 4 turns"),
        "{timeline}"
    );
    // The edit is a diff.
    assert_eq!(report["diffs"][0]["del"], 1, "{}", report["diffs"]);
    assert_eq!(report["diffs"][0]["add"], 1, "{}", report["diffs"]);
    // The download holds the session file.
    assert_eq!(
        report["jsonl"].as_str().unwrap(),
        std::fs::read_to_string(&file).unwrap()
    );
    // Nothing ran, nothing left the page.
    assert_eq!(report["pwned"], false);
    assert_eq!(report["unsafeLinks"], json!([]));
    assert_eq!(report["remoteImages"], json!([]));
    assert_eq!(report["resources"], json!([]));
    assert_eq!(report["cspViolations"], json!([]));
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    // The deep link moves to an entry off the active branch and shows the branch through it.
    let hash = &report["hash"];
    assert_eq!(hash["selected"], hash["target"], "{hash}");
    assert_eq!(hash["onPath"], true, "{hash}");
    assert_eq!(hash["inView"], true, "{hash}");

    // Opened at an entry: the page selects it at load.
    let report = drive(
        &browser,
        &page,
        &format!("#entry-{first_answer}"),
        &pith.work_dir().join("chrome"),
    );
    assert_eq!(report["selectedAtLoad"], first_answer.as_str(), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pith_export_writes_the_page_of_a_file_pi_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("pi.jsonl");
    std::fs::copy(
        support::repo_root().join("tests/fixtures/pi-sessions/pi-session.jsonl"),
        &session,
    )
    .unwrap();
    let out = dir.path().join("out/page.html");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .arg("export")
        .arg(&session)
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        format!("Exported to {}", out.display())
    );
    // pi's flag, with the default name in the current directory.
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .current_dir(dir.path())
        .args(["--export", "pi.jsonl"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(dir.path().join("pith-session-pi.html").exists());
    // A missing file says so and fails.
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["export", "/nonexistent/s.jsonl"])
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("Session file not found"),
        "{run:?}"
    );

    let Some(browser) = chromium() else { return };
    let every: Vec<String> = std::fs::read_to_string(&session)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|entry| entry["id"].as_str().unwrap().to_string())
        .collect();
    let report = drive(&browser, &out, "", &dir.path().join("chrome"));
    assert!(report.get("error").is_none(), "{report}");
    assert_eq!(ids(&report["tree"]["all"]), every);
    assert_eq!(
        report["jsonl"].as_str().unwrap(),
        std::fs::read_to_string(&session).unwrap()
    );
    assert!(report["counts"]["items"].as_u64() >= Some(2), "{report}");
}
