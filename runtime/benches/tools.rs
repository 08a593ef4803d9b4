//! The grep and find tool components over a 10,000-file tree, next to `grep -rn` and
//! `find -name` on the same tree.

use std::path::Path;
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use pith::plugin_host::discovery::Origin;
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;
use serde_json::json;

fn make_tree(root: &Path) {
    for d in 0..100 {
        let dir = root.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let mut text = String::new();
            for line in 0..20 {
                if (d * 100 + f) % 97 == 0 && line == 7 {
                    text.push_str("let needle = find_me();\n");
                } else {
                    text.push_str(&format!("fn item_{line}() -> u32 {{ {line} }}\n"));
                }
            }
            let ext = if f % 2 == 0 { "rs" } else { "txt" };
            std::fs::write(dir.join(format!("file{f:03}.{ext}")), text).unwrap();
        }
    }
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path());
    let (host, errors) = runtime
        .block_on(PluginHost::load(HostOptions {
            workspace: dir.path().to_path_buf(),
            plugin_dirs: Vec::<(std::path::PathBuf, Origin)>::new(),
            cache_dir: Some(std::env::temp_dir().join("pith-bench-cache")),
            settings: Settings::from_value(json!({})),
            embedded: true,
            plugin_files: Vec::new(),
            no_extensions: false,
            sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(dir.path())),
        }))
        .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let grep_args = json!({"pattern": "needle", "limit": 1000});
    let find_args = json!({"pattern": "*.rs", "limit": 100000});
    let found = runtime
        .block_on(host.call_tool("grep", "b", &grep_args, None, None))
        .unwrap();
    assert_eq!(
        found.text().lines().count(),
        104,
        "{}",
        &found.text()[..200]
    );

    let mut group = c.benchmark_group("10,000-file tree");
    group.sample_size(10);
    group.bench_function("grep tool (component)", |b| {
        b.to_async(&runtime).iter(|| async {
            host.call_tool("grep", "b", &grep_args, None, None)
                .await
                .unwrap()
        })
    });
    group.bench_function("grep -rn (GNU grep)", |b| {
        b.iter(|| {
            Command::new("grep")
                .args(["-rn", "needle", "."])
                .current_dir(dir.path())
                .output()
                .unwrap()
        })
    });
    group.bench_function("find tool (component)", |b| {
        b.to_async(&runtime).iter(|| async {
            host.call_tool("find", "b", &find_args, None, None)
                .await
                .unwrap()
        })
    });
    group.bench_function("find -name (GNU find)", |b| {
        b.iter(|| {
            Command::new("find")
                .args([".", "-name", "*.rs"])
                .current_dir(dir.path())
                .output()
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(tools, benches);
criterion_main!(tools);
