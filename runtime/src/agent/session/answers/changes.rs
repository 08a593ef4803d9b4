//! What the commands that change the session answer: switches, forks, tree moves, the tool
//! set, the queues, the model and the thinking level, the catalog and the todo list.

use serde::Serialize;
use serde_json::Value;

use crate::agent::model::{Model, ThinkingLevel};
use crate::agent::tools::todos::TodoPhase;

/// `new_session`, `switch_session` and `clone`: whether an extension cancelled the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SwitchOutcome {
    /// True when an extension cancelled it (nothing changed).
    pub cancelled: bool,
}

/// `fork`: the text of the user message forked at (to edit and send again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkOutcome {
    /// The message's text (empty when cancelled).
    pub text: String,
    /// True when an extension cancelled the fork.
    pub cancelled: bool,
}

/// `set_active_tools`: the tools active from the next turn on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActiveTools {
    /// Their names.
    pub active_tools: Vec<String>,
}

/// `set_host_tools`: the host's tools now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolNames {
    /// Their names (trimmed).
    pub tool_names: Vec<String>,
}

/// `set_todos`: the todo list now.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TodoList {
    /// Its phases, normalised.
    pub todo_phases: Vec<TodoPhase>,
}

/// `clear_queue`: the texts taken out of the queues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearedQueues {
    /// The steering queue's.
    pub steering: Vec<String>,
    /// The follow-up queue's.
    pub follow_up: Vec<String>,
}

/// `cycle_model`: the model cycled to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycledModel {
    /// The model.
    pub model: Model,
    /// The thinking level it got.
    pub thinking_level: ThinkingLevel,
    /// True when it came from the scoped models (`--models`).
    pub is_scoped: bool,
}

/// `cycle_thinking_level`: the level cycled to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ThinkingLevelChange {
    /// The level.
    pub level: ThinkingLevel,
}

/// `get_available_models`.
#[derive(Debug, Clone, Serialize)]
pub struct ModelList {
    /// The models that can be used.
    pub models: Vec<Model>,
}

/// `get_available_thinking_levels`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThinkingLevels {
    /// The current model's levels (`off` only without reasoning).
    pub levels: Vec<ThinkingLevel>,
}

/// `get_last_assistant_text`: the last answer's text; `{}` when there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastAssistantText {
    /// The text, trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// `get_fork_messages` / `get_branch_messages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserMessageList {
    /// The session's user messages with text.
    pub messages: Vec<UserMessageRef>,
}

/// One user message of [`UserMessageList`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessageRef {
    /// Its entry.
    pub entry_id: String,
    /// Its text.
    pub text: String,
    /// Its position in the conversation (pi 0.16's, `get_branch_messages` only, when it is in
    /// the current context).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_index: Option<usize>,
}

/// `get_entries`: the session file's entries (pi's JSON, as written) and the leaf.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entries {
    /// The entries.
    pub entries: Vec<Value>,
    /// The leaf's id (`null` before the first entry).
    pub leaf_id: Option<String>,
}

/// `get_tree`: the session's tree (each node `{entry, children, label?}`) and the leaf.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTree {
    /// The roots.
    pub tree: Vec<Value>,
    /// The leaf's id.
    pub leaf_id: Option<String>,
}

/// `delete_session`: the file removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// Its canonical path.
    pub deleted: String,
}

/// `list_sessions`: one page of summaries, newest first.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPage {
    /// The summaries (`{id, path, cwd, name, firstMessage, modified, messageCount}`).
    pub sessions: Vec<Value>,
    /// The cursor of the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `navigate_tree`: where the leaf went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeMove {
    /// True when an extension cancelled the move (the other fields are then absent).
    pub cancelled: bool,
    /// The new leaf (`null` at the root); absent when cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_id: Option<Option<String>>,
    /// The text of the user message moved to, for the editor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
}
