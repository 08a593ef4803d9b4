//! Child processes through the host; only for plugins granted `process`.

use crate::bindings::imports::pith::plugin0_1_0::process as wit;

pub use wit::{Child, Command, ExitStatus, Interpreter, Output, ProcessError};

/// Runs `command_line` with `bash -c` in the workspace and returns the running child.
pub fn spawn(command_line: &str, timeout_ms: Option<u32>) -> Result<Child, ProcessError> {
    spawn_with(&Command {
        command_line: command_line.to_string(),
        cwd: None,
        env: Vec::new(),
        timeout_ms,
        spill_after: None,
    })
}

/// Runs a fully described command with `bash -c`.
pub fn spawn_with(command: &Command) -> Result<Child, ProcessError> {
    wit::spawn(command)
}

/// Runs a fully described command in `interpreter` (bash or PowerShell).
pub fn spawn_in(command: &Command, interpreter: Interpreter) -> Result<Child, ProcessError> {
    wit::spawn_in(command, interpreter)
}

impl ProcessError {
    /// A message for people and models (the generated `Display` is debug-like).
    pub fn message(&self) -> String {
        match self {
            ProcessError::Denied => {
                "process denied: this plugin was not granted `process`".to_string()
            }
            ProcessError::Spawn(reason) => format!("cannot start the process: {reason}"),
            ProcessError::BadCwd(path) => format!("bad working directory: {path}"),
        }
    }
}
