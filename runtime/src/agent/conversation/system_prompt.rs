//! The system prompt, in the layout of the pi version a session speaks (pi-behaviour §19).
//!
//! - **pi 1.5** (the default): named sections, each but the preamble framed as
//!   `<name>…</name>`: `preamble`, `tools`, `rules`, `docs`, `addendum`, `project_context`,
//!   `skills`, `cwd`, then pith's `mcp_servers`. The `system` message records them (see
//!   [`crate::agent::conversation::system_record`]).
//! - **pi 0.73**: one text: the role, "Available tools:", "Guidelines:", the appended text,
//!   "# Project Context", the skills, and the date and working directory.

use std::path::Path;

pub use crate::agent::conversation::prompt_sections::Sections;
use crate::agent::tools::SessionTool;
use crate::resources::context_files::{self, ContextFile};
use crate::resources::skills::{self, Skill, SkillReader};

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

/// The pi version whose prompt layout a session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// pi 1.5's framed sections.
    Pi15,
    /// pi 0.73's single text.
    Pi073,
}

/// What goes in the prompt besides the options and the tools.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a> {
    /// The project's context files.
    pub context_files: &'a [ContextFile],
    /// The skills.
    pub skills: &'a [Skill],
    /// The session's working directory.
    pub cwd: &'a Path,
    /// Today's date (`YYYY-MM-DD`; pi 0.73's layout shows it).
    pub date: &'a str,
    /// The text of pith's `mcp_servers` section (empty when no server is searched).
    pub mcp_servers: &'a str,
}

/// The role pith takes in pi 1.5's layout.
const PREAMBLE: &str = "You are a coding assistant running inside pith, a coding agent harness. Help users inspect files, run commands, and modify code.";

/// The role in pi 0.73's layout.
const PREAMBLE_073: &str = "You are an expert coding assistant operating inside pith, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.";

/// The system prompt's sections for `tools`, in `layout`.
pub fn sections(
    options: &PromptOptions,
    tools: &[SessionTool],
    inputs: &PromptInputs<'_>,
    layout: Layout,
) -> Sections {
    match layout {
        Layout::Pi15 => sections_15(options, tools, inputs),
        Layout::Pi073 => sections_073(options, tools, inputs),
    }
}

/// Builds the system prompt (see [`sections`]).
pub fn build(
    options: &PromptOptions,
    tools: &[SessionTool],
    inputs: &PromptInputs<'_>,
    layout: Layout,
) -> String {
    sections(options, tools, inputs, layout).prompt()
}

fn sections_15(
    options: &PromptOptions,
    tools: &[SessionTool],
    inputs: &PromptInputs<'_>,
) -> Sections {
    let mut raw = Sections::new();
    match &options.custom {
        Some(custom) => raw.set("preamble", Some(custom.clone())),
        None => {
            raw.set("preamble", Some(PREAMBLE.into()));
            let listed: Vec<String> = tools
                .iter()
                .filter_map(|tool| snippet(tool, false).map(|s| format!("- {}: {s}", tool.name())))
                .collect();
            let listed = if listed.is_empty() {
                "(none)".to_string()
            } else {
                listed.join("\n")
            };
            raw.set(
                "tools",
                Some(format!("{listed}\n\nAdditional tools may be available.")),
            );
            raw.set("rules", Some(rules(tools)));
            raw.set("docs", Some(docs()));
        }
    }
    raw.set_nonempty("addendum", appended(options));
    raw.set_nonempty(
        "project_context",
        context_files::render(inputs.context_files, true),
    );
    let reader = if has(tools, "read") {
        Some(SkillReader::Read)
    } else {
        has(tools, "bash").then_some(SkillReader::Bash)
    };
    if let Some(reader) = reader {
        raw.set_nonempty("skills", skills::prompt_block(inputs.skills, reader).trim());
    }
    raw.set(
        "cwd",
        Some(inputs.cwd.display().to_string().replace('\\', "/")),
    );
    raw.set_nonempty("mcp_servers", inputs.mcp_servers);
    let mut framed = Sections::new();
    for (name, text) in raw.iter() {
        let text = text.unwrap_or_default();
        let text = if name == "preamble" {
            text.to_string()
        } else {
            format!("<{name}>\n{text}\n</{name}>")
        };
        framed.set(name, Some(text));
    }
    framed
}

fn sections_073(
    options: &PromptOptions,
    tools: &[SessionTool],
    inputs: &PromptInputs<'_>,
) -> Sections {
    let mut sections = Sections::new();
    match &options.custom {
        Some(custom) => sections.set("preamble", Some(custom.trim_end().to_string())),
        None => {
            sections.set("preamble", Some(PREAMBLE_073.into()));
            let mut listed = String::from("Available tools:\n");
            for tool in tools {
                if let Some(snippet) = snippet(tool, true) {
                    listed.push_str(&format!("- {}: {snippet}\n", tool.name()));
                }
            }
            listed.push_str("\nIn addition to the tools above, you may have access to other custom tools depending on the project.");
            sections.set("tools", Some(listed));
            sections.set("rules", Some(format!("Guidelines:\n{}", rules(tools))));
        }
    }
    sections.set_nonempty("docs", appended(options));
    sections.set_nonempty(
        "project_context",
        context_files::render(inputs.context_files, false),
    );
    if has(tools, "read") {
        sections.set_nonempty(
            "skills",
            skills::prompt_block(inputs.skills, SkillReader::Legacy).trim(),
        );
    }
    sections.set(
        "cwd",
        Some(format!(
            "Current date: {}\nCurrent working directory: {}",
            inputs.date,
            inputs.cwd.display()
        )),
    );
    if !inputs.mcp_servers.is_empty() {
        let text = format!("<mcp_servers>\n{}\n</mcp_servers>", inputs.mcp_servers);
        sections.set("mcp_servers", Some(text));
    }
    sections
}

/// True when a tool named `name` is among `tools`.
fn has(tools: &[SessionTool], name: &str) -> bool {
    tools.iter().any(|tool| tool.name() == name)
}

/// The appended texts, trimmed and joined by blank lines.
fn appended(options: &PromptOptions) -> String {
    options
        .append
        .iter()
        .map(|extra| extra.trim())
        .filter(|extra| !extra.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The one line `tool` is listed with; `None` when it is not listed. pi 1.5 lists only tools
/// with a snippet; pith's 0.73 layout falls back to the description's first sentence. MCP
/// tools are not listed (as in pi), `tool_search` is.
fn snippet(tool: &SessionTool, fallback: bool) -> Option<String> {
    match tool {
        SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => spec
            .prompt_snippet
            .clone()
            .or_else(|| fallback.then(|| first_sentence(&spec.description))),
        SessionTool::Host(def) => fallback.then(|| first_sentence(&def.description)),
        SessionTool::Mcp(tool) if matches!(tool.kind, crate::mcp::McpToolKind::Search) => {
            Some("Search for tools that are not loaded yet and load the matches".into())
        }
        SessionTool::Mcp(_) => None,
        SessionTool::Codemode(_) => {
            Some(crate::agent::tools::codemode::catalog::PROMPT_SNIPPET.into())
        }
    }
}

/// The rules, as pi's `buildRules`: bash for file operations when no search tool is there,
/// each tool's guidelines, then pith's own; each once.
fn rules(tools: &[SessionTool]) -> String {
    let mut rules: Vec<String> = Vec::new();
    let mut add = |rule: &str| {
        let rule = rule.trim();
        if !rule.is_empty() && !rules.iter().any(|known| known == rule) {
            rules.push(rule.to_string());
        }
    };
    let (bash, powershell) = (has(tools, "bash"), has(tools, "powershell"));
    if (bash || powershell) && !has(tools, "grep") && !has(tools, "find") && !has(tools, "ls") {
        add(match (bash, powershell) {
            (true, true) => {
                "Use bash or PowerShell for file operations like listing, searching, and finding files"
            }
            (false, true) => {
                "Use PowerShell for file operations like listing, searching, and finding files"
            }
            _ => "Use bash for file operations like ls, rg, find",
        });
    }
    for tool in tools {
        if let SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) = tool {
            for line in &spec.prompt_guidelines {
                add(line);
            }
        }
        if let SessionTool::Codemode(_) = tool {
            add(crate::agent::tools::codemode::catalog::PROMPT_GUIDELINE);
        }
    }
    add("Be concise in your responses");
    add("Show file paths clearly when working with files");
    rules
        .iter()
        .map(|rule| format!("- {rule}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `docs` section: where the model reads pith's own documentation (built into the binary,
/// printed by `pith docs`).
fn docs() -> String {
    let exe = std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| "pith".into());
    format!(
        "pith documentation (read only when the user asks about the harness itself, its plugins, MCP servers, settings, sessions or editor integration):\n- Run `{exe} docs` to list the topics and `{exe} docs <topic>` to print one ({})\n- Before implementing harness changes, read the relevant docs in full.",
        crate::docs::TOPICS
            .iter()
            .map(|topic| topic.name)
            .collect::<Vec<_>>()
            .join(", ")
    )
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
