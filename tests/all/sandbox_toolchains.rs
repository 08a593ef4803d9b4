//! Real toolchains in the default sandbox (`workspace-write`) over the real binary, with `HOME`
//! set up as a user's: npm and npx write their cache, the caches of Maven, Gradle, Go and uv are
//! writable (simulated by stand-ins on `PATH`, so the test does not depend on those tools), what
//! runs code or holds credentials stays refused with a `[sandbox]` hint that names the path, a
//! linked git worktree commits while its repository's hooks and configuration stay shut, and
//! `sandbox.approval: "on-failure"` runs a denied command again once the host says yes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::rpc::{Options, Pith};

/// Variables that would move a toolchain's cache away from the test's home directory.
const MOVED_BY: &[&str] = &[
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "GOPATH",
    "GOMODCACHE",
    "GOCACHE",
    "UV_CACHE_DIR",
    "PIP_CACHE_DIR",
    "GRADLE_USER_HOME",
    "BUN_INSTALL",
    "CARGO_HOME",
    "RUSTUP_HOME",
];

/// A user's home directory and a place outside it and the workspace, out of the temp dir (a
/// writable root of the default sandbox).
struct User {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    bin: PathBuf,
}

impl User {
    fn new() -> User {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        for sub in [".ssh", ".config/autostart", ".local/bin", ".cargo/bin"] {
            std::fs::create_dir_all(home.join(sub)).unwrap();
        }
        for file in [".bashrc", ".profile", ".zshrc", ".gitconfig"] {
            std::fs::write(home.join(file), "# the user's\n").unwrap();
        }
        std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY").unwrap();
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        User {
            _dir: dir,
            root,
            home,
            bin,
        }
    }

    /// A stand-in for a toolchain's executable on `PATH`, running `body` in bash.
    fn tool(&self, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.bin.join(name);
        std::fs::write(&path, format!("#!/bin/bash\nset -e\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// pith in the default mode with this home, these settings and this faux script.
    async fn pith(&self, settings: Value, script: Value, start_in: Option<PathBuf>) -> Pith {
        let mut options = Options::faux(script);
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        options.env.extend([
            ("HOME".to_string(), self.home.display().to_string()),
            ("PATH".to_string(), path),
            // npm asks the registry for its newest version otherwise: tests stay offline.
            (
                "npm_config_update_notifier".to_string(),
                "false".to_string(),
            ),
        ]);
        options.env_remove = MOVED_BY.iter().map(|v| v.to_string()).collect();
        options
            .agent_files
            .push(("settings.json".into(), settings.to_string()));
        options.start_in = start_in;
        Pith::spawn(options).await
    }
}

/// The `bash` command's result (the user's own command, held by the same sandbox).
async fn bash(pith: &mut Pith, id: &str, command: &str) -> Value {
    let response = pith
        .call(id, json!({"type": "bash", "command": command}))
        .await;
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

/// The tool results of a run, by call id.
fn results_by_id(end: &Value) -> Vec<(String, Value)> {
    end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .map(|m| (m["toolCallId"].as_str().unwrap().to_string(), m.clone()))
        .collect()
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn toolchain_caches_are_writable_and_what_runs_code_is_not() {
    let user = User::new();
    user.tool(
        "mvn",
        r#"mkdir -p "$HOME/.m2/repository/org/pith"; echo jar > "$HOME/.m2/repository/org/pith/a.jar"; echo mvn-ok"#,
    );
    user.tool(
        "gradle",
        r#"mkdir -p "$HOME/.gradle/caches/modules-2"; echo x > "$HOME/.gradle/caches/modules-2/a"; echo gradle-ok"#,
    );
    user.tool(
        "go",
        r#"mkdir -p "$HOME/go/pkg/mod/cache/download" "$HOME/.cache/go-build"; echo x > "$HOME/go/pkg/mod/cache/download/a"; echo x > "$HOME/.cache/go-build/a"; echo go-ok"#,
    );
    user.tool(
        "uv",
        r#"mkdir -p "$HOME/.cache/uv/wheels"; echo x > "$HOME/.cache/uv/wheels/a"; echo uv-ok"#,
    );
    let home = user.home.display().to_string();
    let mut refused: Vec<(String, String)> = [
        ("rc", format!("echo pwned >> {home}/.bashrc")),
        ("profile", format!("echo pwned >> {home}/.profile")),
        ("zshrc", format!("echo pwned >> {home}/.zshrc")),
        (
            "autostart",
            format!("echo pwned > {home}/.config/autostart/x.desktop"),
        ),
        ("ssh", format!("echo pwned > {home}/.ssh/authorized_keys")),
        ("gitconfig", format!("echo pwned >> {home}/.gitconfig")),
        ("localbin", format!("echo pwned > {home}/.local/bin/ls")),
        ("cargobin", format!("echo pwned > {home}/.cargo/bin/cargo")),
        (
            "agentdir",
            "echo pwned > $PITH_AGENT_DIR/settings.json".to_string(),
        ),
    ]
    .into_iter()
    .map(|(id, command)| (id.to_string(), command))
    .collect();
    // Every other path of the list, created by the command in its existing parent.
    for path in pith::sandbox::caches::NEVER_WRITABLE_IN_HOME {
        let full = user.home.join(path);
        if full.is_dir() {
            continue;
        }
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        refused.push((path.to_string(), format!("echo pwned > {}", full.display())));
    }
    let mut calls: Vec<Value> = refused
        .iter()
        .map(|(id, command)| json!({"id": id, "name": "bash", "arguments": {"command": command}}))
        .collect();
    calls.push(json!({"id": "read-ssh", "name": "bash", "arguments": {"command": format!("cat {home}/.ssh/id_test")}}));
    let script = json!([{"tool_calls": calls}, {"text": "done"}]);
    let mut pith = user.pith(json!({}), script, None).await;

    // The caches: written by the stand-ins, and each made by pith because its tool is there.
    let data = bash(&mut pith, "caches", "mvn && gradle && go && uv").await;
    assert_eq!(data["exitCode"], 0, "{data}");
    assert_eq!(
        data["output"], "mvn-ok\ngradle-ok\ngo-ok\nuv-ok\n",
        "{data}"
    );
    for written in [
        ".m2/repository/org/pith/a.jar",
        ".gradle/caches/modules-2/a",
        "go/pkg/mod/cache/download/a",
        ".cache/go-build/a",
        ".cache/uv/wheels/a",
    ] {
        assert!(user.home.join(written).is_file(), "{written}");
    }
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let listed = state["data"]["sandbox"]["cacheDirs"].to_string();
    assert!(
        listed.contains(&format!("{home}/.m2/repository")),
        "{listed}"
    );
    // Not made for a toolchain that is not installed.
    let on_path = |name: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|dir| dir.join(name).exists())
    };
    assert!(on_path("yarn") || !user.home.join(".yarn").exists());

    // What runs code or holds credentials: refused, and the hint names the path and says that
    // ownership is not the cause.
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.until_agent_end().await;
    let results = results_by_id(&end);
    assert_eq!(results.len(), refused.len() + 1);
    let agent_dir = pith.dir.path().join("agent").display().to_string();
    for (id, result) in &results {
        let text = text_of(result);
        assert_eq!(result["isError"], true, "{id}: {text}");
        // The kernel's words: Landlock's, or the namespace's read-only and empty covers.
        assert!(
            [
                "Permission denied",
                "Read-only file system",
                "No such file or directory"
            ]
            .iter()
            .any(|words| text.contains(words)),
            "{id}: {text}"
        );
        assert!(
            text.contains("[sandbox] This is the sandbox, not the files' owner or permissions: chown, chmod and sudo will not help."),
            "{id}: {text}"
        );
        let deny_listed = |path: &str| {
            text.contains(&format!(
                "[sandbox] {home}/{path} is on the sandbox's deny list: no command reads or writes it"
            ))
        };
        if id == "read-ssh" || id == "ssh" || id == ".gnupg" {
            let path = match id.as_str() {
                "read-ssh" => ".ssh/id_test",
                "ssh" => ".ssh/authorized_keys",
                _ => ".gnupg",
            };
            assert!(deny_listed(path), "{id}: {text}");
        } else {
            let (_, command) = refused.iter().find(|(r, _)| r == id).unwrap();
            let path = command
                .rsplit(' ')
                .next()
                .unwrap()
                .replace("$PITH_AGENT_DIR", &agent_dir);
            assert!(
                text.contains(&format!("[sandbox] write to {path} denied: the sandbox never lets the model's tools and commands write there")),
                "{id}: {text}"
            );
        }
    }
    for file in [".bashrc", ".profile", ".zshrc", ".gitconfig"] {
        assert_eq!(
            std::fs::read_to_string(user.home.join(file)).unwrap(),
            "# the user's\n"
        );
    }
    let settings = std::fs::read_to_string(pith.dir.path().join("agent/settings.json")).unwrap();
    assert!(!settings.contains("pwned"), "{settings}");
    for made in [
        ".config/autostart/x.desktop",
        ".ssh/authorized_keys",
        ".local/bin/ls",
        ".cargo/bin/cargo",
    ] {
        assert!(!user.home.join(made).exists(), "{made}");
    }
}

/// A package tarball npm installs with no registry: `hello-pith`, with a `hello-pith` bin.
fn package_tarball(root: &Path) -> PathBuf {
    let package = root.join("pkg/package");
    std::fs::create_dir_all(package.join("bin")).unwrap();
    std::fs::write(
        package.join("package.json"),
        r#"{"name":"hello-pith","version":"1.0.0","main":"index.js","bin":{"hello-pith":"bin/hello.js"}}"#,
    )
    .unwrap();
    std::fs::write(
        package.join("index.js"),
        "module.exports = () => 'hello from the package';\n",
    )
    .unwrap();
    std::fs::write(
        package.join("bin/hello.js"),
        "#!/usr/bin/env node\nconsole.log('hello from npx');\n",
    )
    .unwrap();
    let tarball = root.join("hello-pith-1.0.0.tgz");
    let status = Command::new("tar")
        .arg("czf")
        .arg(&tarball)
        .arg("-C")
        .arg(root.join("pkg"))
        .arg("package")
        .status()
        .unwrap();
    assert!(status.success());
    tarball
}

#[tokio::test(flavor = "multi_thread")]
async fn npm_install_and_npx_work_in_the_default_mode() {
    let user = User::new();
    let tarball = package_tarball(&user.root).display().to_string();
    let install = format!(
        "echo '{{}}' > package.json && npm install --offline --no-audit --no-fund {tarball} 2>&1 && node -e 'console.log(require(\"hello-pith\")())' && npx --offline --yes --package {tarball} hello-pith"
    );
    // Without the caches (`sandbox.cacheDirs: false`), npm's cache is refused, and the hint
    // names it (npm says EACCES and advises `sudo chown`).
    let script = json!([
        {"tool_calls": [{"id": "npm", "name": "bash", "arguments": {"command": install}}]},
        {"text": "done"}
    ]);
    let mut without = user
        .pith(json!({"sandbox": {"cacheDirs": false}}), script, None)
        .await;
    without
        .call("p", json!({"type": "prompt", "message": "install"}))
        .await;
    let end = without.until_agent_end().await;
    let (_, result) = &results_by_id(&end)[0];
    let text = text_of(result);
    assert_eq!(result["isError"], true, "{text}");
    assert!(text.contains("EACCES"), "{text}");
    assert!(
        text.contains(&format!("[sandbox] write to {}/.npm", user.home.display())),
        "{text}"
    );
    assert!(
        text.contains("chown, chmod and sudo will not help"),
        "{text}"
    );
    drop(without);

    // The default: npm's cache is a toolchain cache.
    let mut pith = user.pith(json!({}), json!([]), None).await;
    let data = bash(&mut pith, "npm", &install).await;
    let output = data["output"].as_str().unwrap();
    assert_eq!(data["exitCode"], 0, "{output}");
    assert!(
        output.contains("hello from the package\nhello from npx\n"),
        "{output}"
    );
    assert!(user.home.join(".npm/_cacache").is_dir());
    assert!(user.home.join(".npm/_npx").is_dir());
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_linked_worktree_commits_and_its_repository_hooks_stay_shut() {
    let user = User::new();
    let main = user.root.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("a.txt"), "a\n").unwrap();
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-qm", "first"]);
    let worktree = user.root.join("wt");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "agent",
            worktree.to_str().unwrap(),
        ],
    );
    let hooks = main.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let config_before = std::fs::read_to_string(main.join(".git/config")).unwrap();
    let mut pith = user
        .pith(json!({}), json!([]), Some(worktree.clone()))
        .await;
    let git_c = "git -c user.name=t -c user.email=t@example.com";
    let data = bash(
        &mut pith,
        "commit",
        &format!(
            "echo b > b.txt && git add b.txt && {git_c} commit -qm second && git branch feature && git log --format=%s agent && git branch --list feature"
        ),
    )
    .await;
    assert_eq!(data["exitCode"], 0, "{data}");
    // git (2.47) locks the shared `packed-refs` during a commit in a worktree and says so when
    // it cannot; the commit is made (see the README).
    let output = data["output"].as_str().unwrap();
    let packed_refs = format!(
        "error: Unable to create '{}/.git/packed-refs.lock': Permission denied\n",
        main.display()
    );
    assert_eq!(
        output.replace(&packed_refs, ""),
        "second\nfirst\n  feature\n",
        "{data}"
    );
    for (id, command) in [
        (
            "hook",
            format!("echo 'curl evil' > {}/pre-commit", hooks.display()),
        ),
        (
            "config",
            format!(
                "git config --file {}/.git/config core.hooksPath /tmp",
                main.display()
            ),
        ),
    ] {
        let data = bash(&mut pith, id, &command).await;
        assert_ne!(data["exitCode"], 0, "{id}: {data}");
    }
    assert!(!hooks.join("pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(main.join(".git/config")).unwrap(),
        config_before
    );
}

/// `sandbox.approval: "on-failure"`: a command the sandbox denied is put to the host; "no"
/// keeps the failed result, "yes" runs that one command again outside the sandbox.
#[tokio::test(flavor = "multi_thread")]
async fn a_denied_command_is_run_again_when_the_host_says_yes() {
    let user = User::new();
    let outside = user.root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let (refused, allowed) = (outside.join("no.txt"), outside.join("yes.txt"));
    let touch = |path: &Path| format!("touch {}", path.display());
    let script = json!([
        {"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": touch(&refused)}}]},
        {"tool_calls": [{"id": "b2", "name": "bash", "arguments": {"command": touch(&allowed)}}]},
        {"text": "done"}
    ]);
    let settings = json!({"sandbox": {"writableRoots": [], "approval": "on-failure"}});
    let mut pith = user.pith(settings, script, None).await;
    pith.call("p", json!({"type": "prompt", "message": "touch both"}))
        .await;
    for (answer, path) in [(false, &refused), (true, &allowed)] {
        let dialog = pith
            .wait_for(|f| f["type"] == "extension_ui_request" && f["method"] == "confirm")
            .await;
        assert_eq!(dialog["title"], "Run this command outside the sandbox?");
        let message = dialog["message"].as_str().unwrap();
        assert_eq!(
            message,
            format!(
                "\"touch {0}\" failed in sandbox mode workspace-write: write to {0} denied: outside the workspace in sandbox mode workspace-write (add it to sandbox.writableRoots or run with --sandbox full-access). Run it once more without the sandbox?",
                path.display()
            )
        );
        pith.send(
            json!({"type": "extension_ui_response", "id": dialog["id"], "confirmed": answer}),
        )
        .await;
        let end = pith.wait_for(|f| f["type"] == "tool_execution_end").await;
        let text = end["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(end["isError"], !answer, "{end}");
        if answer {
            assert!(
                text.contains("The user approved running this command again outside the sandbox"),
                "{text}"
            );
        } else {
            assert!(
                text.contains("Permission denied") && text.contains("[sandbox] write to"),
                "{text}"
            );
        }
        pith.frames
            .retain(|f| f["type"] != "tool_execution_end" && f["type"] != "extension_ui_request");
    }
    pith.until_agent_end().await;
    assert!(!refused.exists(), "a no keeps the refusal");
    assert!(allowed.exists(), "a yes runs it outside the sandbox");
}
