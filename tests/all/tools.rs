//! The first-party file tools (read, write, edit, ls) against pi's behaviour on a temporary
//! workspace, and their sandbox: nothing outside the workspace, read-only tools cannot write.

use crate::support;

use pith::content::{Content, ToolOutput};
use pith::plugin_host::discovery::Origin;
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;
use serde_json::{Value, json};

/// A temporary workspace with the first-party tools loaded.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    host: PluginHost,
}

impl Workspace {
    pub async fn new() -> Workspace {
        Workspace::with_sandbox(json!({})).await
    }

    /// A workspace whose tools run under the `sandbox` settings.
    pub async fn with_sandbox(sandbox: Value) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let policy = pith::sandbox::SandboxPolicy::from_settings(
            None,
            &Settings::from_value(json!({ "sandbox": sandbox })),
            dir.path(),
            // An agent directory outside the workspace and the temp dir (writes never reach it).
            std::path::Path::new("/nonexistent/pith-agent"),
        )
        .unwrap();
        let (host, errors) = PluginHost::load(HostOptions {
            workspace: dir.path().to_path_buf(),
            plugin_dirs: Vec::<(std::path::PathBuf, Origin)>::new(),
            cache_dir: Some(support::shared_cache()),
            settings: Settings::from_value(json!({})),
            embedded: true,
            plugin_files: Vec::new(),
            no_extensions: false,
            sandbox: std::sync::Arc::new(policy),
        })
        .await
        .unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        Workspace { dir, host }
    }

    pub fn root(&self) -> std::path::PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub fn write(&self, name: &str, contents: &str) {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap()
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.host
            .call_tool(tool, "c", &args, None, None)
            .await
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn read_text_offsets_limits_and_errors() {
    let ws = Workspace::new().await;
    ws.write("hello.txt", "first line\nsecond line\nthird line\n");
    let out = ws.call("read", json!({"path": "hello.txt"})).await;
    assert_eq!(
        (out.text(), out.is_error, out.details.clone()),
        (
            "first line\nsecond line\nthird line\n".to_string(),
            false,
            None
        )
    );
    let out = ws
        .call(
            "read",
            json!({"path": "@hello.txt", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(
        out.text(),
        "second line\n\n[2 more lines in file. Use offset=3 to continue.]"
    );
    let out = ws
        .call("read", json!({"path": "hello.txt", "offset": 9}))
        .await;
    assert!(out.is_error);
    assert_eq!(out.text(), "Offset 9 is beyond end of file (4 lines total)");
    let out = ws.call("read", json!({"path": "missing.txt"})).await;
    assert!(out.is_error);
    assert_eq!(
        out.text(),
        format!(
            "ENOENT: no such file or directory, access '{}/missing.txt'",
            ws.root().display()
        )
    );
    assert_eq!(out.details, Some(json!({})));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_truncates_at_2000_lines_with_a_notice() {
    let ws = Workspace::new().await;
    let text: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    ws.write("long.txt", &text);
    let out = ws.call("read", json!({"path": "long.txt"})).await;
    assert!(
        out.text()
            .ends_with("line 2000\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"),
        "{}",
        &out.text()[out.text().len() - 100..]
    );
    assert_eq!(out.details.unwrap()["truncation"]["truncatedBy"], "lines");
    let wide = "x".repeat(60 * 1024);
    ws.write("wide.txt", &wide);
    let out = ws.call("read", json!({"path": "wide.txt"})).await;
    assert_eq!(
        out.text(),
        "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' wide.txt | head -c 51200]"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn read_returns_images_as_image_content() {
    let ws = Workspace::new().await;
    let png = [0x89u8, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0];
    std::fs::write(ws.dir.path().join("dot.png"), png).unwrap();
    let out = ws.call("read", json!({"path": "dot.png"})).await;
    assert_eq!(out.content[0], Content::text("Read image file [image/png]"));
    assert_eq!(
        out.content[1],
        Content::Image {
            data: "iVBORw0KGgoAAA==".into(),
            mime_type: "image/png".into()
        }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn write_creates_parents_and_counts_utf16() {
    let ws = Workspace::new().await;
    let out = ws
        .call("write", json!({"path": "a/b/c.txt", "content": "héllo 👋"}))
        .await;
    assert_eq!(out.text(), "Successfully wrote to a/b/c.txt");
    assert_eq!(out.details, None);
    assert_eq!(ws.read("a/b/c.txt"), "héllo 👋");
}

#[tokio::test(flavor = "multi_thread")]
async fn edit_replaces_unique_text_and_reports_a_diff() {
    let ws = Workspace::new().await;
    ws.write("code.rs", "fn main() {\r\n    println!(\"hi\");\r\n}\r\n");
    let out = ws
        .call(
            "edit",
            json!({"path": "code.rs", "edits": [{"oldText": "\"hi\"", "newText": "\"hello\""}]}),
        )
        .await;
    assert_eq!(out.text(), "Successfully replaced 1 block(s) in code.rs.");
    assert_eq!(
        ws.read("code.rs"),
        "fn main() {\r\n    println!(\"hello\");\r\n}\r\n",
        "line endings kept"
    );
    let details = out.details.unwrap();
    assert_eq!(details["firstChangedLine"], 2);
    assert_eq!(
        details["diff"],
        " 1 fn main() {\n-2     println!(\"hi\");\n+2     println!(\"hello\");\n 3 }\n 4 "
    );

    ws.write("dup.txt", "a\nb\na\n");
    let out = ws
        .call(
            "edit",
            json!({"path": "dup.txt", "edits": [{"oldText": "a", "newText": "z"}]}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text(),
        "Found 2 occurrences of the text in dup.txt. The text must be unique. Please provide more context to make it unique."
    );
    let out = ws
        .call(
            "edit",
            json!({"path": "dup.txt", "edits": [{"oldText": "nope", "newText": "z"}]}),
        )
        .await;
    assert_eq!(
        out.text(),
        "Could not find the exact text in dup.txt. The old text must match exactly including all whitespace and newlines."
    );
    let out = ws
        .call(
            "edit",
            json!({"path": "dup.txt", "edits": [{"oldText": "b", "newText": "b"}]}),
        )
        .await;
    assert!(out.text().starts_with("No changes made to dup.txt."));
    let out = ws
        .call(
            "edit",
            json!({"path": "none.txt", "edits": [{"oldText": "b", "newText": "c"}]}),
        )
        .await;
    assert_eq!(
        out.text(),
        "Could not edit file: none.txt. Error code: ENOENT."
    );

    ws.write("multi.txt", "one\ntwo\nthree\n");
    let out = ws.call("edit", json!({"path": "multi.txt", "edits": [{"oldText": "one", "newText": "1"}, {"oldText": "three", "newText": "3"}]})).await;
    assert_eq!(out.text(), "Successfully replaced 2 block(s) in multi.txt.");
    assert_eq!(ws.read("multi.txt"), "1\ntwo\n3\n");
    let out = ws.call("edit", json!({"path": "multi.txt", "edits": [{"oldText": "1\ntwo", "newText": "x"}, {"oldText": "two\n3", "newText": "y"}]})).await;
    assert_eq!(
        out.text(),
        "edits[0] and edits[1] overlap in multi.txt. Merge them into one edit or target disjoint regions."
    );

    // Typographic quotes and trailing spaces are forgiven.
    ws.write("quote.txt", "say 'hi'   \nend\n");
    let out = ws.call("edit", json!({"path": "quote.txt", "edits": [{"oldText": "say \u{2018}hi\u{2019}", "newText": "say 'bye'"}]})).await;
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(ws.read("quote.txt"), "say 'bye'\nend\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn ls_sorts_marks_directories_and_limits() {
    let ws = Workspace::new().await;
    ws.write("b.txt", "");
    ws.write("A.txt", "");
    ws.write(".hidden", "");
    ws.write("sub/x", "");
    let out = ws.call("ls", json!({})).await;
    assert_eq!(out.text(), ".hidden\nA.txt\nb.txt\nsub/");
    let out = ws.call("ls", json!({"limit": 2})).await;
    assert_eq!(
        out.text(),
        ".hidden\nA.txt\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(out.details, Some(json!({"entryLimitReached": 2})));
    ws.write("empty/.keep", "");
    std::fs::remove_file(ws.dir.path().join("empty/.keep")).unwrap();
    assert_eq!(
        ws.call("ls", json!({"path": "empty"})).await.text(),
        "(empty directory)"
    );
    let out = ws.call("ls", json!({"path": "b.txt"})).await;
    assert_eq!(
        out.text(),
        format!("Not a directory: {}/b.txt", ws.root().display())
    );
    let out = ws.call("ls", json!({"path": "nowhere"})).await;
    assert_eq!(
        out.text(),
        format!("Path not found: {}/nowhere", ws.root().display())
    );
}

/// `workspace-write` (the default): the tools read anywhere but the deny list, and write only
/// in the workspace and the writable roots; every denial names the path, the mode and the fix.
#[tokio::test(flavor = "multi_thread")]
async fn tools_read_widely_and_write_only_where_the_mode_allows() {
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    std::fs::create_dir_all(outside_path.join("public")).unwrap();
    std::fs::write(outside_path.join("public/notes.txt"), "notes\n").unwrap();
    std::fs::write(outside_path.join("beside.txt"), "beside\n").unwrap();
    std::fs::create_dir_all(outside_path.join("keys")).unwrap();
    std::fs::write(outside_path.join("keys/id"), "secret").unwrap();
    // No writable roots: the temp dir holding `outside` is not writable here.
    let ws = Workspace::with_sandbox(
        json!({"writableRoots": [], "denyRead": [outside_path.join("keys")]}),
    )
    .await;
    std::os::unix::fs::symlink(
        outside_path.join("public/notes.txt"),
        ws.dir.path().join("link.txt"),
    )
    .unwrap();
    // Reads outside the workspace work (the Emacs client's contract reads /tmp).
    let notes = outside_path.join("public/notes.txt").display().to_string();
    let out = ws.call("read", json!({"path": notes})).await;
    assert_eq!((out.text(), out.is_error), ("notes\n".to_string(), false));
    let public = outside_path.join("public").display().to_string();
    let out = ws.call("ls", json!({"path": public})).await;
    assert!(
        !out.is_error && out.text().contains("notes.txt"),
        "{}",
        out.text()
    );
    // The deny list holds, with its reason.
    let key = outside_path.join("keys/id");
    let out = ws
        .call("read", json!({"path": key.display().to_string()}))
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text(),
        format!(
            "read of {} denied: it is on the sandbox's deny list (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
            key.display()
        )
    );
    // A file beside a denied directory is read like any other, made before the call or during
    // the session; a listing of that directory leaves the denied name out; a link into the
    // denied directory is refused with the reason.
    let beside = outside_path.join("beside.txt");
    let out = ws
        .call("read", json!({"path": beside.display().to_string()}))
        .await;
    assert_eq!((out.text(), out.is_error), ("beside\n".to_string(), false));
    std::fs::write(outside_path.join("later.txt"), "made later\n").unwrap();
    let later = outside_path.join("later.txt").display().to_string();
    let out = ws.call("read", json!({"path": later})).await;
    assert_eq!(
        (out.text(), out.is_error),
        ("made later\n".to_string(), false)
    );
    let out = ws
        .call("ls", json!({"path": outside_path.display().to_string()}))
        .await;
    assert!(
        !out.is_error && out.text().contains("beside.txt") && !out.text().contains("keys"),
        "{}",
        out.text()
    );
    std::os::unix::fs::symlink(outside_path.join("keys"), outside_path.join("door")).unwrap();
    let through = outside_path.join("door/id").display().to_string();
    let out = ws.call("read", json!({"path": through})).await;
    assert!(out.is_error, "{}", out.text());
    assert!(!out.text().contains("secret"), "{}", out.text());
    assert!(out.text().contains("denied"), "{}", out.text());
    // Writes outside are denied and name the mode and the fix; nothing is written.
    let target = outside_path.join("new.txt");
    let out = ws
        .call(
            "write",
            json!({"path": target.display().to_string(), "content": "x"}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text(),
        format!(
            "write to {} denied: outside the workspace in sandbox mode workspace-write (add it to sandbox.writableRoots or run with --sandbox full-access)",
            target.display()
        )
    );
    assert!(!target.exists());
    // Through a symlink out of the workspace: still outside.
    let out = ws
        .call(
            "edit",
            json!({"path": "link.txt", "edits": [{"oldText": "notes", "newText": "pwned"}]}),
        )
        .await;
    assert!(out.is_error, "{}", out.text());
    assert_eq!(
        std::fs::read_to_string(outside_path.join("public/notes.txt")).unwrap(),
        "notes\n"
    );
    // Inside the workspace, writes work.
    let out = ws
        .call("write", json!({"path": "inside.txt", "content": "ok"}))
        .await;
    assert!(!out.is_error, "{}", out.text());
}

/// `read-only` writes nowhere; `full-access` anywhere.
#[tokio::test(flavor = "multi_thread")]
async fn read_only_and_full_access_modes() {
    let read_only = Workspace::with_sandbox(json!({"mode": "read-only"})).await;
    let out = read_only
        .call("write", json!({"path": "a.txt", "content": "x"}))
        .await;
    assert!(out.is_error);
    assert!(
        out.text()
            .contains("sandbox mode read-only allows no writes"),
        "{}",
        out.text()
    );
    assert!(!read_only.dir.path().join("a.txt").exists());
    let outside = tempfile::tempdir().unwrap();
    let full = Workspace::with_sandbox(json!({"mode": "full-access", "writableRoots": []})).await;
    let target = outside.path().join("b.txt");
    let out = full
        .call(
            "write",
            json!({"path": target.display().to_string(), "content": "y"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text());
    assert_eq!(std::fs::read_to_string(target).unwrap(), "y");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_tools_are_granted_a_read_only_workspace() {
    let ws = Workspace::new().await;
    let grants: Vec<(String, String)> = ws
        .host
        .plugins()
        .iter()
        .map(|p| {
            (
                p.manifest.id.clone(),
                format!("{:?}", p.capabilities.workspace),
            )
        })
        .collect();
    for (id, access) in [
        ("read", "Read"),
        ("ls", "Read"),
        ("write", "Write"),
        ("edit", "Write"),
        ("bash", "Write"),
    ] {
        assert!(
            grants.contains(&(id.to_string(), access.to_string())),
            "{id}: {grants:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_tool_named_like_a_built_in_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        support::built_component("replacement-read"),
        plugins.join("replacement_read.wasm"),
    )
    .unwrap();
    std::fs::copy(
        support::repo_root().join("plugins/testing/replacement-read/pith.toml"),
        plugins.join("replacement_read.toml"),
    )
    .unwrap();
    let (host, errors) = PluginHost::load(HostOptions {
        workspace: dir.path().to_path_buf(),
        plugin_dirs: vec![(plugins, Origin::Flag)],
        cache_dir: Some(support::shared_cache()),
        settings: Settings::from_value(json!({})),
        embedded: true,
        plugin_files: Vec::new(),
        no_extensions: false,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(dir.path())),
    })
    .await
    .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let reads: Vec<String> = host
        .tools()
        .iter()
        .filter(|(t, _)| t.name == "read")
        .map(|(_, p)| p.manifest.id.clone())
        .collect();
    assert_eq!(reads, ["replacement-read"]);
    let out = host
        .call_tool("read", "c", &json!({"path": "x"}), None, None)
        .await
        .unwrap();
    assert_eq!(out.text(), "replaced");
}

fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_kills_the_bash_process_tree_at_once() {
    let ws = Workspace::new().await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let pids = ws.dir.path().join("pids");
    let command = format!(
        "sleep 30 & echo $! > {p}; echo $$ >> {p}; sleep 30",
        p = pids.display()
    );
    let call = {
        let cancel = cancel.clone();
        let args = json!({"command": command});
        let host = &ws.host;
        async move { host.call_tool("bash", "c", &args, None, Some(cancel)).await }
    };
    let watcher = async {
        while std::fs::read_to_string(&pids)
            .map(|t| t.lines().count())
            .unwrap_or(0)
            < 2
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let list: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert!(list.iter().all(|p| alive(*p)));
        let aborted = std::time::Instant::now();
        cancel.cancel();
        (list, aborted)
    };
    let (result, (list, aborted)) = tokio::join!(call, watcher);
    let out = result.unwrap();
    while list.iter().any(|p| alive(*p)) && aborted.elapsed() < std::time::Duration::from_secs(2) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let gone = aborted.elapsed();
    assert!(
        list.iter().all(|p| !alive(*p)),
        "the tree outlived the abort"
    );
    // A kill is one signal to the group; the bound leaves room for a loaded CI machine.
    assert!(gone < std::time::Duration::from_secs(1), "took {gone:?}");
    assert!(out.is_error);
    assert!(out.text().ends_with("Command aborted"), "{}", out.text());
}

/// Two distant edits in one call are two hunks, as pi's diff shows them (not one block that
/// removes and re-adds every line between them).
#[tokio::test(flavor = "multi_thread")]
async fn two_distant_edits_show_as_two_hunks() {
    let ws = Workspace::new().await;
    let lines: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
    ws.write("long.txt", &lines.join("\n"));
    let out = ws
        .call(
            "edit",
            json!({"path": "long.txt", "edits": [
                {"oldText": "line 3\n", "newText": "changed 3\n"},
                {"oldText": "line 26\n", "newText": "changed 26\n"}
            ]}),
        )
        .await;
    let details = out.details.unwrap();
    assert_eq!(details["firstChangedLine"], 3);
    let expected = [
        "  1 line 1",
        "  2 line 2",
        "- 3 line 3",
        "+ 3 changed 3",
        "  4 line 4",
        "  5 line 5",
        "  6 line 6",
        "  7 line 7",
        "    ...",
        " 22 line 22",
        " 23 line 23",
        " 24 line 24",
        " 25 line 25",
        "-26 line 26",
        "+26 changed 26",
        " 27 line 27",
        " 28 line 28",
        " 29 line 29",
        " 30 line 30",
    ];
    assert_eq!(
        details["diff"]
            .as_str()
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        expected
    );
}

/// `~` is the home directory in every file tool, as in pi: `write ~/x` never makes a folder
/// named `~` in the workspace: the sandbox rules on the real path.
#[tokio::test(flavor = "multi_thread")]
async fn a_tilde_is_the_home_directory() {
    let ws = Workspace::new().await;
    let out = ws
        .call(
            "write",
            json!({"path": "~/pith-tilde-test.txt", "content": "x"}),
        )
        .await;
    assert!(out.is_error, "{}", out.text());
    assert!(!ws.root().join("~").exists(), "a folder named ~ was made");
    let home = std::path::PathBuf::from(std::env::var("HOME").unwrap());
    assert!(!home.join("pith-tilde-test.txt").exists());
    // The refusal names the home directory's real path, not a `~` in the workspace.
    assert!(
        out.text().contains(home.to_str().unwrap()),
        "{}",
        out.text()
    );
}
