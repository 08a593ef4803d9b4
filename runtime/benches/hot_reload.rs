//! Hot reload: the time from a plugin file's rename to its new version serving a call (budget
//! 300 ms). A watcher on a plugins directory sees the rename, the host compiles and
//! pre-instantiates the new component and swaps it in, and a tool call answers from it.
//! Measured without a compile cache (a fresh build is never cached) and with one (switching
//! back to a version compiled before).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pith::plugin_host::discovery::{BUILT_PLUGINS_DIR, Origin};
use pith::plugin_host::{HostOptions, PluginHost, watch};
use pith::settings::Settings;
use serde_json::json;

const ROUNDS: usize = 20;

fn component(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(BUILT_PLUGINS_DIR).join(format!("{name}.wasm"))).unwrap()
}

async fn measure(cache: Option<PathBuf>) -> Vec<Duration> {
    let dir = tempfile::tempdir().unwrap();
    let (workspace, plugins) = (dir.path().join("ws"), dir.path().join("plugins"));
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(workspace.join("notes.txt"), "a b c\n").unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::copy(
        repo.join("plugins/examples/word-count/pith.toml"),
        plugins.join("word-count.toml"),
    )
    .unwrap();
    let versions = [component("word_count"), component("word_count_v2")];
    std::fs::write(plugins.join("word-count.wasm"), &versions[0]).unwrap();
    let (host, errors) = PluginHost::load(HostOptions {
        workspace: workspace.clone(),
        plugin_dirs: vec![(plugins.clone(), Origin::Flag)],
        cache_dir: cache,
        settings: Settings::from_value(json!({})),
        embedded: false,
        plugin_files: Vec::new(),
        no_extensions: false,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(&workspace)),
    })
    .await
    .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let host = Arc::new(host);
    let (reloaded, mut reloads) = tokio::sync::mpsc::unbounded_channel();
    let _watcher = watch::watch(host.clone(), move |report| {
        let _ = reloaded.send(report);
    })
    .unwrap();
    let mut times = Vec::new();
    for round in 1..=ROUNDS {
        let next = &versions[round % 2];
        let expected = if round % 2 == 1 { "v2: " } else { "1 lines" };
        let partial = plugins.join("word-count.partial");
        std::fs::write(&partial, next).unwrap();
        let started = Instant::now();
        std::fs::rename(&partial, plugins.join("word-count.wasm")).unwrap();
        let report = reloads.recv().await.unwrap();
        assert_eq!(report.updated, vec!["word-count".to_string()]);
        let output = host
            .call_tool("word_count", "c", &json!({"path": "notes.txt"}), None, None)
            .await
            .unwrap();
        times.push(started.elapsed());
        let text = serde_json::to_value(&output.content).unwrap()[0]["text"].clone();
        assert!(text.as_str().unwrap().starts_with(expected), "{text}");
    }
    times
}

fn report(label: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "hot reload {label}: median {:.1} ms, p90 {:.1} ms, max {:.1} ms over {} swaps (budget 300 ms)",
        ms(times[times.len() / 2]),
        ms(times[times.len() * 9 / 10]),
        ms(times[times.len() - 1]),
        times.len()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    report("(new build, compiled)", runtime.block_on(measure(None)));
    report(
        "(version seen before, disk cache)",
        runtime.block_on(measure(Some(cache.path().to_path_buf()))),
    );
}
