//! A child process a plugin started: the representation of `pith:plugin/process`'s `child`
//! resource (see [`super::imports::process`]), and the spill of its whole output to a file.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::sandbox::shell::ShellChild;

/// The lines past which the output is written to a file too, as a tool cuts it to pi's 2,000.
const SPILL_LINES: usize = pith_sdk::text::DEFAULT_MAX_LINES;

/// The whole output written to a temp file once it passes a threshold (bytes), or pi's line
/// limit (so that a tool that cut it by lines can name the whole output, as pi's bash does).
pub(super) struct Spill {
    pub(super) threshold: usize,
    pub(super) seen: usize,
    pub(super) newlines: usize,
    pub(super) head: Vec<u8>,
    pub(super) file: Option<(String, std::fs::File)>,
    pub(super) failed: bool,
}

impl Spill {
    pub(super) fn write(&mut self, bytes: &[u8]) {
        use std::io::Write;
        if self.failed {
            return;
        }
        self.seen += bytes.len();
        self.newlines += bytes.iter().filter(|b| **b == b'\n').count();
        if self.file.is_none() {
            self.head.extend_from_slice(bytes);
            if self.seen <= self.threshold && self.newlines <= SPILL_LINES {
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
                Err(_) => {
                    // No file can be made: keep nothing more (the tool names none).
                    self.threshold = usize::MAX;
                    self.newlines = usize::MIN;
                    self.head = Vec::new();
                    self.failed = true;
                }
            }
            return;
        }
        if let Some((_, file)) = &mut self.file {
            let _ = file.write_all(bytes);
        }
    }
}

/// A running child.
pub struct ChildProcess {
    pub(super) shell: ShellChild,
    pub(super) timed_out: Arc<AtomicBool>,
    pub(super) killed: bool,
    pub(super) exited: Option<Exited>,
    pub(super) timer: Option<tokio::task::JoinHandle<()>>,
    pub(super) spill: Option<Spill>,
}

/// How a child ended, kept for later `wait`s (`exit-status` in the WIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exited {
    /// The exit code, when it exited normally.
    pub code: Option<i32>,
    /// Killed because its timeout passed.
    pub timed_out: bool,
    /// Killed by `kill` or by cancellation.
    pub killed: bool,
}

impl ChildProcess {
    pub(super) fn kill_group(&mut self) {
        if self.exited.is_none() {
            self.shell.kill();
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
}
