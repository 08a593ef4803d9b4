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

/// What [`exec`] gives back (pi's `pi.exec` result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    /// Everything the program wrote to stdout (lossy UTF-8).
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
    /// Its exit code (`-1` when it was killed or timed out).
    pub code: i32,
    /// True when it was killed or ran past `timeout_ms`.
    pub killed: bool,
}

/// Runs `program` with `args` (each passed as one argument, quoted for `bash`) in the
/// workspace and waits for it, as pi's `pi.exec(command, args, {timeout})`.
pub fn exec(
    program: &str,
    args: &[&str],
    timeout_ms: Option<u32>,
) -> Result<ExecResult, ProcessError> {
    let command_line = std::iter::once(program)
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let child = spawn(&command_line, timeout_ms)?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    while let Some(output) = child.next_output() {
        match output {
            Output::Stdout(bytes) => stdout.extend(bytes),
            Output::Stderr(bytes) => stderr.extend(bytes),
        }
    }
    let status = child.wait();
    let killed = status.killed || status.timed_out;
    Ok(ExecResult {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code: status.code.filter(|_| !killed).unwrap_or(-1),
        killed,
    })
}

/// `text` as one `bash` word: bare when it is plain, else single-quoted.
fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn words_are_quoted_for_bash() {
        assert_eq!(quote("git"), "git");
        assert_eq!(quote("-m"), "-m");
        assert_eq!(quote("a message"), "'a message'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
