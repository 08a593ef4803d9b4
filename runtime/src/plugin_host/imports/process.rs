//! `pith:plugin/process`: child processes for plugins granted `process` (the bash and
//! powershell tools). Each child runs `bash -c` (or PowerShell's `-Command`) in the workspace
//! in its own process group
//! ([`crate::sandbox::shell`]: its output ends when the shell exits, whatever it left running
//! in the background); the whole group is killed on `kill`, on timeout, and when the call is
//! cancelled or the guest drops the child while the shell runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::Resource;

use crate::plugin_host::bindings::imports::pith::plugin0_1_0::process::{
    Command, ExitStatus, Host, HostChild, Interpreter, Output, ProcessError,
};
use crate::plugin_host::child_process::{ChildProcess, Exited, Spill};
use crate::plugin_host::sandbox::StoreState;
use crate::sandbox::shell::{Pipe, ShellChild, kill_process_group};
use crate::sandbox::shell_program;

impl ChildProcess {
    /// The next chunk of output (see [`ShellChild::next_output`]), also written to the spill.
    async fn next_chunk(&mut self) -> Option<Output> {
        let (pipe, bytes) = self.shell.next_output().await?;
        if let Some(spill) = &mut self.spill {
            spill.write(&bytes);
        }
        Some(match pipe {
            Pipe::Stdout => Output::Stdout(bytes),
            Pipe::Stderr => Output::Stderr(bytes),
        })
    }
}

impl Host for StoreState {
    async fn spawn(&mut self, cmd: Command) -> Result<Resource<ChildProcess>, ProcessError> {
        self.spawn_in(cmd, Interpreter::Bash).await
    }

    async fn spawn_in(
        &mut self,
        cmd: Command,
        interpreter: Interpreter,
    ) -> Result<Resource<ChildProcess>, ProcessError> {
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
        // A denied command the host approved running again outside the sandbox.
        let unsandboxed = self.spec.escalated.unsandboxed_shell && self.spec.first_party;
        let (program, args) = match interpreter {
            Interpreter::Bash => {
                let shell = self.spec.policy.shell().map_err(ProcessError::Spawn)?;
                let line = if self.spec.first_party {
                    // The bash tool's command, after `shellCommandPrefix` as pi's.
                    self.spec.policy.shell_command(&cmd.command_line)
                } else {
                    cmd.command_line.clone()
                };
                (shell, vec!["-c".to_string(), line])
            }
            Interpreter::Powershell => {
                let shell = shell_program::powershell().map_err(ProcessError::Spawn)?;
                let mut args: Vec<String> = shell_program::POWERSHELL_ARGS
                    .iter()
                    .map(|arg| arg.to_string())
                    .collect();
                args.push(shell_program::powershell_command(&shell, &cmd.command_line));
                (shell, args)
            }
        };
        let mut command = if unsandboxed {
            tokio::process::Command::new(program)
        } else {
            crate::sandbox::kernel::command(program, &self.spec.policy)
                .map_err(ProcessError::Spawn)?
                .0
        };
        command
            .args(&args)
            .current_dir(&cwd)
            .envs(
                self.spec
                    .process_env
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .envs(cmd.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let shell =
            ShellChild::spawn(&mut command).map_err(|err| ProcessError::Spawn(err.to_string()))?;
        let spill = cmd.spill_after.map(|threshold| Spill {
            threshold: threshold as usize,
            seen: 0,
            newlines: 0,
            head: Vec::new(),
            file: None,
            failed: false,
        });
        let timed_out = Arc::new(AtomicBool::new(false));
        let timer = match (cmd.timeout_ms, shell.pgid()) {
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
            shell,
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

impl HostChild for StoreState {
    async fn next_output(&mut self, this: Resource<ChildProcess>) -> Option<Output> {
        let _host_time = self.clock.enter_host();
        let cancel = self.cancel.clone();
        let child = self.table().get_mut(&this).ok()?;
        let Some(cancel) = cancel else {
            return child.next_chunk().await;
        };
        if cancel.is_cancelled() && !child.killed {
            child.killed = true;
            child.kill_group();
        }
        tokio::select! {
            chunk = child.next_chunk() => chunk,
            _ = cancel.cancelled(), if !child.killed => {
                child.killed = true;
                child.kill_group();
                child.next_chunk().await
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
        if let Some(exited) = child.exited {
            return ExitStatus {
                code: exited.code,
                timed_out: exited.timed_out,
                killed: exited.killed,
            };
        }
        let code = match cancel {
            Some(cancel) => tokio::select! {
                code = child.shell.wait() => code.ok().flatten(),
                _ = cancel.cancelled() => {
                    child.killed = true;
                    child.kill_group();
                    child.shell.wait().await.ok().flatten()
                }
            },
            None => child.shell.wait().await.ok().flatten(),
        };
        if let Some(timer) = child.timer.take() {
            timer.abort();
        }
        let status = ExitStatus {
            code,
            timed_out: child.timed_out.load(Ordering::SeqCst),
            killed: child.killed,
        };
        child.exited = Some(Exited {
            code: status.code,
            timed_out: status.timed_out,
            killed: status.killed,
        });
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
        let spill = child.spill.as_ref()?;
        spill.file.as_ref().map(|(path, _)| path.clone())
    }

    async fn drop(&mut self, this: Resource<ChildProcess>) -> wasmtime::Result<()> {
        self.table().delete(this)?;
        Ok(())
    }
}
