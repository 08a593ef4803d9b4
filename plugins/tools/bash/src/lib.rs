//! The `bash` tool, as pi's: runs a command with `bash -c` in the workspace through the host's
//! `process` capability ([`pith_sdk::shell_tool`] holds the body it shares with `powershell`).

use pith_sdk::process::Interpreter;
use pith_sdk::shell_tool;
use pith_sdk::tool::*;

struct Bash;

impl Tool for Bash {
    const NAME: &'static str = "bash";
    const DESCRIPTION: &'static str = "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";

    fn parameters() -> Value {
        shell_tool::parameters()
    }

    fn prompt_snippet() -> Option<String> {
        Some("Execute bash commands (ls, grep, find, etc.)".into())
    }

    fn prompt_guidelines() -> Vec<String> {
        shell_tool::guidelines()
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        shell_tool::run(&call, Interpreter::Bash)
    }
}

pith_sdk::export_tools!(Bash);
