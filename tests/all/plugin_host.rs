//! The plugin host against real components built from `plugins/`: loading, validation, the
//! disk cache, and every sandbox promise with its exact error — after each failure the host
//! serves the next call.

use crate::support;

use crate::support::Fixture;
use pith::content::ToolOutput;
use pith::plugin_host::{CallError, PluginHost};
use serde_json::{Value, json};

async fn probe(host: &PluginHost, args: Value) -> Result<ToolOutput, CallError> {
    host.call_tool("probe", "call-1", &args, None, None).await
}

/// The host still serves: a trivial call succeeds.
async fn still_serves(host: &PluginHost) {
    let out = probe(host, json!({"op": "echo"}))
        .await
        .expect("echo after a failure");
    assert!(!out.is_error);
    assert_eq!(out.text(), r#"{"op":"echo"}"#);
}

fn error_text(result: Result<ToolOutput, CallError>) -> String {
    let out = result.expect("the call completes with a tool error");
    assert!(out.is_error, "expected an error result, got {out:?}");
    out.text()
}

async fn probe_host(settings: Value) -> (Fixture, PluginHost) {
    let fixture = Fixture::new();
    fixture.install("testing/probe");
    let (host, errors) = fixture.host(settings).await;
    assert!(errors.is_empty(), "{errors:?}");
    (fixture, host)
}

#[tokio::test(flavor = "multi_thread")]
async fn example_tool_loads_from_a_plugins_dir_and_runs() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    std::fs::write(fixture.workspace.join("notes.txt"), "one two\nthree\n").unwrap();
    let (host, errors) = fixture.host(json!({})).await;
    assert!(errors.is_empty(), "{errors:?}");
    let tools = host.tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].0.name, "word_count");
    assert_eq!(tools[0].0.parameters["required"], json!(["path"]));
    let out = host
        .call_tool(
            "word_count",
            "c1",
            &json!({"path": "notes.txt"}),
            None,
            None,
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.text(), "2 lines, 3 words, 14 bytes");
    assert_eq!(
        out.details,
        Some(json!({"bytes": 14, "lines": 2, "words": 3}))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reading_outside_the_workspace_is_refused() {
    let (fixture, host) = probe_host(json!({})).await;
    std::fs::write(fixture.workspace.join("inside.txt"), "inside").unwrap();
    let secret = fixture.root.path().join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();

    let inside = probe(&host, json!({"op": "read", "path": "inside.txt"}))
        .await
        .unwrap();
    assert_eq!(inside.text(), "inside");

    let absolute = error_text(
        probe(
            &host,
            json!({"op": "read", "path": secret.to_str().unwrap()}),
        )
        .await,
    );
    assert_eq!(
        absolute,
        "read failed: No such file or directory (os error 44)"
    );
    still_serves(&host).await;

    let dotdot = error_text(probe(&host, json!({"op": "read", "path": "../secret.txt"})).await);
    assert_eq!(dotdot, "read failed: Operation not permitted (os error 63)");
    still_serves(&host).await;

    std::os::unix::fs::symlink(&secret, fixture.workspace.join("link.txt")).unwrap();
    let symlink = error_text(probe(&host, json!({"op": "read", "path": "link.txt"})).await);
    assert_eq!(
        symlink,
        "read failed: Operation not permitted (os error 63)"
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn writing_through_a_read_only_grant_is_refused() {
    let (fixture, host) =
        probe_host(json!({"plugins": {"probe": {"grant": {"workspace": "read"}}}})).await;
    let text = error_text(
        probe(
            &host,
            json!({"op": "write", "path": "new.txt", "content": "x"}),
        )
        .await,
    );
    // The SDK names the grant the write lacked.
    assert_eq!(
        text,
        "write failed: Operation not permitted (os error 63) (this plugin's workspace grant is read-only: `workspace = \"write\"` under [capabilities] in its pith.toml lets it write)"
    );
    assert!(!fixture.workspace.join("new.txt").exists());
    still_serves(&host).await;

    let (fixture, host) = probe_host(json!({})).await;
    let ok = probe(
        &host,
        json!({"op": "write", "path": "new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    assert_eq!(ok.text(), "written");
    assert_eq!(
        std::fs::read_to_string(fixture.workspace.join("new.txt")).unwrap(),
        "x"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn http_only_reaches_granted_prefixes() {
    let base = support::serve_text("pong").await;
    // Not granted: a third-party plugin gets no network by default.
    let (_f, host) = probe_host(json!({})).await;
    let url = format!("{base}/ping");
    let text = error_text(probe(&host, json!({"op": "http", "url": url})).await);
    assert_eq!(
        text,
        format!("http denied: {url} is not under a granted prefix")
    );
    still_serves(&host).await;

    // Granted to a narrower prefix than declared: only that prefix.
    let (_f, host) =
        probe_host(json!({"plugins": {"probe": {"grant": {"http": [format!("{base}/ok")]}}}}))
            .await;
    let ok = probe(
        &host,
        json!({"op": "http", "url": format!("{base}/ok/ping")}),
    )
    .await
    .unwrap();
    assert_eq!(ok.text(), "200 pong");
    let other = format!("{base}/other");
    let text = error_text(probe(&host, json!({"op": "http", "url": other})).await);
    assert_eq!(
        text,
        format!("http denied: {other} is not under a granted prefix")
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn config_values_only_for_granted_keys() {
    let settings = json!({"plugins": {"probe": {"grant": {"config": ["PROBE_KEY"]}, "config": {"PROBE_KEY": "s3cret", "OTHER": "x"}}}});
    let (_f, host) = probe_host(settings).await;
    let ok = probe(&host, json!({"op": "config", "key": "PROBE_KEY"}))
        .await
        .unwrap();
    assert_eq!(ok.text(), r#"Some("s3cret")"#);
    let text = error_text(probe(&host, json!({"op": "config", "key": "OTHER"})).await);
    assert_eq!(text, "config not granted: OTHER");
    still_serves(&host).await;

    // Declared but not granted.
    let (_f, host) = probe_host(json!({})).await;
    let text = error_text(probe(&host, json!({"op": "config", "key": "PROBE_KEY"})).await);
    assert_eq!(text, "config not granted: PROBE_KEY");
}

#[tokio::test(flavor = "multi_thread")]
async fn processes_only_when_granted() {
    let (_f, host) = probe_host(json!({})).await;
    let text = error_text(probe(&host, json!({"op": "process", "command": "echo hi"})).await);
    assert_eq!(
        text,
        "process denied: this plugin was not granted `process`"
    );
    still_serves(&host).await;

    let (fixture, host) =
        probe_host(json!({"plugins": {"probe": {"grant": {"process": true}}}})).await;
    let ok = probe(&host, json!({"op": "process", "command": "pwd; exit 3"}))
        .await
        .unwrap();
    assert_eq!(
        ok.text(),
        format!("{}\n exit=Some(3)", fixture.workspace.display())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_infinite_loop_is_stopped_by_the_deadline() {
    let (_f, host) = probe_host(json!({})).await;
    let err = probe(&host, json!({"op": "spin"})).await.unwrap_err();
    assert_eq!(
        err,
        CallError::Deadline {
            plugin: "probe".into(),
            deadline_ms: 1000
        }
    );
    assert_eq!(
        err.to_string(),
        "plugin probe exceeded its deadline of 1000 ms"
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_bomb_is_stopped_by_the_cap() {
    let (_f, host) = probe_host(json!({})).await;
    let err = probe(&host, json!({"op": "alloc"})).await.unwrap_err();
    assert_eq!(
        err,
        CallError::MemoryLimit {
            plugin: "probe".into(),
            limit_mb: 64
        }
    );
    assert_eq!(
        err.to_string(),
        "plugin probe exceeded its memory limit of 64 MiB"
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_recursion_overflows_the_bounded_stack() {
    let (_f, host) = probe_host(json!({})).await;
    let shallow = probe(&host, json!({"op": "recurse", "depth": 100}))
        .await
        .unwrap();
    assert!(!shallow.is_error);
    let err = probe(&host, json!({"op": "recurse", "depth": 10_000_000u64}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::StackOverflow {
            plugin: "probe".into()
        }
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_is_a_trap_with_its_message() {
    let (_f, host) = probe_host(json!({})).await;
    let err = probe(&host, json!({"op": "panic"})).await.unwrap_err();
    let CallError::Trap { plugin, message } = &err else {
        panic!("expected a trap, got {err:?}")
    };
    assert_eq!(plugin, "probe");
    assert!(
        message.starts_with("wasm trap: wasm `unreachable` instruction executed"),
        "{message}"
    );
    assert!(message.contains("probe panicked on purpose"), "{message}");
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wall_clock_timeout_drops_the_call_and_kills_its_process() {
    let fixture = Fixture::new();
    fixture.install_as("testing/probe", "probe", |m| {
        m.replace("deadline-ms = 1000", "deadline-ms = 1000\ntimeout-ms = 300")
    });
    let (host, errors) = fixture
        .host(json!({"plugins": {"probe": {"grant": {"process": true}}}}))
        .await;
    assert!(errors.is_empty(), "{errors:?}");
    let marker = fixture.workspace.join("marker");
    let started = std::time::Instant::now();
    let err = probe(
        &host,
        json!({"op": "process", "command": "sleep 1.5; touch marker"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout {
            plugin: "probe".into(),
            timeout_ms: 300
        }
    );
    assert!(started.elapsed() < std::time::Duration::from_millis(1400));
    // Time in the host call does not count against the 1 s deadline, and the child is killed.
    tokio::time::sleep(std::time::Duration::from_millis(1800)).await;
    assert!(!marker.exists(), "the child outlived its call");
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_reports_reach_the_host() {
    let (_f, host) = probe_host(json!({})).await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let out = host
        .call_tool("probe", "c", &json!({"op": "progress"}), Some(tx), None)
        .await
        .unwrap();
    assert_eq!(out.text(), "done");
    let mut seen = Vec::new();
    while let Ok(partial) = rx.try_recv() {
        seen.push(partial.text());
    }
    assert_eq!(seen, vec!["step 1", "step 2", "step 3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn broken_plugins_are_refused_by_name_and_the_rest_load() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    // A tool component that claims to be a provider.
    fixture.install_as("testing/probe", "liar", |m| {
        m.replace("id = \"probe\"", "id = \"liar\"")
            .replace("kind = \"tool\"", "kind = \"provider\"")
    });
    // A truncated component.
    fixture.install_as("testing/probe", "truncated", |m| {
        m.replace("id = \"probe\"", "id = \"truncated\"")
    });
    let truncated = fixture.plugins.join("truncated.wasm");
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    // A manifest with a bad field.
    fixture.install_as("testing/probe", "badversion", |m| {
        m.replace("version = \"0.1.0\"", "version = \"latest\"")
    });
    // A component without a manifest.
    std::fs::copy(
        support::built_component("probe"),
        fixture.plugins.join("orphan.wasm"),
    )
    .unwrap();

    let (host, errors) = fixture.host(json!({})).await;
    let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    let find = |file: &str| {
        messages
            .iter()
            .find(|m| m.contains(file))
            .unwrap_or_else(|| panic!("no error for {file}: {messages:#?}"))
    };
    assert!(
        find("liar.wasm").contains("does not implement the provider world"),
        "{messages:#?}"
    );
    assert!(
        find("truncated.wasm").contains("not a valid WebAssembly component"),
        "{messages:#?}"
    );
    assert!(
        find("badversion.toml")
            .contains("bad manifest: field `version`: \"latest\" is not a version like 1.2.3"),
        "{messages:#?}"
    );
    assert!(
        find("orphan.wasm").contains("no manifest: put orphan.toml beside it"),
        "{messages:#?}"
    );
    let plugins = host.plugins();
    let ids: Vec<&str> = plugins.iter().map(|p| p.manifest.id.as_str()).collect();
    assert_eq!(ids, vec!["word-count"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_disk_cache_spares_recompiling_and_startup_instantiates_nothing() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    let cache = fixture.root.path().join("cache");
    let (host, _) = fixture
        .host_with_cache(json!({}), Some(cache.clone()))
        .await;
    assert_eq!(host.cache_stats().compiled, 1, "the first load compiles");
    let compiled: Vec<_> = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .collect();
    assert_eq!(compiled.len(), 1);

    // A restart: metadata comes from the cache, nothing is compiled or instantiated at startup…
    let (host, _) = fixture
        .host_with_cache(json!({}), Some(cache.clone()))
        .await;
    assert_eq!(host.cache_stats(), Default::default());
    assert!(!host.plugins()[0].is_loaded());
    assert_eq!(host.tools()[0].0.name, "word_count");
    // …and the first call deserializes instead of compiling.
    std::fs::write(fixture.workspace.join("a"), "x").unwrap();
    host.call_tool("word_count", "c", &json!({"path": "a"}), None, None)
        .await
        .unwrap();
    assert_eq!(host.cache_stats().compiled, 0);
    assert_eq!(host.cache_stats().hits, 1);

    // A corrupt cache entry is recompiled, not trusted.
    let entry = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&entry, b"garbage").unwrap();
    drop(host);
    let (host, _) = fixture
        .host_with_cache(json!({}), Some(cache.clone()))
        .await;
    let out = host
        .call_tool("word_count", "c", &json!({"path": "a"}), None, None)
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(host.cache_stats().compiled, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn disabled_plugins_are_left_out_and_later_dirs_win() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    let (host, _) = fixture
        .host(json!({"plugins": {"word-count": {"enabled": false}}}))
        .await;
    assert!(host.plugins().is_empty());

    // The same id in a later directory replaces the earlier one.
    let later = tempfile::tempdir().unwrap();
    support::install_plugin(later.path(), "testing/word-count-v2");
    let (host, errors) = pith::plugin_host::PluginHost::load(pith::plugin_host::HostOptions {
        workspace: fixture.workspace.clone(),
        plugin_dirs: vec![
            (
                fixture.plugins.clone(),
                pith::plugin_host::discovery::Origin::Flag,
            ),
            (
                later.path().to_path_buf(),
                pith::plugin_host::discovery::Origin::Flag,
            ),
        ],
        cache_dir: Some(support::shared_cache()),
        settings: pith::settings::Settings::from_value(json!({})),
        embedded: false,
        plugin_files: Vec::new(),
        no_extensions: false,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(
            &fixture.workspace,
        )),
    })
    .await
    .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let plugins = host.plugins();
    assert_eq!(plugins.len(), 1);
    assert_eq!(plugins[0].manifest.version, "0.2.0");
    std::fs::write(fixture.workspace.join("notes.txt"), "a b\n").unwrap();
    let out = host
        .call_tool("word_count", "c", &json!({"path": "notes.txt"}), None, None)
        .await
        .unwrap();
    assert_eq!(out.text(), "v2: 1 lines, 2 words, 4 bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_plugin_kind_loads_and_is_checked_against_its_world() {
    let fixture = Fixture::new();
    fixture.install("examples/skill-pack");
    fixture.install("examples/prompt-pack");
    fixture.install("examples/hello-extension");
    // A skill pack claiming to be an extension is refused.
    fixture.install_as("examples/skill-pack", "fake-extension", |m| {
        m.replace("id = \"skill-pack\"", "id = \"fake-extension\"")
            .replace("kind = \"skill\"", "kind = \"extension\"")
    });
    let (host, errors) = fixture.host(json!({})).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_string().contains("fake-extension.wasm: plugin fake-extension could not be loaded: does not implement the extension world"), "{}", errors[0]);
    let plugins = host.plugins();
    let mut ids: Vec<&str> = plugins.iter().map(|p| p.manifest.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["hello-extension", "prompt-pack", "skill-pack"]);
    for plugin in plugins.iter() {
        let loaded = host.loaded(plugin).await.expect("loads");
        let kinds = (
            loaded.tool.is_some(),
            loaded.provider.is_some(),
            loaded.extension.is_some(),
            loaded.skill.is_some(),
            loaded.prompt_template.is_some(),
        );
        let expected = match plugin.manifest.id.as_str() {
            "skill-pack" => (false, false, false, true, false),
            "prompt-pack" => (false, false, false, false, true),
            _ => (false, false, true, false, false),
        };
        assert_eq!(kinds, expected, "{}", plugin.manifest.id);
    }
}

#[test]
fn pith_processes_starting_at_once_compile_a_new_plugin_once() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    let cache = fixture.root.path().join("cache");
    // Two hosts on one fresh cache, started at the same moment on their own threads (as two
    // pith processes would be): one compiles, the other waits for its entry and reads it.
    let start = std::sync::Barrier::new(2);
    let stats: Vec<_> = std::thread::scope(|scope| {
        let load = || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            start.wait();
            let (host, _) =
                runtime.block_on(fixture.host_with_cache(json!({}), Some(cache.clone())));
            host.cache_stats()
        };
        let first = scope.spawn(load);
        let second = scope.spawn(load);
        vec![first.join().unwrap(), second.join().unwrap()]
    });
    let compiled: usize = stats.iter().map(|s| s.compiled).sum();
    let hits: usize = stats.iter().map(|s| s.hits).sum();
    assert_eq!((compiled, hits), (1, 1), "{stats:?}");
}
