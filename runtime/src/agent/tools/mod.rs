//! The session's tools: plugin tools (the active set) and host-defined tools, their argument
//! validation ([`validation`]), and running one call.

mod validation;

pub use validation::{InvalidArguments, Wording, validate};

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub mod codemode;
pub mod host_tools;
pub mod todos;

use crate::agent::extensions::Extensions;
use crate::agent::models::glob;
use crate::agent::tools::host_tools::{HostToolBridge, HostToolDefinition};
use crate::content::ToolOutput;
use crate::plugin_host::plugin::Plugin;
use crate::plugin_host::tool::ToolSpec;
use crate::plugin_host::{CallError, PluginHost, PluginTools};

/// The first-party tool names: pi's eight (`powershell` among them), then `todo` and
/// `codemode`; only `read`, `bash`, `edit` and `write` are active by default (`--tools` picks
/// others).
pub const BUILTIN_TOOLS: [&str; 10] = [
    "read",
    "bash",
    "powershell",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "todo",
    "codemode",
];
/// The built-ins active when `--tools` is not given.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Which plugin tools are active.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolSelection {
    /// `--tools a,b` (names or globs: `*`, `?`); `None` is pi's default: the four default
    /// built-ins and every non-built-in plugin tool; empty is `--no-tools` (host tools still
    /// apply).
    pub only: Option<Vec<String>>,
    /// `--tools +name`: added to the default selection (exact names).
    pub add: Vec<String>,
    /// `--tools -name`: taken out of the default selection (exact names).
    pub remove: Vec<String>,
    /// `--no-builtin-tools`: the default built-ins off, other plugin tools kept.
    pub no_builtins: bool,
    /// `--exclude-tools a,b` (names or globs), taken out of the active set.
    pub exclude: Vec<String>,
    /// The built-ins active by default in place of [`DEFAULT_TOOLS`] (the plain names of pi's
    /// `defaultTools` setting).
    pub defaults: Option<Vec<String>>,
}

impl ToolSelection {
    /// No plugin tools (`--no-tools`).
    pub fn none() -> ToolSelection {
        ToolSelection {
            only: Some(Vec::new()),
            ..ToolSelection::default()
        }
    }

    /// True when the plugin tool `name` is active.
    pub fn allows(&self, name: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|n| n == name);
        let included = match &self.only {
            None => {
                let default = match &self.defaults {
                    Some(defaults) => named(defaults),
                    None => DEFAULT_TOOLS.contains(&name),
                } && !self.no_builtins;
                (default || named(&self.add) || !BUILTIN_TOOLS.contains(&name))
                    && !named(&self.remove)
            }
            Some(patterns) => patterns.iter().any(|p| glob(p, name)),
        };
        included && !self.exclude.iter().any(|p| glob(p, name))
    }

    /// True when the extension tool `name` is active. As in pi, an extension's tool is active
    /// once registered, even under a built-in's name (it replaces that built-in, on by default
    /// or not: `todo`, `grep`, `find`, `ls`), unless `--tools` leaves it out or `-name` or
    /// `--exclude-tools` takes it out.
    pub fn allows_extension(&self, name: &str) -> bool {
        let included = match &self.only {
            None => !self.remove.iter().any(|n| n == name),
            Some(patterns) => patterns.iter().any(|p| glob(p, name)),
        };
        included && !self.exclude.iter().any(|p| glob(p, name))
    }

    /// The selection with pi's `defaultTools` setting under it: its plain names replace the
    /// default built-ins (an empty list: none), its `+name`/`-name` entries add and remove;
    /// `--tools` with plain names overrides it, and its `+`/`-` entries apply on top.
    pub fn with_default_tools(mut self, setting: &[String]) -> ToolSelection {
        let plain: Vec<String> = setting
            .iter()
            .filter(|e| !e.starts_with('+') && !e.starts_with('-'))
            .cloned()
            .collect();
        if !plain.is_empty() || setting.is_empty() {
            self.defaults = Some(plain);
        }
        for entry in setting {
            if let Some(name) = entry.strip_prefix('+')
                && !self.remove.iter().any(|r| r == name)
            {
                self.add.push(name.to_string());
            } else if let Some(name) = entry.strip_prefix('-')
                && !self.add.iter().any(|a| a == name)
            {
                self.remove.push(name.to_string());
            }
        }
        self
    }

    /// True when the MCP tool `name` is active: `--tools` keeps MCP tools unless one of its
    /// entries names `mcp__` tools (as pi's does); `--exclude-tools` applies.
    pub fn allows_mcp(&self, name: &str) -> bool {
        let included = match &self.only {
            Some(patterns) if patterns.iter().any(|p| p.starts_with("mcp__")) => {
                patterns.iter().any(|p| glob(p, name))
            }
            Some(patterns) if patterns.is_empty() => false,
            _ => true,
        };
        included && !self.exclude.iter().any(|p| glob(p, name))
    }
}

/// A tool the model may call.
#[derive(Debug, Clone)]
pub enum SessionTool {
    /// Implemented by a plugin: the version the model was shown (pinned for the run).
    Plugin(ToolSpec, Arc<Plugin>),
    /// Implemented by the host.
    Host(HostToolDefinition),
    /// Registered by an extension (the plugin's id), run by its live instance.
    Extension(ToolSpec, String),
    /// An MCP server's tool, `tool_search` or a resource tool.
    Mcp(crate::mcp::McpTool),
    /// `codemode`: the model's script, run by the script engine, calls the other tools.
    Codemode(CodemodeDefinition),
}

/// The `codemode` tool's name.
pub const CODEMODE: &str = "codemode";

/// The `codemode` tool as the model sees it: its description lists the tools scripts call.
#[derive(Debug, Clone, PartialEq)]
pub struct CodemodeDefinition {
    /// The description (pi's, with the listed tools' declarations).
    pub description: String,
    /// `{code}`.
    pub parameters: Value,
}

impl SessionTool {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => &spec.name,
            SessionTool::Host(def) => &def.name,
            SessionTool::Mcp(tool) => &tool.name,
            SessionTool::Codemode(_) => CODEMODE,
        }
    }

    /// Its description.
    pub fn description(&self) -> &str {
        match self {
            SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => &spec.description,
            SessionTool::Host(def) => &def.description,
            SessionTool::Mcp(tool) => &tool.description,
            SessionTool::Codemode(definition) => &definition.description,
        }
    }

    /// Its request for constrained sampling of its arguments (pi's `constrainedSampling`),
    /// which providers honour where the model supports it: codemode's grammar.
    pub fn constrained_sampling(&self) -> Option<Value> {
        match self {
            SessionTool::Codemode(_) => Some(codemode::constrained_sampling()),
            _ => None,
        }
    }

    /// Its argument schema.
    pub fn parameters(&self) -> &Value {
        match self {
            SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => &spec.parameters,
            SessionTool::Host(def) => &def.parameters,
            SessionTool::Mcp(tool) => &tool.parameters,
            SessionTool::Codemode(definition) => &definition.parameters,
        }
    }
}

/// The tools of a session at one moment: active plugin tools (of `plugin_tools`, the plugin set
/// a run started with), extension tools, MCP tools, then host tools (a later tool with an
/// earlier one's name replaces it).
pub fn session_tools(
    plugin_tools: &PluginTools,
    selection: &ToolSelection,
    extension_tools: Vec<(ToolSpec, String)>,
    mcp_tools: Vec<crate::mcp::McpTool>,
    host_tools: &[HostToolDefinition],
) -> Vec<SessionTool> {
    let mut tools: Vec<SessionTool> = plugin_tools
        .iter()
        .filter(|(spec, _)| selection.allows(&spec.name))
        .filter(|(spec, _)| !host_tools.iter().any(|h| h.name == spec.name))
        .map(|(spec, plugin)| SessionTool::Plugin(spec.clone(), plugin.clone()))
        .collect();
    // pi's built-ins first, in pi's order; then the other tools as loaded.
    tools.sort_by_key(|tool| {
        BUILTIN_TOOLS
            .iter()
            .position(|b| *b == tool.name())
            .unwrap_or(BUILTIN_TOOLS.len())
    });
    // An extension's tool replaces a built-in or plugin tool of its name; between extensions
    // the first loaded keeps it (pi's rule; `pith plugin check` reports both).
    let mut taken: Vec<String> = Vec::new();
    for (spec, plugin) in extension_tools {
        if taken.contains(&spec.name) {
            continue;
        }
        taken.push(spec.name.clone());
        if selection.allows_extension(&spec.name) && !host_tools.iter().any(|h| h.name == spec.name)
        {
            tools.retain(|t| t.name() != spec.name);
            tools.push(SessionTool::Extension(spec, plugin));
        }
    }
    for tool in mcp_tools {
        if selection.allows_mcp(&tool.name)
            && !host_tools.iter().any(|h| h.name == tool.name)
            && !tools.iter().any(|t| t.name() == tool.name)
        {
            tools.push(SessionTool::Mcp(tool));
        }
    }
    tools.extend(host_tools.iter().cloned().map(SessionTool::Host));
    tools
}

/// Runs one tool call; every failure becomes an error result.
#[allow(clippy::too_many_arguments)]
pub async fn execute(
    host: &PluginHost,
    mcp: &crate::mcp::McpHub,
    extensions: &Extensions,
    bridge: &Arc<HostToolBridge>,
    tool: &SessionTool,
    call_id: &str,
    arguments: &Value,
    cancel: &CancellationToken,
    updates: mpsc::UnboundedSender<ToolOutput>,
    escalated: crate::plugin_host::Escalation,
    process_env: Vec<(String, String)>,
    sandbox: Option<Arc<crate::sandbox::SandboxPolicy>>,
) -> ToolOutput {
    match tool {
        SessionTool::Extension(spec, plugin) => {
            extensions
                .execute_tool(plugin, &spec.name, call_id, arguments)
                .await
        }
        SessionTool::Host(def) => {
            bridge
                .call(call_id, def, arguments, cancel, Some(updates))
                .await
        }
        SessionTool::Mcp(tool) => mcp.execute(tool, arguments, cancel, Some(updates)).await,
        // A script needs its session: the session's tool pipeline runs it.
        SessionTool::Codemode(_) => ToolOutput::error("codemode scripts run only in a session"),
        SessionTool::Plugin(spec, plugin) => {
            match host
                .call_plugin_tool(
                    plugin,
                    &spec.name,
                    call_id,
                    arguments,
                    crate::plugin_host::CallOptions {
                        progress: Some(updates),
                        cancel: Some(cancel.clone()),
                        escalated,
                        process_env,
                        sandbox,
                        ..Default::default()
                    },
                )
                .await
            {
                Ok(output) => output,
                Err(CallError::Cancelled { .. }) => ToolOutput {
                    details: Some(json!({})),
                    ..ToolOutput::error("Operation aborted")
                },
                Err(err) => ToolOutput {
                    details: Some(json!({})),
                    ..ToolOutput::error(err.to_string())
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_extension_tool_replaces_a_built_in_and_the_first_extension_keeps_a_name() {
        let spec = |name: &str, description: &str| ToolSpec {
            name: name.into(),
            label: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
        };
        let extension_tools = || {
            vec![
                (spec("todo", "first"), "first-extension".to_string()),
                (spec("todo", "second"), "second-extension".to_string()),
                (spec("grep", "theirs"), "second-extension".to_string()),
            ]
        };
        let tools = session_tools(
            &Arc::new(Vec::new()),
            &ToolSelection::default(),
            extension_tools(),
            Vec::new(),
            &[],
        );
        let shown: Vec<(&str, &str)> = tools
            .iter()
            .map(|tool| match tool {
                SessionTool::Extension(spec, plugin) => (spec.name.as_str(), plugin.as_str()),
                other => (other.name(), ""),
            })
            .collect();
        // Built-ins off by default (`todo`, `grep`) are the extensions' and active, as in pi.
        assert_eq!(
            shown,
            [("todo", "first-extension"), ("grep", "second-extension")]
        );
        // `--tools` and `-name` still choose.
        let only_read = ToolSelection {
            only: Some(vec!["read".into()]),
            ..ToolSelection::default()
        };
        assert!(
            session_tools(
                &Arc::new(Vec::new()),
                &only_read,
                extension_tools(),
                Vec::new(),
                &[]
            )
            .is_empty()
        );
        let without_todo = ToolSelection {
            remove: vec!["todo".into()],
            ..ToolSelection::default()
        };
        let names: Vec<String> = session_tools(
            &Arc::new(Vec::new()),
            &without_todo,
            extension_tools(),
            Vec::new(),
            &[],
        )
        .iter()
        .map(|t| t.name().to_string())
        .collect();
        assert_eq!(names, ["grep"]);
    }

    #[test]
    fn default_selection_is_pis() {
        let selection = ToolSelection::default();
        assert!(selection.allows("read") && selection.allows("word_count"));
        assert!(!selection.allows("grep"));
        let only = |names: &[&str]| ToolSelection {
            only: Some(names.iter().map(|n| n.to_string()).collect()),
            ..ToolSelection::default()
        };
        assert!(only(&["grep"]).allows("grep"));
        assert!(only(&["gr*"]).allows("grep") && !only(&["gr*"]).allows("read"));
        assert!(!ToolSelection::none().allows("read"));
        let excluding = ToolSelection {
            exclude: vec!["ed?t".into(), "wr*".into()],
            ..ToolSelection::default()
        };
        assert!(
            excluding.allows("read") && !excluding.allows("edit") && !excluding.allows("write")
        );
    }

    #[test]
    fn default_tools_setting_is_pis() {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let plain = ToolSelection::default().with_default_tools(&list(&["read", "grep"]));
        assert!(plain.allows("read") && plain.allows("grep") && !plain.allows("bash"));
        assert!(plain.allows("word_count"), "plugin tools stay");
        let none = ToolSelection::default().with_default_tools(&[]);
        assert!(!none.allows("read") && none.allows("word_count"));
        let changed = ToolSelection::default().with_default_tools(&list(&["+ls", "-write"]));
        assert!(changed.allows("ls") && changed.allows("read") && !changed.allows("write"));
        // `--tools` with plain names overrides it; `--tools -ls` still applies on top.
        let cli = ToolSelection {
            only: Some(list(&["bash"])),
            ..ToolSelection::default()
        }
        .with_default_tools(&list(&["read"]));
        assert!(cli.allows("bash") && !cli.allows("read"));
        let removed = ToolSelection {
            remove: list(&["ls"]),
            ..ToolSelection::default()
        }
        .with_default_tools(&list(&["+ls"]));
        assert!(!removed.allows("ls"));
    }
}
