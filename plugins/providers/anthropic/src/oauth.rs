//! Requests made with a Claude subscription's OAuth token (pi's `/login`), as pi 1.5.2 makes
//! them: the token as a bearer with Claude Code's client headers and betas, Claude Code's
//! identity line first in the system prompt, and the tools Claude Code knows under Claude
//! Code's names (mapped back on the way in).

/// pi's test for such a token: it holds `sk-ant-oat`.
pub fn is_oauth(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// The client these tokens are issued to.
pub const USER_AGENT: &str = "claude-cli/2.1.322";

/// The betas such a request declares first.
pub const BETAS: &str = "claude-code-20250219,oauth-2025-04-20";

/// The system prompt's first block.
pub const IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";

/// Claude Code's tool names.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `name` in Claude Code's casing when Claude Code has such a tool (`read` → `Read`).
pub fn to_claude_code(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_string(), |known| known.to_string())
}

/// The request's own tool that `name` stands for (`Read` → `read`), else `name`.
pub fn from_claude_code(name: &str, tools: &[String]) -> String {
    tools
        .iter()
        .find(|tool| tool.eq_ignore_ascii_case(name))
        .cloned()
        .unwrap_or_else(|| name.to_string())
}
