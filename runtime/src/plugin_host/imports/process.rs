//! `pith:plugin/process`: child processes for plugins granted `process` (the bash tool).
//! Each child runs `bash -c` in the workspace in its own process group; the whole group is
//! killed on `kill`, on timeout, and when the guest drops the child or the call is cancelled.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use wasmtime::component::Resource;

use crate::plugin_host::bindings::imports::pith::plugin::process::{
    Command, ExitStatus, Host, HostChild, Output, ProcessError,
};
use crate::plugin_host::sandbox::StoreState;

/// The whole output written to a temp file once it passes a threshold.
struct Spill {
    threshold: usize,
    seen: usize,
    head: Vec<u8>,
    file: Option<(String, std::fs::File)>,
}

impl Spill {
    fn write(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.seen += bytes.len();
        if self.file.is_none() {
            self.head.extend_from_slice(bytes);
            if self.seen <= self.threshold {
                return;
            }
            let path = std::env::temp_dir().join(format!(
                "pith-bash-{}.log",
                &uuid::Uuid::new_v4().simple().to_string()[..16]
            ));
            match std::fs::File::create(&path) {
                Ok(mut file) => {
                    let _ = file.write_all(&self.head);
                    self.head = Vec::new();
                    self.file = Some((path.display().to_string(), file));
                }
                Err(_) => self.threshold = usize::MAX,
            }
            return;
        }
        if let Some((_, file)) = &mut self.file {
            let _ = file.write_all(bytes);
        }
    }
}

type SharedSpill = Arc<std::sync::Mutex<Spill>>;

/// A running child.
pub struct ChildProcess {
    child: tokio::process::Child,
    pgid: Option<i32>,
    output: mpsc::Receiver<Output>,
    timed_out: Arc<AtomicBool>,
    killed: bool,
    exited: Option<ExitStatus>,
    timer: Option<tokio::task::JoinHandle<()>>,
    spill: Option<SharedSpill>,
}

impl ChildProcess {
    fn kill_group(&mut self) {
        if self.exited.is_none()
            && let Some(pgid) = self.pgid
        {
            kill_process_group(pgid);
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.kill_group();
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
}

/// Sends SIGKILL to a whole process group.
fn kill_process_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals the group; it has no memory effects.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

impl Host for StoreState {
    async fn spawn(&mut self, cmd: Command) -> Result<Resource<ChildProcess>, ProcessError> {
        if !self.spec.capabilities.process {
            return Err(ProcessError::Denied);
        }
        let workspace = self
            .spec
            .workspace
            .clone()
            .ok_or_else(|| ProcessError::BadCwd("no workspace".into()))?;
        let cwd = match &cmd.cwd {
            None => workspace.clone(),
            Some(dir) => inside_workspace(&workspace, dir)
                .ok_or_else(|| ProcessError::BadCwd(dir.clone()))?,
        };
        let mut command = tokio::process::Command::new("bash");
        crate::sandbox::kernel::confine(&mut command, &self.spec.policy)
            .map_err(ProcessError::Spawn)?;
        command
            .arg("-c")
            .arg(&cmd.command_line)
            .current_dir(&cwd)
            .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|err| ProcessError::Spawn(err.to_string()))?;
        let pgid = child.id().map(|id| id as i32);
        let (tx, output) = mpsc::channel(64);
        let spill = cmd.spill_after.map(|threshold| {
            Arc::new(std::sync::Mutex::new(Spill {
                threshold: threshold as usize,
                seen: 0,
                head: Vec::new(),
                file: None,
            }))
        });
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(pump(stdout, tx.clone(), Output::Stdout, spill.clone()));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(pump(stderr, tx, Output::Stderr, spill.clone()));
        }
        let timed_out = Arc::new(AtomicBool::new(false));
        let timer = match (cmd.timeout_ms, pgid) {
            (Some(ms), Some(pgid)) => {
                let flag = timed_out.clone();
                Some(tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(ms.into())).await;
                    flag.store(true, Ordering::SeqCst);
                    kill_process_group(pgid);
                }))
            }
            _ => None,
        };
        let process = ChildProcess {
            child,
            pgid,
            output,
            timed_out,
            killed: false,
            exited: None,
            timer,
            spill,
        };
        self.table()
            .push(process)
            .map_err(|err| ProcessError::Spawn(err.to_string()))
    }
}

/// Resolves a guest directory inside the workspace (guest paths are host paths, since the
/// workspace is preopened at its own absolute path); `None` when it escapes or is missing.
fn inside_workspace(workspace: &Path, dir: &str) -> Option<PathBuf> {
    let joined = workspace.join(dir);
    let real = joined.canonicalize().ok()?;
    let root = workspace.canonicalize().ok()?;
    real.starts_with(&root).then_some(real)
}

async fn pump(
    mut reader: impl tokio::io::AsyncRead + Unpin,
    tx: mpsc::Sender<Output>,
    wrap: fn(Vec<u8>) -> Output,
    spill: Option<SharedSpill>,
) {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if let Some(spill) = &spill
                    && let Ok(mut spill) = spill.lock()
                {
                    spill.write(&buf[..n]);
                }
                if tx.send(wrap(buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}

impl HostChild for StoreState {
    async fn next_output(&mut self, this: Resource<ChildProcess>) -> Option<Output> {
        let _host_time = self.clock.enter_host();
        let cancel = self.cancel.clone();
        let child = self.table().get_mut(&this).ok()?;
        let Some(cancel) = cancel else {
            return child.output.recv().await;
        };
        if cancel.is_cancelled() && !child.killed {
            child.killed = true;
            child.kill_group();
        }
        tokio::select! {
            chunk = child.output.recv() => chunk,
            _ = cancel.cancelled(), if !child.killed => {
                child.killed = true;
                child.kill_group();
                child.output.recv().await
            }
        }
    }

    async fn wait(&mut self, this: Resource<ChildProcess>) -> ExitStatus {
        let _host_time = self.clock.enter_host();
        let cancel = self.cancel.clone();
        let Ok(child) = self.table().get_mut(&this) else {
            return ExitStatus {
                code: None,
                timed_out: false,
                killed: false,
            };
        };
        if let Some(status) = child.exited {
            return status;
        }
        let code = match cancel {
            Some(cancel) => tokio::select! {
                status = child.child.wait() => status.ok().and_then(|s| s.code()),
                _ = cancel.cancelled() => {
                    child.killed = true;
                    child.kill_group();
                    child.child.wait().await.ok().and_then(|s| s.code())
                }
            },
            None => child.child.wait().await.ok().and_then(|s| s.code()),
        };
        if let Some(timer) = child.timer.take() {
            timer.abort();
        }
        let status = ExitStatus {
            code,
            timed_out: child.timed_out.load(Ordering::SeqCst),
            killed: child.killed,
        };
        child.exited = Some(status);
        status
    }

    async fn kill(&mut self, this: Resource<ChildProcess>) {
        if let Ok(child) = self.table().get_mut(&this) {
            child.killed = true;
            child.kill_group();
        }
    }

    async fn full_output_path(&mut self, this: Resource<ChildProcess>) -> Option<String> {
        let child = self.table().get(&this).ok()?;
        let spill = child.spill.as_ref()?.lock().ok()?;
        spill.file.as_ref().map(|(path, _)| path.clone())
    }

    async fn drop(&mut self, this: Resource<ChildProcess>) -> wasmtime::Result<()> {
        self.table().delete(this)?;
        Ok(())
    }
}
