//! The cost of the kernel sandbox on a trivial shell command: `bash -c true` spawned and
//! waited for, unconfined and under `workspace-write` with each Linux mechanism (the mount
//! namespace with Landlock over whole trees, and Landlock alone, split around the deny list;
//! both applied in the child). Budget: under 3 ms added.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pith::sandbox::SandboxPolicy;

fn run(policy: Option<&SandboxPolicy>, runtime: &tokio::runtime::Runtime) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        let mut command = match policy {
            Some(policy) => {
                pith::sandbox::kernel::command("bash", policy)
                    .expect("confined")
                    .0
            }
            None => tokio::process::Command::new("bash"),
        };
        let status = command.arg("-c").arg("true").status().await.unwrap();
        assert!(status.success());
        started.elapsed()
    })
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = SandboxPolicy::workspace_write(dir.path());
    let mut group = c.benchmark_group("bash -c true");
    group.bench_function("unconfined", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(None, &runtime)).sum())
    });
    group.bench_function("namespace+landlock (workspace-write)", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(Some(&policy), &runtime)).sum())
    });
    // SAFETY: nothing else reads the environment meanwhile (the runtime's workers are idle);
    // the variable is read at each spawn.
    unsafe { std::env::set_var("PITH_SANDBOX_NAMESPACES", "0") };
    group.bench_function("landlock alone (workspace-write)", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(Some(&policy), &runtime)).sum())
    });
    group.finish();
}

criterion_group!(sandbox, benches);
criterion_main!(sandbox);
