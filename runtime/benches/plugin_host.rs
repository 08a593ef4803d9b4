//! Plugin-host benches: a trivial tool call (fresh instance from the cached `InstancePre`, the
//! pooling allocator), a tool call heard by ten extensions (pi's `tool_call` hook, each on its
//! warm instance), loading a component cold with and without the disk cache, and the binary's
//! spawn-to-first-response with every first-party plugin.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;

use pith::agent::extensions::hooks::{Event, EventResult, ToolCallEvent};
use pith::plugin_host::discovery::{BUILT_PLUGINS_DIR, Origin};
use pith::plugin_host::extension::ExtensionInstance;
use pith::plugin_host::session_context::Sessionless;
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;
use serde_json::json;

fn install_probe(plugins: &Path) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::copy(
        Path::new(BUILT_PLUGINS_DIR).join("probe.wasm"),
        plugins.join("probe.wasm"),
    )
    .unwrap();
    std::fs::copy(
        repo.join("plugins/testing/probe/pith.toml"),
        plugins.join("probe.toml"),
    )
    .unwrap();
}

fn options(workspace: &Path, plugins: &Path, cache: Option<PathBuf>) -> HostOptions {
    HostOptions {
        workspace: workspace.to_path_buf(),
        plugin_dirs: vec![(plugins.to_path_buf(), Origin::Flag)],
        cache_dir: cache,
        settings: Settings::from_value(json!({})),
        embedded: false,
        plugin_files: Vec::new(),
        no_extensions: false,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(workspace)),
    }
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&plugins).unwrap();
    install_probe(&plugins);
    let cache = dir.path().join("cache");

    let (host, errors) = runtime
        .block_on(PluginHost::load(options(
            &workspace,
            &plugins,
            Some(cache.clone()),
        )))
        .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let args = json!({"op": "echo"});
    runtime
        .block_on(host.call_tool("probe", "warm", &args, None, None))
        .unwrap();
    c.bench_function("tool call: instantiate + call a trivial tool", |b| {
        b.to_async(&runtime).iter(|| async {
            host.call_tool("probe", "b", &args, None, None)
                .await
                .unwrap()
        })
    });

    // Ten copies of the permission-gate port, each hearing `tool_call` and letting a `read`
    // pass: what the session's hook does for one call, instance by instance in load order.
    let gates = gate_instances(&runtime, &workspace, dir.path());
    let (gate_host, gates) = (gates.0, tokio::sync::Mutex::new(gates.1));
    let tool_call = || {
        Event::ToolCall(ToolCallEvent {
            tool_name: "read".into(),
            tool_call_id: "toolu_1".into(),
            input: r#"{"path":"small.txt"}"#.into(),
        })
    };
    c.bench_function(
        "a tool call heard by 10 extensions (tool_call, warm)",
        |b| {
            b.to_async(&runtime).iter(|| async {
                for gate in gates.lock().await.iter_mut() {
                    let answer = gate.on_event(&gate_host, tool_call()).await.unwrap();
                    assert!(matches!(answer, Ok(EventResult::Continue)));
                }
            })
        },
    );

    let mut group = c.benchmark_group("cold load of a component (load + first call)");
    group.sample_size(10);
    group.bench_function("without the disk cache", |b| {
        b.to_async(&runtime).iter(|| async {
            let (host, _) = PluginHost::load(options(&workspace, &plugins, None))
                .await
                .unwrap();
            host.call_tool("probe", "b", &args, None, None)
                .await
                .unwrap()
        })
    });
    group.bench_function("with the disk cache", |b| {
        b.to_async(&runtime).iter(|| async {
            let (host, _) = PluginHost::load(options(&workspace, &plugins, Some(cache.clone())))
                .await
                .unwrap();
            host.call_tool("probe", "b", &args, None, None)
                .await
                .unwrap()
        })
    });
    group.finish();

    let agent = dir.path().join("agent");
    let binary_cache = dir.path().join("binary-cache");
    let spawn = || spawn_to_first_response(&agent, &binary_cache, &workspace);
    spawn(); // warms the compile cache
    let mut group = c.benchmark_group("binary");
    group.sample_size(20);
    group.bench_function(
        "spawn to first response (all first-party plugins, warm cache)",
        |b| b.iter_custom(|iters| (0..iters).map(|_| spawn()).sum()),
    );
    group.finish();
}

/// A host with ten copies of the permission-gate port, and a warm instance of each (outside
/// any session).
fn gate_instances(
    runtime: &tokio::runtime::Runtime,
    workspace: &Path,
    root: &Path,
) -> (PluginHost, Vec<ExtensionInstance>) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let plugins = root.join("gates");
    std::fs::create_dir_all(&plugins).unwrap();
    let manifest =
        std::fs::read_to_string(repo.join("plugins/examples/permission-gate/pith.toml")).unwrap();
    for n in 0..10 {
        std::fs::copy(
            Path::new(BUILT_PLUGINS_DIR).join("permission_gate.wasm"),
            plugins.join(format!("gate{n}.wasm")),
        )
        .unwrap();
        let renamed = manifest
            .replace("id = \"permission-gate\"", &format!("id = \"gate-{n}\""))
            .replace("\n[", &format!("component = \"gate{n}.wasm\"\n\n["));
        std::fs::write(plugins.join(format!("gate{n}.toml")), renamed).unwrap();
    }
    let (host, errors) = runtime
        .block_on(PluginHost::load(options(workspace, &plugins, None)))
        .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let mut instances: Vec<ExtensionInstance> = host
        .plugins()
        .iter()
        .filter(|p| p.meta.extension.is_some())
        .map(|p| ExtensionInstance::new(p.clone(), Arc::new(Sessionless)))
        .collect();
    assert_eq!(instances.len(), 10);
    runtime.block_on(async {
        for instance in instances.iter_mut() {
            let event = Event::ToolCall(ToolCallEvent {
                tool_name: "read".into(),
                tool_call_id: "warm".into(),
                input: "{}".into(),
            });
            instance.on_event(&host, event).await.unwrap().unwrap();
        }
    });
    (host, instances)
}

/// Spawns `pith --mode rpc`, sends `get_state`, and times until the first response line.
fn spawn_to_first_response(agent: &Path, cache: &Path, cwd: &Path) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pith"))
        .args(["--mode", "rpc"])
        .env("PITH_AGENT_DIR", agent)
        .env("PITH_CACHE_DIR", cache)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn pith");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\":\"1\",\"type\":\"get_state\"}\n")
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let elapsed = started.elapsed();
    assert!(line.contains("\"type\":\"response\""), "{line}");
    drop(stdin);
    let _ = child.wait();
    elapsed
}

criterion_group!(plugin_host_benches, benches);
criterion_main!(plugin_host_benches);
