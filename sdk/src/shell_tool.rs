//! The body of pi's shell tools (`bash`, and `powershell` on Windows), shared by the
//! first-party plugins and open to third-party ones: the command runs through the host's
//! `process` capability in the workspace, its output streams as partial results (at most every
//! 100 ms), the last 2,000 lines or 50 KB are kept (the whole output goes to a temp file past
//! that), and the exit code, an abort or a timeout are reported as pi words them.

use crate::process::{Command, Interpreter, Output};
use crate::text::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, format_size, truncate_tail};
use crate::tool::*;

/// Output kept in memory while streaming (twice the byte limit, as pi).
const ROLLING_BYTES: usize = 2 * DEFAULT_MAX_BYTES;
/// The shortest time between two progress reports (pi's shell tools throttle their updates to
/// 100 ms).
const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// pi's parameters of a shell tool: `command`, and an optional `timeout` in seconds.
pub fn parameters() -> Value {
    json!({
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string", "description": "Shell command to execute"},
            "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"}
        }
    })
}

/// pi's guideline of a shell tool that exposes the session to its commands.
pub fn guidelines() -> Vec<String> {
    vec!["You can inspect PI_* environment variables for current model and session details.".into()]
}

#[derive(serde::Deserialize)]
struct Args {
    command: String,
    timeout: Option<f64>,
}

/// Runs the call's `command` in `interpreter` and reports it as pi's shell tools do.
pub fn run(call: &ToolCall, interpreter: Interpreter) -> Result<ToolResult, ToolError> {
    let args: Args = call.parse()?;
    let timeout_ms = args
        .timeout
        .filter(|t| *t > 0.0)
        .map(|t| (t * 1000.0).min(u32::MAX as f64) as u32);
    let child = crate::process::spawn_in(
        &Command {
            command_line: args.command.clone(),
            cwd: None,
            env: Vec::new(),
            timeout_ms,
            spill_after: Some(DEFAULT_MAX_BYTES as u32),
        },
        interpreter,
    )
    .map_err(|err| ToolError::new(err.message()))?;
    report_progress(&ToolResult {
        content: Vec::new(),
        details: None,
    });
    let mut rolling: Vec<u8> = Vec::new();
    let mut seen = Totals::default();
    let mut reported: Option<std::time::Instant> = None;
    while let Some(chunk) = child.next_output() {
        let (Output::Stdout(bytes) | Output::Stderr(bytes)) = chunk;
        seen.add(&bytes);
        rolling.extend_from_slice(&bytes);
        if rolling.len() > ROLLING_BYTES {
            let cut = rolling.len() - ROLLING_BYTES;
            rolling.drain(..cut);
        }
        // Progress at most every 100 ms, as pi's bash: a flood of output costs neither
        // the host's pipe nor the tail's truncation on every chunk.
        if reported.is_some_and(|at| at.elapsed() < PROGRESS_INTERVAL) {
            continue;
        }
        reported = Some(std::time::Instant::now());
        let text = String::from_utf8_lossy(&rolling);
        let truncation = seen.apply(truncate_tail(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES));
        let path = child.full_output_path();
        let mut details = serde_json::Map::new();
        if truncation.truncated {
            details.insert("truncation".into(), json!(truncation));
        }
        if let Some(path) = &path {
            details.insert("fullOutputPath".into(), json!(path));
        }
        report_progress(&ToolResult::text(truncation.content).with_details(Value::Object(details)));
    }
    let status = child.wait();
    let full_output_path = child.full_output_path();
    let text = String::from_utf8_lossy(&rolling).into_owned();
    let truncation = seen.apply(truncate_tail(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES));
    let mut output = if truncation.content.is_empty() {
        "(no output)".to_string()
    } else {
        truncation.content.clone()
    };
    let mut details = None;
    if truncation.truncated {
        output.push_str(&notice(&truncation, full_output_path.as_deref()));
        details = Some(json!({"truncation": truncation, "fullOutputPath": full_output_path}));
    }
    if status.timed_out {
        let seconds = args.timeout.unwrap_or_default();
        // pi says only the timeout when nothing was printed.
        let message = if truncation.content.is_empty() {
            format!("Command timed out after {seconds} seconds")
        } else {
            format!("{output}\n\nCommand timed out after {seconds} seconds")
        };
        return Err(error(message, details));
    }
    // Aborted by the user; a command a signal ended otherwise has its shell's code (137 for
    // SIGKILL), as pi reports it.
    if status.killed || status.code.is_none() {
        return Err(error(format!("{output}\n\nCommand aborted"), details));
    }
    match status.code {
        Some(0) => Ok(match details {
            Some(details) => ToolResult::text(output).with_details(details),
            None => ToolResult::text(output),
        }),
        Some(code) => {
            let hint = crate::sandbox::shell_hint(&output)
                .map_or_else(String::new, |hint| format!("\n{hint}"));
            Err(error(
                format!("{output}\n\nCommand exited with code {code}{hint}"),
                details,
            ))
        }
        None => Err(error(format!("{output}\n\nCommand aborted"), details)),
    }
}

/// Lines and bytes of the whole output (the rolling buffer holds only its end).
#[derive(Default)]
struct Totals {
    newlines: usize,
    bytes: usize,
    ends_with_newline: bool,
}

impl Totals {
    fn add(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        self.newlines += bytes.iter().filter(|b| **b == b'\n').count();
        if let Some(last) = bytes.last() {
            self.ends_with_newline = *last == b'\n';
        }
    }

    /// Counts the whole output in a truncation of the rolling buffer (as pi counts lines: a
    /// final newline ends the last line).
    fn apply(&self, mut truncation: Truncation) -> Truncation {
        truncation.total_lines = match (self.bytes, self.ends_with_newline) {
            (0, _) => 0,
            (_, true) => self.newlines,
            (_, false) => self.newlines + 1,
        };
        truncation.total_bytes = self.bytes;
        if truncation.total_lines > truncation.output_lines
            || truncation.total_bytes > truncation.output_bytes
        {
            truncation.truncated = true;
            if truncation.truncated_by.is_none() {
                truncation.truncated_by = Some(crate::text::TruncatedBy::Bytes);
            }
        }
        truncation
    }
}

fn error(message: String, details: Option<Value>) -> ToolError {
    match details {
        Some(details) => ToolError::new(message).with_details(details),
        None => ToolError::new(message),
    }
}

/// pi's truncation notice of a shell tool.
fn notice(t: &Truncation, path: Option<&str>) -> String {
    let path = path.unwrap_or("undefined");
    let end = t.total_lines;
    let start = end + 1 - t.output_lines.max(1);
    if t.last_line_partial {
        let line = t.content.len();
        return format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
            format_size(line),
            format_size(t.total_bytes)
        );
    }
    match t.truncated_by {
        Some(crate::text::TruncatedBy::Bytes) => {
            format!(
                "\n\n[Showing lines {start}-{end} of {end} ({} limit). Full output: {path}]",
                format_size(t.max_bytes)
            )
        }
        _ => format!("\n\n[Showing lines {start}-{end} of {end}. Full output: {path}]"),
    }
}
