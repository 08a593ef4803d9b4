//! The system prompt, laid out as pi's (pi-behaviour §19): the role, the available tools with
//! their one-line snippets, tool guidelines, appended text, project context files, and the date
//! and working directory.

use std::path::Path;

use super::tools::SessionTool;

/// What the system prompt is built from.
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    /// `--system-prompt` (text, or the contents of a file it names), replacing the default body.
    pub custom: Option<String>,
    /// `--append-system-prompt` and `APPEND_SYSTEM.md`.
    pub append: Vec<String>,
    /// Project context files (`AGENTS.md` / `CLAUDE.md`) as (path, contents).
    pub context_files: Vec<(String, String)>,
}

/// Builds the system prompt for `tools` in `cwd`; `skills` is the skills block, listed only
/// when the `read` tool is active (as pi does).
pub fn build(
    options: &PromptOptions,
    tools: &[SessionTool],
    skills: &str,
    cwd: &Path,
    date: &str,
) -> String {
    let mut prompt = match &options.custom {
        Some(custom) => custom.clone(),
        None => default_body(tools),
    };
    for extra in &options.append {
        prompt.push_str("\n\n");
        prompt.push_str(extra);
    }
    if !options.context_files.is_empty() {
        prompt
            .push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n");
        for (path, content) in &options.context_files {
            prompt.push_str(&format!("## {path}\n\n{content}\n\n"));
        }
    }
    if tools.iter().any(|t| t.name() == "read") {
        prompt.push_str(skills);
    }
    prompt.push_str(&format!(
        "\nCurrent date: {date}\nCurrent working directory: {}",
        cwd.display()
    ));
    prompt
}

fn default_body(tools: &[SessionTool]) -> String {
    let mut body = String::from(
        "You are an expert coding assistant operating inside pith, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.\n\nAvailable tools:\n",
    );
    for tool in tools {
        let snippet = match tool {
            SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => spec
                .prompt_snippet
                .clone()
                .unwrap_or_else(|| first_sentence(&spec.description)),
            SessionTool::Host(def) => first_sentence(&def.description),
        };
        body.push_str(&format!("- {}: {snippet}\n", tool.name()));
    }
    body.push_str("\nIn addition to the tools above, you may have access to other custom tools depending on the project.\n\nGuidelines:\n");
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
    for line in guidelines {
        body.push_str(&format!("- {line}\n"));
    }
    body
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
