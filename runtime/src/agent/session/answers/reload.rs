//! What `reload` and `compact` answer.

use serde::Serialize;
use serde_json::Value;

use crate::agent::conversation::message::Usage;

/// `reload`: what changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadSummary {
    /// The settings.
    pub settings: SettingsReload,
    /// The MCP servers.
    pub mcp: McpReload,
    /// The plugins.
    pub plugins: PluginsReload,
    /// The models.
    pub models: ModelsChange,
    /// Skills found.
    pub skills: usize,
    /// Prompt templates found.
    pub prompt_templates: usize,
}

/// The settings part of [`ReloadSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsReload {
    /// True when a setting in force changed.
    pub changed: bool,
    /// True when the file did not read and the settings in force were kept.
    pub kept: bool,
    /// What is wrong in the files.
    pub problems: Vec<String>,
}

/// The MCP part of [`ReloadSummary`] (and of a changed `mcp.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpReload {
    /// True when the configuration changed and the servers started anew.
    pub changed: bool,
    /// Servers configured.
    pub servers: usize,
    /// The configuration's errors (when it changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
}

/// The plugins part of [`ReloadSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginsReload {
    /// Plugins added.
    pub added: Vec<String>,
    /// Plugins updated.
    pub updated: Vec<String>,
    /// Plugins removed.
    pub removed: Vec<String>,
    /// Plugins refused, `<path>: <reason>`.
    pub errors: Vec<String>,
}

/// The models part of [`ReloadSummary`], `provider/id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelsChange {
    /// Models that can be used now.
    pub added: Vec<String>,
    /// Models that can no longer be used.
    pub removed: Vec<String>,
}

/// `compact`: what a compaction did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary that replaced the older conversation.
    pub summary: String,
    /// The first entry kept as it was.
    pub first_kept_entry_id: String,
    /// The context's tokens before.
    pub tokens_before: u64,
    /// The context's tokens after, estimated (pi 1.5; absent when an extension summarized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_tokens_after: Option<u64>,
    /// The summary requests' usage (pi 1.5; absent when an extension summarized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The files read and modified in what was summarized (an extension's own details).
    pub details: Value,
}
