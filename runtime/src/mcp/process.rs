//! A stdio MCP server's process: spawned by pith itself (not by the SDK) so that it runs under
//! the same kernel sandbox as the shell, in its own process group, with its standard error read
//! into the MCP log. Every live server's group is recorded so that none outlives pith: a
//! server is stopped as pi stops it (stdin closed, then SIGTERM, then SIGKILL of the group),
//! and whatever is still recorded when pith exits is killed.

use std::collections::HashSet;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::log::McpLog;
use crate::sandbox::SandboxPolicy;

/// How long a server has to exit on its own once its stdin is closed, and then after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_millis(1500);

/// The last lines of a server's standard error kept for error messages.
const STDERR_TAIL_LINES: usize = 8;

/// The process groups of the servers now running.
static LIVE_GROUPS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn live_groups() -> std::sync::MutexGuard<'static, Option<HashSet<i32>>> {
    LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stops every MCP server still running (pith is exiting): SIGTERM to each process group,
/// a moment to exit, then SIGKILL.
pub fn stop_all() {
    let groups: Vec<i32> = live_groups().take().into_iter().flatten().collect();
    if groups.is_empty() {
        return;
    }
    for pgid in &groups {
        crate::sandbox::shell::terminate_process_group(*pgid);
    }
    std::thread::sleep(Duration::from_millis(200));
    for pgid in groups {
        crate::sandbox::shell::kill_process_group(pgid);
    }
}

/// What starts a stdio server.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// The server's name (for the log and messages).
    pub server: &'a str,
    /// The program.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Variables set for it (after the sandbox withheld the keys it does not name).
    pub env: &'a [(String, String)],
    /// Its working directory.
    pub cwd: &'a Path,
    /// The sandbox it runs under.
    pub policy: &'a SandboxPolicy,
}

/// A running stdio server.
pub struct ServerProcess {
    child: Child,
    pgid: Option<i32>,
    stderr_tail: Arc<Mutex<Vec<String>>>,
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The sandbox cannot hold it and the settings require it.
    #[error("{0}")]
    Sandbox(String),
    /// The program could not be started.
    #[error("cannot start `{command}`: {source}")]
    Start {
        /// The program.
        command: String,
        /// The cause.
        source: std::io::Error,
    },
}

impl ServerProcess {
    /// Starts the server: its stdout and stdin are the MCP channel (returned), its stderr goes
    /// to the log.
    pub fn spawn(
        launch: &Launch<'_>,
        log: Arc<McpLog>,
    ) -> Result<(ServerProcess, ChildStdout, ChildStdin), SpawnError> {
        let (mut command, _) = crate::sandbox::kernel::command(launch.command, launch.policy)
            .map_err(SpawnError::Sandbox)?;
        // Set after the confinement withheld the keys: a key the entry names reaches it.
        command
            .args(launch.args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(launch.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::sandbox::shell::in_new_group(&mut command);
        let mut child = command.spawn().map_err(|source| SpawnError::Start {
            command: launch.command.to_string(),
            source,
        })?;
        let pgid = child.id().map(|id| id as i32);
        if let Some(pgid) = pgid {
            live_groups().get_or_insert_with(HashSet::new).insert(pgid);
        }
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(stderr) = child.stderr.take() {
            let tail = stderr_tail.clone();
            let server = launch.server.to_string();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    log.write(
                        &server,
                        "stderr",
                        None,
                        &serde_json::Value::String(line.clone()),
                    );
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == STDERR_TAIL_LINES {
                        tail.remove(0);
                    }
                    tail.push(line);
                }
            });
        }
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(SpawnError::Start {
                command: launch.command.to_string(),
                source: std::io::Error::other("no pipes to the process"),
            });
        };
        Ok((
            ServerProcess {
                child,
                pgid,
                stderr_tail,
            },
            stdout,
            stdin,
        ))
    }

    /// The last lines the server wrote to its standard error, joined.
    pub fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// True while the process runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the server once its stdin is closed (the caller closed the MCP channel): waits,
    /// then SIGTERM to its group, waits, then SIGKILL.
    pub async fn stop(mut self) {
        if tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .is_err()
        {
            if let Some(pgid) = self.pgid {
                crate::sandbox::shell::terminate_process_group(pgid);
            }
            if tokio::time::timeout(EXIT_WAIT, self.child.wait())
                .await
                .is_err()
            {
                self.kill_group();
                let _ = self.child.wait().await;
            }
        }
        // Whatever the server left running in its group goes with it.
        self.kill_group();
    }

    fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            crate::sandbox::shell::kill_process_group(pgid);
            if let Some(groups) = live_groups().as_mut() {
                groups.remove(&pgid);
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill_group();
    }
}
