//! The `bash` RPC command (the user's own command, not a tool call): runs `bash -c` in the
//! working directory in its own process group (returning when the shell exits, see
//! [`crate::sandbox::shell`]), merges stdout and stderr, strips ANSI codes and
//! control characters, keeps a rolling tail and spills the full output to a temp file past
//! 50 KB, as pi's bash executor does. `abort_bash` kills the group of the running command.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pith_sdk::text::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, sanitize_binary, strip_ansi, truncate_tail,
};
use serde::Serialize;

use crate::agent::conversation::message::{BashExecutionMessage, now_ms};
use crate::sandbox::shell::ShellChild;

/// Characters of output kept in memory (twice the byte limit, as pi).
const ROLLING_CHARS: usize = 2 * DEFAULT_MAX_BYTES;

/// `bash`'s response data.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// The output (its tail when truncated).
    pub output: String,
    /// The exit code; absent when the command was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// True when it was killed.
    pub cancelled: bool,
    /// True when `output` is only the tail.
    pub truncated: bool,
    /// The file holding the whole output, when it went past 50 KB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

impl BashResult {
    /// The message recorded in the conversation.
    pub fn message(&self, command: &str) -> BashExecutionMessage {
        BashExecutionMessage {
            command: command.to_string(),
            output: self.output.clone(),
            exit_code: self.exit_code,
            cancelled: self.cancelled,
            truncated: self.truncated,
            full_output_path: self.full_output_path.clone(),
            timestamp: now_ms(),
            exclude_from_context: None,
        }
    }
}

/// The running `bash` command, for `abort_bash`.
#[derive(Default)]
pub struct BashControl {
    running: Mutex<Option<i32>>,
    aborted: std::sync::atomic::AtomicBool,
}

impl BashControl {
    /// Kills the running command's process group, if any.
    pub fn abort(&self) {
        if let Some(pgid) = *self.running.lock().unwrap_or_else(|p| p.into_inner()) {
            self.aborted
                .store(true, std::sync::atomic::Ordering::SeqCst);
            crate::sandbox::shell::kill_process_group(pgid);
        }
    }

    /// Runs `command` in `cwd`.
    pub async fn run(
        &self,
        command: &str,
        cwd: &Path,
        sandbox: &crate::sandbox::SandboxPolicy,
        on_output: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<BashResult, String> {
        let (mut bash, _) = crate::sandbox::kernel::command(sandbox.shell()?, sandbox)?;
        bash.arg("-c")
            .arg(sandbox.shell_command(command))
            .current_dir(cwd);
        // The group is recorded under the same lock as the spawn: an `abort_bash` that comes
        // once the shell can have run (and been seen running) always finds it.
        let mut shell = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            let shell =
                ShellChild::spawn(&mut bash).map_err(|err| format!("Cannot run bash: {err}"))?;
            *running = shell.pgid();
            shell
        };
        let mut output = OutputCollector::default();
        while let Some((_, chunk)) = shell.next_output().await {
            let clean = output.push(&chunk);
            if !clean.is_empty() {
                on_output(clean);
            }
        }
        if let Some(rest) = output.drain_pending() {
            on_output(&rest);
        }
        let code = shell
            .wait()
            .await
            .map_err(|err| format!("bash failed: {err}"))?;
        // An aborted command has no exit code (`cancelled`), as in pi.
        let aborted = self
            .aborted
            .swap(false, std::sync::atomic::Ordering::SeqCst);
        let code = code.filter(|_| !aborted);
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
        Ok(output.finish(code))
    }
}

/// Collects output as pi's executor does.
#[derive(Default)]
struct OutputCollector {
    pending: Vec<u8>,
    chunks: VecDeque<String>,
    chars: usize,
    raw_bytes: usize,
    spill: Option<(PathBuf, std::fs::File)>,
}

impl OutputCollector {
    /// Takes a chunk of output; returns its text as recorded (decoded, without ANSI codes,
    /// binary or carriage returns; a character split between chunks waits for the next).
    fn push(&mut self, bytes: &[u8]) -> &str {
        self.raw_bytes += bytes.len();
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let decoded = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
        self.pending.drain(..valid);
        let clean = sanitize_binary(&strip_ansi(&decoded)).replace('\r', "");
        if self.spill.is_none() && self.raw_bytes > DEFAULT_MAX_BYTES {
            let path = std::env::temp_dir().join(format!(
                "pith-bash-{}.log",
                &uuid::Uuid::new_v4().simple().to_string()[..16]
            ));
            if let Ok(mut file) = std::fs::File::create(&path) {
                for chunk in &self.chunks {
                    let _ = file.write_all(chunk.as_bytes());
                }
                self.spill = Some((path, file));
            }
        }
        if let Some((_, file)) = &mut self.spill {
            let _ = file.write_all(clean.as_bytes());
        }
        self.chars += clean.chars().count();
        self.chunks.push_back(clean);
        while self.chars > ROLLING_CHARS && self.chunks.len() > 1 {
            if let Some(old) = self.chunks.pop_front() {
                self.chars -= old.chars().count();
            }
        }
        self.chunks.back().map_or("", String::as_str)
    }

    /// Records the bytes still held back (an incomplete character at the end of the output);
    /// returns their text, if any.
    fn drain_pending(&mut self) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        let rest = std::mem::take(&mut self.pending);
        self.raw_bytes -= rest.len();
        let clean = self.push(&rest).to_string();
        (!clean.is_empty()).then_some(clean)
    }

    fn finish(mut self, code: Option<i32>) -> BashResult {
        self.drain_pending();
        let joined: String = self.chunks.iter().map(String::as_str).collect();
        let truncation = truncate_tail(&joined, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        BashResult {
            output: if truncation.truncated {
                truncation.content
            } else {
                joined
            },
            exit_code: code,
            cancelled: code.is_none(),
            truncated: truncation.truncated,
            full_output_path: self.spill.map(|(path, _)| path.display().to_string()),
        }
    }
}
