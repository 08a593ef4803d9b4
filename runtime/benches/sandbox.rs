//! The cost of the kernel sandbox on a trivial shell command: `bash -c true` spawned and
//! waited for, unconfined and under the `workspace-write` Landlock ruleset (built from the
//! default deny list, applied in the child). Budget: under 2 ms added.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pith::sandbox::SandboxPolicy;

fn run(policy: Option<&SandboxPolicy>, runtime: &tokio::runtime::Runtime) -> Duration {
    runtime.block_on(async {
        let started = Instant::now();
        let mut command = tokio::process::Command::new("bash");
        if let Some(policy) = policy {
            pith::sandbox::kernel::confine(&mut command, policy).expect("confined");
        }
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
    group.bench_function("under Landlock (workspace-write)", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(Some(&policy), &runtime)).sum())
    });
    group.finish();
}

criterion_group!(sandbox, benches);
criterion_main!(sandbox);
