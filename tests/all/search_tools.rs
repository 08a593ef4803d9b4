//! `grep` and `find` run by the host (`pith:plugin/search`): pi's answers (gitignore, globs,
//! context, case, literal patterns, per-line anchors, limits), the same as an in-guest walk,
//! and the same reach as the file tools — a deny-listed directory, a link leading out and a
//! root outside what the tool may read stay out of it.

use serde_json::json;

use crate::tools::Workspace;

#[tokio::test(flavor = "multi_thread")]
async fn search_stays_inside_what_the_tool_may_read() {
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    std::fs::create_dir_all(outside_path.join("public")).unwrap();
    std::fs::write(outside_path.join("public/notes.txt"), "secret-ish notes\n").unwrap();
    std::fs::create_dir_all(outside_path.join("keys")).unwrap();
    std::fs::write(outside_path.join("keys/id"), "secret key\n").unwrap();
    let ws = Workspace::with_sandbox(
        json!({"writableRoots": [], "denyRead": [outside_path.join("keys")]}),
    )
    .await;
    ws.write("src/main.rs", "fn main() { /* secret plan */ }\n");
    // Links inside the workspace to the denied directory and to a denied file.
    let root = ws.dir.path();
    std::os::unix::fs::symlink(outside_path.join("keys"), root.join("keys-link")).unwrap();
    std::os::unix::fs::symlink(outside_path.join("keys/id"), root.join("id-link")).unwrap();

    // The walk lists the links but never follows them: only the workspace's own file matches.
    let out = ws.call("grep", json!({"pattern": "secret"})).await;
    assert_eq!(out.text(), "src/main.rs:1: fn main() { /* secret plan */ }");
    let out = ws.call("find", json!({"pattern": "*"})).await;
    assert_eq!(out.text(), "id-link\nkeys-link\nsrc/\nsrc/main.rs");

    // A root that is a link leading to the deny list is refused, and says so.
    let out = ws
        .call("grep", json!({"pattern": "secret", "path": "keys-link"}))
        .await;
    assert!(out.is_error, "{}", out.text());
    assert!(
        out.text()
            .contains("leads to a path on the sandbox's deny list"),
        "{}",
        out.text()
    );
    let out = ws
        .call("find", json!({"pattern": "*", "path": "keys-link"}))
        .await;
    assert!(out.is_error, "{}", out.text());
    let out = ws
        .call("grep", json!({"pattern": "secret", "path": "id-link"}))
        .await;
    assert!(out.is_error, "{}", out.text());

    // Readable directories outside the workspace are searched; the denied one is not.
    let public = outside_path.join("public").display().to_string();
    let out = ws
        .call("grep", json!({"pattern": "notes", "path": public}))
        .await;
    assert_eq!(out.text(), "notes.txt:1: secret-ish notes");
    let keys = outside_path.join("keys").display().to_string();
    for tool in ["grep", "find"] {
        let out = ws
            .call(tool, json!({"pattern": "*", "path": keys.clone()}))
            .await;
        assert!(out.is_error, "{tool}: {}", out.text());
        assert!(out.text().contains("deny list"), "{tool}: {}", out.text());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn devices_are_never_read() {
    let ws = Workspace::new().await;
    // Under /dev (readable in the default mode) nothing is a regular file to search.
    let out = ws
        .call("grep", json!({"pattern": "x", "path": "/dev"}))
        .await;
    assert!(!out.is_error, "{}", out.text());
    let out = ws
        .call("grep", json!({"pattern": "x", "path": "/dev/zero"}))
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text(),
        "/dev/zero is not a regular file or a directory",
        "{}",
        out.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_globs_and_patterns_say_what_is_wrong() {
    let ws = Workspace::new().await;
    ws.write("a.txt", "alpha\n");
    let out = ws.call("find", json!({"pattern": "[z-a]"})).await;
    assert!(out.is_error);
    assert!(
        out.text().starts_with("Invalid glob \"[z-a]\""),
        "{}",
        out.text()
    );
    // An unclosed class is taken literally, as before.
    let out = ws.call("find", json!({"pattern": "[a"})).await;
    assert_eq!(out.text(), "No files found matching pattern");
    let out = ws
        .call("grep", json!({"pattern": "alpha", "glob": "[z-a]"}))
        .await;
    assert!(out.is_error);
    assert!(out.text().starts_with("Invalid glob"), "{}", out.text());
    let out = ws.call("grep", json!({"pattern": "a{2,1}"})).await;
    assert!(out.is_error);
    assert!(
        out.text().starts_with("Invalid pattern: "),
        "{}",
        out.text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn many_files_come_back_in_walk_order_and_the_limit_cuts_in_that_order() {
    let ws = Workspace::new().await;
    // Enough files that both threads work on them, named so that byte order and the
    // depth-first order differ (`a/…` before `a-b`).
    for i in 0..300 {
        ws.write(&format!("d{:03}/f.txt", 299 - i), "needle\nhay\nneedle\n");
    }
    ws.write("a/z.txt", "needle\n");
    ws.write("a-b.txt", "needle\n");
    let out = ws
        .call("grep", json!({"pattern": "needle", "limit": 5}))
        .await;
    assert_eq!(
        out.text(),
        "a/z.txt:1: needle\na-b.txt:1: needle\nd000/f.txt:1: needle\nd000/f.txt:3: needle\nd001/f.txt:1: needle\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]"
    );
    let out = ws
        .call("find", json!({"pattern": "f.txt", "limit": 3}))
        .await;
    assert_eq!(
        out.text(),
        "d000/f.txt\nd001/f.txt\nd002/f.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]"
    );
    let out = ws
        .call("grep", json!({"pattern": "hay", "limit": 1000}))
        .await;
    assert_eq!(out.text().lines().count(), 300);
    assert!(
        out.text()
            .starts_with("d000/f.txt:2: hay\nd001/f.txt:2: hay")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn find_globs_respect_gitignore_and_limits() {
    let ws = Workspace::new().await;
    ws.write(".gitignore", "build/\n*.tmp\n");
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "src/deep/mod.rs",
        "build/out.rs",
        "notes.tmp",
        ".config.rs",
        "README.md",
    ] {
        ws.write(file, "x");
    }
    let out = ws.call("find", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        out.text(),
        ".config.rs\nsrc/deep/mod.rs\nsrc/lib.rs\nsrc/main.rs"
    );
    let out = ws
        .call("find", json!({"pattern": "src/**/*.rs", "limit": 2}))
        .await;
    assert_eq!(
        out.text(),
        "src/deep/mod.rs\nsrc/lib.rs\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(out.details, Some(json!({"resultLimitReached": 2})));
    assert_eq!(
        ws.call("find", json!({"pattern": "*.go"})).await.text(),
        "No files found matching pattern"
    );
    let out = ws
        .call("find", json!({"pattern": "*.rs", "path": "src/deep"}))
        .await;
    assert_eq!(out.text(), "mod.rs");
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_matches_with_context_case_literal_and_limits() {
    let ws = Workspace::new().await;
    ws.write(".gitignore", "ignored/\n");
    ws.write("a.txt", "alpha\nbeta\nGamma\ndelta\n");
    ws.write("b.md", "gamma ray\n");
    ws.write("ignored/c.txt", "gamma hidden\n");
    let out = ws.call("grep", json!({"pattern": "gamma"})).await;
    assert_eq!(out.text(), "b.md:1: gamma ray");
    let out = ws
        .call(
            "grep",
            json!({"pattern": "gamma", "ignoreCase": true, "context": 1}),
        )
        .await;
    assert_eq!(
        out.text(),
        "a.txt-2- beta\na.txt:3: Gamma\na.txt-4- delta\nb.md:1: gamma ray"
    );
    let out = ws
        .call("grep", json!({"pattern": "a.", "literal": true}))
        .await;
    assert_eq!(out.text(), "No matches found");
    let out = ws
        .call("grep", json!({"pattern": "a", "glob": "*.txt", "limit": 2}))
        .await;
    assert_eq!(
        out.text(),
        "a.txt:1: alpha\na.txt:2: beta\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
    );
    let out = ws
        .call("grep", json!({"pattern": "gamma", "path": "b.md"}))
        .await;
    assert_eq!(out.text(), "b.md:1: gamma ray");
    ws.write("long.txt", &format!("{}needle", "x".repeat(600)));
    let out = ws.call("grep", json!({"pattern": "needle"})).await;
    assert!(
        out.text()
            .starts_with(&format!("long.txt:1: {}... [truncated]", "x".repeat(500)))
    );
    assert!(
        out.text()
            .ends_with("[Some lines truncated to 500 chars. Use read tool to see full lines]")
    );
    let bad = ws.call("grep", json!({"pattern": "("})).await;
    assert!(bad.is_error);
    assert!(bad.text().starts_with("Invalid pattern: "));
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_anchors_apply_per_line() {
    let ws = Workspace::new().await;
    ws.write("a.txt", "first\nsecond start\nstart here\n");
    let out = ws.call("grep", json!({"pattern": "^start"})).await;
    assert_eq!(out.text(), "a.txt:3: start here");
    let out = ws.call("grep", json!({"pattern": "start$"})).await;
    assert_eq!(out.text(), "a.txt:2: second start");
}
