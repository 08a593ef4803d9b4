//! The first start on an empty compile cache: the first-party components run from the native
//! code built into the binary, and their `describe()` answers were read at build time, so
//! nothing is compiled or instantiated before the first answer.

use crate::support::{self, Fixture};
use pith::plugin_host::discovery::EMBEDDED_PLUGINS;
use pith::plugin_host::plugin::PluginMeta;
use serde_json::json;

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
    std::fs::write(fixture.workspace.join("n.txt"), "one two\n").unwrap();
    let out = host
        .call_tool("word_count", "c", &json!({"path": "n.txt"}), None, None)
        .await
        .unwrap();
    assert_eq!(out.text(), "1 lines, 2 words, 8 bytes");
    let read = host
        .call_tool("read", "c2", &json!({"path": "n.txt"}), None, None)
        .await
        .unwrap();
    assert!(read.text().contains("one two"));
    let stats = host.cache_stats();
    assert_eq!((stats.compiled, stats.precompiled), (1, 1));
    assert!(blocker.is_file() && !cache.exists());
}
