//! A shell command as a child process, for the bash tool and the `bash` RPC command: it runs in
//! its own process group with its output piped, and its output ends when the shell does, as
//! pi's `waitForChildProcess` ends it. A command that backgrounds a process (`server &`)
//! leaves it holding the pipes; waiting for them to close would wait for that process. So
//! once the shell has exited, output is still read until the pipes close or fall quiet for
//! [`EXIT_GRACE`] (re-armed by every chunk, as pi's, and bounded by [`EXIT_GRACE_LIMIT`]);
//! then the output ends. The background process keeps running: its later output is read and
//! dropped (it never blocks on a full pipe nor dies of a closed one), and its process group is
//! never signalled once the shell has exited, not even when the call is dropped.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

/// How long the pipes may stay quiet after the shell exited before the output ends (pi's
/// `EXIT_STDIO_GRACE_MS`).
pub const EXIT_GRACE: Duration = Duration::from_millis(100);

/// The longest the output is read after the shell exited, however busy a backgrounded
/// process keeps the pipes (pi has no bound: `yes &` never returns there).
pub const EXIT_GRACE_LIMIT: Duration = Duration::from_secs(2);

/// Which pipe a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A running shell command.
pub struct ShellChild {
    child: tokio::process::Child,
    pgid: Option<i32>,
    output: mpsc::Receiver<(Pipe, Vec<u8>)>,
    /// The shell's exit code once it was reaped (128 + the signal for a signal).
    reaped: Option<Option<i32>>,
    /// When the shell was seen to exit while its output was read.
    exited_at: Option<tokio::time::Instant>,
    /// True once the output has ended (nothing more is read for the caller).
    output_ended: bool,
}

impl ShellChild {
    /// Starts `command` (its program, arguments, directory, environment and confinement set)
    /// with stdin empty, stdout and stderr piped, in a new process group.
    pub fn spawn(command: &mut tokio::process::Command) -> std::io::Result<ShellChild> {
        in_new_group(command);
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let pgid = child.id().map(|id| id as i32);
        let (tx, output) = mpsc::channel(64);
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(pump(stdout, tx.clone(), Pipe::Stdout));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(pump(stderr, tx, Pipe::Stderr));
        }
        Ok(ShellChild {
            child,
            pgid,
            output,
            reaped: None,
            exited_at: None,
            output_ended: false,
        })
    }

    /// The process group (the shell's pid), while the shell runs.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid.filter(|_| self.reaped.is_none())
    }

    /// The next chunk of output; `None` once the output has ended: the pipes closed, or the
    /// shell exited and the pipes fell quiet. Cancel-safe.
    pub async fn next_output(&mut self) -> Option<(Pipe, Vec<u8>)> {
        if self.output_ended {
            return None;
        }
        if self.reaped.is_none() {
            tokio::select! {
                chunk = self.output.recv() => {
                    if chunk.is_none() {
                        self.output_ended = true;
                    }
                    return chunk;
                }
                status = self.child.wait() => {
                    self.reaped = Some(status.ok().and_then(exit_code));
                }
            }
        }
        self.drain_after_exit().await
    }

    /// After the shell's exit: the next chunk while the pipes keep talking (each call re-arms
    /// the grace; the bound counts from the exit).
    async fn drain_after_exit(&mut self) -> Option<(Pipe, Vec<u8>)> {
        let exited_at = *self.exited_at.get_or_insert_with(tokio::time::Instant::now);
        let chunk = tokio::time::timeout(EXIT_GRACE, self.output.recv()).await;
        match chunk {
            Ok(Some(chunk)) if exited_at.elapsed() <= EXIT_GRACE_LIMIT => Some(chunk),
            _ => {
                // The pumps now drop what a background process still writes.
                self.output.close();
                self.output_ended = true;
                None
            }
        }
    }

    /// Waits for the shell's exit; its code (128 + the signal when a signal ended it, as a shell
    /// reports it).
    pub async fn wait(&mut self) -> std::io::Result<Option<i32>> {
        if let Some(code) = self.reaped {
            return Ok(code);
        }
        let status = self.child.wait().await?;
        self.reaped = Some(exit_code(status));
        Ok(exit_code(status))
    }

    /// Kills the whole process group, unless the shell has exited (its group then holds only
    /// what it left running in the background, which outlives the call).
    pub fn kill(&mut self) {
        if let Some(pgid) = self.pgid() {
            kill_process_group(pgid);
        }
    }
}

impl Drop for ShellChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The exit code a shell reports for `status`: the code, or 128 + the signal that ended it.
fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .or_else(|| status.signal().map(|signal| 128 + signal))
    }
    #[cfg(not(unix))]
    {
        status.code()
    }
}

/// Makes `command` start a process group of its own (its id is the process's): what a kill
/// of the command reaches.
pub fn in_new_group(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(windows)]
    {
        /// `CREATE_NEW_PROCESS_GROUP`.
        const NEW_GROUP: u32 = 0x0000_0200;
        command.creation_flags(NEW_GROUP);
    }
}

/// Asks a whole process group to end (SIGTERM; on Windows, `taskkill /T` of the tree).
pub fn terminate_process_group(pgid: i32) {
    end_group(pgid, false);
}

/// Ends a whole process group at once (SIGKILL; on Windows, `taskkill /T /F` of the tree).
pub fn kill_process_group(pgid: i32) {
    end_group(pgid, true);
}

fn end_group(pgid: i32, force: bool) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the group; it has no memory effects.
    unsafe {
        libc::kill(-pgid, if force { libc::SIGKILL } else { libc::SIGTERM });
    }
    #[cfg(windows)]
    taskkill(pgid, force);
}

/// Windows' way to end a process tree.
#[cfg(windows)]
fn taskkill(pid: i32, force: bool) {
    let mut command = std::process::Command::new("taskkill");
    command.args(["/T", "/PID", &pid.to_string()]);
    if force {
        command.arg("/F");
    }
    let _ = command.stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// Reads one pipe into the channel; once nobody reads the channel, the rest of the pipe's
/// output (a background process's) is read and dropped until the pipe closes.
async fn pump(
    mut reader: impl tokio::io::AsyncRead + Unpin,
    tx: mpsc::Sender<(Pipe, Vec<u8>)>,
    pipe: Pipe,
) {
    let mut buf = vec![0u8; 16 << 10];
    let mut listening = true;
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if listening && tx.send((pipe, buf[..n].to_vec())).await.is_err() {
                    listening = false;
                }
            }
        }
    }
}
