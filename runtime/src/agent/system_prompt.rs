//! The system prompt, laid out as pi's (pi-behaviour §19): the role, the available tools with
//! their one-line snippets, tool guidelines, appended text, project context files (see
//! [`crate::resources::context_files`]), skills, and the date and working directory.

use std::path::Path;

use super::tools::SessionTool;

/// What the system prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    /// `--system-prompt` (text, or the contents of a file it names), replacing the default body.
    pub custom: Option<String>,
    /// `--append-system-prompt` and `APPEND_SYSTEM.md`.
    pub append: Vec<String>,
    /// Whether the project's context files (`AGENTS.md` / `CLAUDE.md`) go in the prompt
    /// (false with `-nc`).
    pub context_files: bool,
}

pub use super::message::Sections;

/// The system prompt's sections for `tools` in `cwd`; `project_context` is the rendered
/// context files, `skills` the skills block, listed only when the `read` tool is active (as pi
/// does).
pub fn sections(
    options: &PromptOptions,
    tools: &[SessionTool],
    project_context: &str,
    skills: &str,
    cwd: &Path,
    date: &str,
) -> Sections {
    let mut sections = match &options.custom {
        Some(custom) => Sections {
            preamble: custom.trim_end().to_string(),
            ..Sections::default()
        },
        None => default_body(tools),
    };
    let docs: Vec<String> = options
        .append
        .iter()
        .map(|extra| extra.trim().to_string())
        .collect();
    sections.docs = docs.join("\n\n");
    sections.project_context = project_context.to_string();
    if tools.iter().any(|t| t.name() == "read") {
        sections.skills = skills.trim().to_string();
    }
    sections.cwd = format!(
        "Current date: {date}\nCurrent working directory: {}",
        cwd.display()
    );
    sections
}

/// Builds the system prompt for `tools` in `cwd` (see [`sections`]).
pub fn build(
    options: &PromptOptions,
    tools: &[SessionTool],
    project_context: &str,
    skills: &str,
    cwd: &Path,
    date: &str,
) -> String {
    sections(options, tools, project_context, skills, cwd, date).prompt()
}

fn default_body(tools: &[SessionTool]) -> Sections {
    let mut listed = String::from("Available tools:\n");
    for tool in tools {
        let snippet = match tool {
            SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => spec
                .prompt_snippet
                .clone()
                .unwrap_or_else(|| first_sentence(&spec.description)),
            SessionTool::Host(def) => first_sentence(&def.description),
            // MCP tools are not listed (as in pi), `tool_search` is.
            SessionTool::Mcp(tool) if matches!(tool.kind, crate::mcp::McpToolKind::Search) => {
                "Search for tools that are not loaded yet and load the matches".into()
            }
            SessionTool::Mcp(_) => continue,
        };
        listed.push_str(&format!("- {}: {snippet}\n", tool.name()));
    }
    listed.push_str("\nIn addition to the tools above, you may have access to other custom tools depending on the project.");
    let mut guidelines: Vec<String> = Vec::new();
    for tool in tools {
        if let SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) = tool {
            for line in &spec.prompt_guidelines {
                if !guidelines.contains(line) {
                    guidelines.push(line.clone());
                }
            }
        }
    }
    guidelines.push("Be concise in your responses".into());
    guidelines.push("Show file paths clearly when working with files".into());
    let rules = std::iter::once("Guidelines:".to_string())
        .chain(guidelines.iter().map(|line| format!("- {line}")))
        .collect::<Vec<_>>()
        .join("\n");
    Sections {
        preamble: "You are an expert coding assistant operating inside pith, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.".into(),
        tools: listed,
        rules,
        ..Sections::default()
    }
}

fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    line.split(". ")
        .next()
        .unwrap_or(line)
        .trim_end_matches('.')
        .to_string()
}

/// Today's date as `YYYY-MM-DD` (UTC).
pub fn today() -> String {
    crate::time::today()
}
