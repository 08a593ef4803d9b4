//! The `powershell` tool, as pi's: runs a command with PowerShell (`pwsh`, else Windows
//! PowerShell, as the host finds it) in the workspace through the host's `process` capability;
//! the rest is the body it shares with `bash` ([`pith_sdk::shell_tool`]). Off by default, as in
//! pi: `--tools -bash,+powershell` or `defaultTools` turns it on.

use pith_sdk::process::Interpreter;
use pith_sdk::shell_tool;
use pith_sdk::tool::*;

struct PowerShell;

impl Tool for PowerShell {
    const NAME: &'static str = "powershell";
    const DESCRIPTION: &'static str = "Execute a PowerShell command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";

    fn parameters() -> Value {
        shell_tool::parameters()
    }

    fn prompt_snippet() -> Option<String> {
        Some("Execute PowerShell commands".into())
    }

    fn prompt_guidelines() -> Vec<String> {
        shell_tool::guidelines()
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        shell_tool::run(&call, Interpreter::Powershell)
    }
}

pith_sdk::export_tools!(PowerShell);
