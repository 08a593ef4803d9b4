//! The first start on an empty compile cache: the first-party components run from the native
//! code built into the binary, and their `describe()` answers were read at build time, so
//! nothing is compiled or instantiated before the first answer; a third-party plugin that needs
//! compiling is loaded after start-up, and the first run waits for it.

use crate::support::rpc::{Options, Pith};
use crate::support::{self, Fixture};
use pith::plugin_host::PluginHost;
use pith::plugin_host::discovery::EMBEDDED_PLUGINS;
use pith::plugin_host::plugin::PluginMeta;
use serde_json::json;

/// `word_count` (the example plugin) runs on a file of the fixture's workspace.
async fn counts_words(fixture: &Fixture, host: &PluginHost) {
    std::fs::write(fixture.workspace.join("n.txt"), "one two\n").unwrap();
    let out = host
        .call_tool("word_count", "c", &json!({"path": "n.txt"}), None, None)
        .await
        .unwrap();
    assert_eq!(out.text(), "1 lines, 2 words, 8 bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_cache_starts_with_nothing_compiled_and_runs_the_built_in_code() {
    let fixture = Fixture::new();
    let cache = fixture.root.path().join("cache");
    let (host, errors) = fixture
        .host_with_embedded(json!({}), Some(cache.clone()), true)
        .await;
    assert!(errors.is_empty(), "{errors:?}");
    // Every first-party tool and model is listed, yet nothing was compiled or loaded.
    let tools: Vec<String> = host.tools().iter().map(|(s, _)| s.name.clone()).collect();
    for name in ["read", "bash", "edit", "write", "grep", "find", "ls"] {
        assert!(tools.iter().any(|t| t == name), "{name} in {tools:?}");
    }
    assert!(host.plugins().iter().all(|p| !p.is_loaded()));
    assert_eq!(host.cache_stats(), Default::default());

    // The first call runs the built-in native code: no compile, nothing written to the cache.
    std::fs::write(fixture.workspace.join("a.txt"), "alpha\n").unwrap();
    let out = host
        .call_tool("read", "c1", &json!({"path": "a.txt"}), None, None)
        .await
        .unwrap();
    assert!(!out.is_error, "{out:?}");
    assert!(out.text().contains("alpha"));
    let stats = host.cache_stats();
    assert_eq!((stats.compiled, stats.hits, stats.precompiled), (0, 0, 1));
    assert!(!cache.join("components").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_build_time_descriptions_are_what_the_components_say() {
    let fixture = Fixture::new();
    let (host, errors) = fixture
        .host_with_embedded(json!({}), Some(support::shared_cache()), true)
        .await;
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!EMBEDDED_PLUGINS.is_empty());
    for embedded in EMBEDDED_PLUGINS {
        assert!(
            !embedded.described.is_empty() && !embedded.precompiled.is_empty(),
            "{} was neither precompiled nor described at build time",
            embedded.name
        );
        let plugin = host
            .plugins()
            .iter()
            .find(|p| p.path == format!("<embedded>/{}", embedded.name))
            .cloned()
            .unwrap_or_else(|| panic!("{} is loaded", embedded.name));
        let built = PluginMeta::from_described(&plugin.manifest.kinds, embedded.described)
            .unwrap_or_else(|err| panic!("{}: {err}", embedded.name));
        let live = host.describe_component(&plugin).await.unwrap();
        assert_eq!(built, live, "{}", embedded.name);
        assert_eq!(plugin.meta, live, "{}", embedded.name);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_directory_that_cannot_be_written_still_serves_and_compiles_in_memory() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    // Under a regular file, the directory can be neither created nor written (even by root,
    // for whom permission bits would not stop a write).
    let blocker = fixture.root.path().join("blocker");
    std::fs::write(&blocker, "a file").unwrap();
    let cache = blocker.join("cache");
    let (host, errors) = fixture
        .host_with_embedded(json!({}), Some(cache.clone()), true)
        .await;
    assert!(errors.is_empty(), "{errors:?}");
    counts_words(&fixture, &host).await;
    let read = host
        .call_tool("read", "c2", &json!({"path": "n.txt"}), None, None)
        .await
        .unwrap();
    assert!(read.text().contains("one two"));
    let stats = host.cache_stats();
    assert_eq!((stats.compiled, stats.precompiled), (1, 1));
    assert!(blocker.is_file() && !cache.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_that_needs_compiling_is_left_for_after_start_up() {
    let fixture = Fixture::new();
    fixture.install("examples/word-count");
    let cache = fixture.root.path().join("cache");
    let (host, errors) = fixture
        .host_deferring(json!({}), Some(cache.clone()), true, true)
        .await;
    assert!(errors.is_empty(), "{errors:?}");
    // Start-up compiled nothing: the new plugin is not listed yet, the first-party ones are.
    assert!(host.has_deferred());
    assert_eq!(host.cache_stats(), Default::default());
    let tools = || -> Vec<String> { host.tools().iter().map(|(s, _)| s.name.clone()).collect() };
    assert!(tools().contains(&"read".to_string()));
    assert!(!tools().contains(&"word_count".to_string()));
    // Whoever waits for it waits until the deferred load is done.
    let waiting = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        host.deferred_settled(),
    )
    .await;
    assert!(
        waiting.is_err(),
        "nothing has loaded the deferred plugin yet"
    );
    let report = host.load_deferred().await;
    assert_eq!(report.added, vec!["word-count".to_string()]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    host.deferred_done();
    host.deferred_settled().await;
    assert!(tools().contains(&"word_count".to_string()));
    counts_words(&fixture, &host).await;

    // The next start finds its metadata in the cache: nothing is deferred.
    drop(host);
    let (host, _) = fixture
        .host_deferring(json!({}), Some(cache), true, true)
        .await;
    assert!(!host.has_deferred());
    assert!(
        host.tools()
            .iter()
            .any(|(spec, _)| spec.name == "word_count")
    );
    host.deferred_settled().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_run_waits_for_a_plugin_compiling_after_start_up() {
    let plugins = support::plugins_dir_with(&["examples/word-count"]);
    let cache = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let script = json!([
        {"tool_calls": [{"id": "w", "name": "word_count", "arguments": {"path": "notes.txt"}}]},
        {"text": "counted"}
    ]);
    let mut pith = Pith::spawn(Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        env: vec![("PITH_CACHE_DIR".into(), cache.path().display().to_string())],
        ..Options::faux(script)
    })
    .await;
    std::fs::write(pith.work_dir().join("notes.txt"), "a b c\n").unwrap();
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true, "{state}");
    pith.call("p", json!({"type": "prompt", "message": "count"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = crate::support::rpc::tool_results(&end)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("a tool result in {end}"));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "1 lines, 3 words, 6 bytes");
    let changed = pith
        .frames
        .iter()
        .find(|f| f["type"] == "plugins_changed")
        .cloned()
        .unwrap_or_else(|| panic!("plugins_changed among {:#?}", pith.frames));
    assert_eq!(changed["added"], json!(["word-count"]));
}
