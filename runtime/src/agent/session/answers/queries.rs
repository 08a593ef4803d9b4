//! What the queries answer: the state, the statistics, the conversation, the tools, the
//! commands with their completions, and the plugins.

use serde::Serialize;
use serde_json::Value;

use crate::agent::conversation::message::AgentMessage;
use crate::agent::model::{Model, ThinkingLevel};
use crate::agent::session::path_completion::Completion;
use crate::agent::session::queue::QueueMode;
use crate::agent::session::state::InterruptMode;
use crate::agent::tools::todos::TodoPhase;

/// `get_state`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The model (`null` when none is set).
    pub model: Option<Model>,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// True while a run streams.
    pub is_streaming: bool,
    /// True while a compaction runs (not while a run that compacted settles).
    pub is_compacting: bool,
    /// How the steering queue delivers.
    pub steering_mode: QueueMode,
    /// How the follow-up queue delivers.
    pub follow_up_mode: QueueMode,
    /// How steering meets tool calls in flight.
    pub interrupt_mode: InterruptMode,
    /// The session file (absent when the session is in memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The session's id.
    pub session_id: String,
    /// Its name (absent when unnamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    /// Whether compaction runs on its own.
    pub auto_compaction_enabled: bool,
    /// Messages in the conversation.
    pub message_count: usize,
    /// Messages waiting in the queues.
    pub pending_message_count: usize,
    /// The same (seed 001's name).
    pub queued_message_count: usize,
    /// The todo list.
    pub todo_phases: Vec<TodoPhase>,
    /// The follow-up mode (pi 0.x's name).
    pub queue_mode: QueueMode,
    /// The sandbox, as it describes itself (`{mode, writableRoots, network, …}`).
    pub sandbox: Value,
    /// Whether the project's own configuration is loaded.
    pub project: ProjectTrust,
}

/// What of the project's configuration an untrusted project left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectTrust {
    /// True when the project is trusted.
    pub trusted: bool,
    /// The project's files not loaded (so a host can ask whether to trust it).
    pub not_loaded: Vec<&'static str>,
}

/// `get_session_stats`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    /// The session file (absent in memory; first, as pi orders it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The session's id.
    pub session_id: String,
    /// User messages.
    pub user_messages: usize,
    /// Answers.
    pub assistant_messages: usize,
    /// Tool calls in the answers.
    pub tool_calls: usize,
    /// Tool results.
    pub tool_results: usize,
    /// Every message.
    pub total_messages: usize,
    /// Token totals over the answers.
    pub tokens: TokenTotals,
    /// What the answers cost.
    #[serde(serialize_with = "crate::js::js_number")]
    pub cost: f64,
    /// How full the context window is.
    pub context_usage: ContextUsage,
    /// pith's own: what each extension spent on its own model calls, by plugin id (absent
    /// when none did).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub extension_usage:
        std::collections::BTreeMap<String, crate::agent::conversation::message::Usage>,
}

/// Token totals of [`SessionStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// Tokens written to the cache.
    pub cache_write: u64,
    /// All of them.
    pub total: u64,
}

/// The context window's use in [`SessionStats`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// The last answer's context size.
    pub tokens: u64,
    /// The model's window.
    pub context_window: u64,
    /// Their ratio, in percent.
    #[serde(serialize_with = "crate::js::js_number")]
    pub percent: f64,
}

/// `get_messages`: the conversation, borrowed under the session's lock while it is written.
#[derive(Debug, Serialize)]
pub struct MessageList<'a> {
    /// The messages.
    pub messages: &'a [AgentMessage],
}

/// `get_argument_completions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Completions {
    /// The completions offered.
    pub completions: Vec<Completion>,
}

/// `get_commands`: extension commands, then templates, then skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandList {
    /// The commands.
    pub commands: Vec<CommandInfo>,
}

/// One command of [`CommandList`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    /// Its name (without the slash).
    pub name: String,
    /// What it does.
    pub description: String,
    /// What kind of command it is.
    pub source: CommandSource,
    /// Where it comes from, as pi 1.5 describes it.
    pub source_info: SourceInfo,
    /// Where a template or skill was found (`user`, `project` or `path`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<&'static str>,
    /// The file that defines it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// The kinds of [`CommandInfo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandSource {
    /// An extension's (and the built-in `/mcp`).
    Extension,
    /// A prompt template.
    Prompt,
    /// A skill (`/skill:name`).
    Skill,
}

/// pi 1.5's `sourceInfo` of a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceInfo {
    /// The defining file (or `builtin:<name>`).
    pub path: String,
    /// `builtin`, `plugin` or `local`.
    pub source: &'static str,
    /// `user`, `project` or `temporary`.
    pub scope: &'static str,
    /// Always `top-level`.
    pub origin: &'static str,
}

/// `get_tools`: the tools in the order the model sees them.
#[derive(Debug, Clone, Serialize)]
pub struct ToolList {
    /// The tools.
    pub tools: Vec<ToolInfo>,
}

/// One tool of [`ToolList`].
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its JSON Schema.
    pub parameters: Value,
    /// Who provides it.
    pub kind: ToolKind,
    /// The providing plugin's id (`null` for host and MCP tools).
    pub plugin: Option<String>,
    /// Whether the model is offered it.
    pub active: bool,
    /// What an MCP tool adds.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpToolInfo>,
}

/// Who provides a [`ToolInfo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// A plugin.
    Plugin,
    /// An extension.
    Extension,
    /// The host (`set_host_tools`).
    Host,
    /// An MCP server (or `tool_search`, a resource tool).
    Mcp,
}

/// What an MCP tool of [`ToolList`] adds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolInfo {
    /// Its server (`null` for `tool_search` and the resource tools).
    pub server: Option<String>,
    /// How it is offered (`direct`, `search`, …).
    pub exposure: &'static str,
    /// Its name on the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_tool: Option<String>,
    /// Its server's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<&'static str>,
    /// The server's annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// `get_plugins`: every loaded plugin, as `pith plugins --json` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct PluginList {
    /// The plugins' descriptions.
    pub plugins: Vec<Value>,
}
