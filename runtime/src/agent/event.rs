//! What the engine tells the world: typed session events, sent to an [`EventSink`]. The engine
//! builds no protocol frames and knows no transport; a front-end (the RPC mode in `rpc/`, or any
//! other) implements the sink and renders the events in its own protocol.
//!
//! Each event also has a serde form — pi's event JSON (the shape of pi 0.73.1's RPC events) —
//! which extensions observe (the WIT contract gives them "the event's JSON as on the wire") and
//! which a front-end may reuse.
//!
//! Over 600 lines for one reason: it is the one list of the events a front-end renders, each
//! with its fields' docs and serde names; splitting the enum would split that list.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::agent::conversation::message::{
    AgentMessage, AssistantBlock, AssistantMessage, ToolResultMessage,
};
use crate::agent::tools::todos::TodoTask;
use crate::content::ToolOutput;
use crate::plugin_host::imports::ui::UiRequest;

/// A tool's output as events carry it: `{content, details?, structuredContent?, isError?}` (the
/// structured form only in `tool_execution_end`; `isError` with a tool's own structured form,
/// as pi 1.5.2 writes an MCP tool's error).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultObject(pub ToolOutput, pub Option<Value>);

impl Serialize for ResultObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let own_error = self.0.is_error && self.0.structured.is_some() && self.1.is_some();
        let len = 1
            + usize::from(self.0.details.is_some())
            + usize::from(self.1.is_some())
            + usize::from(own_error);
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("content", &self.0.content)?;
        if let Some(details) = &self.0.details {
            map.serialize_entry("details", details)?;
        }
        if let Some(structured) = &self.1 {
            map.serialize_entry("structuredContent", structured)?;
        }
        if own_error {
            map.serialize_entry("isError", &true)?;
        }
        map.end()
    }
}

/// Tool results as messages (with their `role`), as pi's `turn_end` lists them.
fn results_as_messages<S: serde::Serializer>(
    results: &[ToolResultMessage],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut list = serializer.serialize_seq(Some(results.len()))?;
    for result in results {
        list.serialize_element(&AgentMessage::ToolResult(result.clone()))?;
    }
    list.end()
}

/// One session event. Variants and fields are in pi's order (the serde form is pi's JSON).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEvent {
    /// A run began.
    AgentStart,
    /// A run ended, with every message it added.
    #[serde(rename_all = "camelCase")]
    AgentEnd {
        /// The run's messages.
        messages: Vec<AgentMessage>,
        /// True when a retry or an overflow compaction continues the run.
        will_retry: bool,
    },
    /// A turn began.
    TurnStart,
    /// A turn ended: the answer and its tool results.
    #[serde(rename_all = "camelCase")]
    TurnEnd {
        /// The answer.
        message: AgentMessage,
        /// Its tool results.
        #[serde(serialize_with = "results_as_messages")]
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message began (an assistant message: the stream started).
    MessageStart {
        /// The message (an answer as it is when the stream starts).
        message: AgentMessage,
        /// The id the host gave the user message (`clientMessageId`), echoed.
        #[serde(rename = "clientMessageId", skip_serializing_if = "Option::is_none")]
        client_message_id: Option<String>,
    },
    /// A message is complete.
    MessageEnd {
        /// The message.
        message: AgentMessage,
    },
    /// The steering and follow-up queues changed.
    #[serde(rename_all = "camelCase")]
    QueueUpdate {
        /// Steering texts.
        steering: Vec<String>,
        /// Follow-up texts.
        follow_up: Vec<String>,
        /// The ids the host gave the queued messages (`clientMessageId`), one per text (null
        /// where none was given); absent when no queued message has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        client_message_ids: Option<QueueIds>,
    },
    /// A tool call began.
    #[serde(rename_all = "camelCase")]
    ToolExecutionStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments as the model sent them.
        args: Value,
        /// The tool call that made this call (a `codemode` script's), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A tool call reported progress.
    #[serde(rename_all = "camelCase")]
    ToolExecutionUpdate {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments as the model sent them.
        args: Value,
        /// The output so far.
        partial_result: ResultObject,
        /// The tool call that made this call (a `codemode` script's), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// A tool call ended.
    #[serde(rename_all = "camelCase")]
    ToolExecutionEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// Its output.
        result: ResultObject,
        /// True for an error result.
        is_error: bool,
        /// How long the call ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// The tool call that made this call (a `codemode` script's), if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
    },
    /// The thinking level changed.
    ThinkingLevelChanged {
        /// The new level.
        level: String,
    },
    /// The session's name changed.
    SessionInfoChanged {
        /// The new name.
        name: String,
    },
    /// Nothing can continue the run any more (no retry, compaction or queued message).
    AgentSettled {
        /// True when the run was aborted.
        aborted: bool,
    },
    /// A transient error is retried after a delay.
    #[serde(rename_all = "camelCase")]
    AutoRetryStart {
        /// The attempt about to run.
        attempt: u32,
        /// The most attempts.
        max_attempts: u32,
        /// The wait before it.
        delay_ms: u64,
        /// The error retried.
        error_message: String,
    },
    /// A retry sequence ended.
    #[serde(rename_all = "camelCase")]
    AutoRetryEnd {
        /// True when an attempt succeeded.
        success: bool,
        /// The last attempt.
        attempt: u32,
        /// The error that ended it, if it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// A compaction began (`reason`: manual, threshold or overflow).
    CompactionStart {
        /// Why.
        reason: String,
    },
    /// A compaction ended.
    #[serde(rename_all = "camelCase")]
    CompactionEnd {
        /// Why it ran.
        reason: String,
        /// `{summary, firstKeptEntryId, tokensBefore, details}` when it succeeded.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// True when an extension cancelled it.
        aborted: bool,
        /// True when the run is retried after it.
        will_retry: bool,
        /// Why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// An automatic compaction began.
    AutoCompactionStart {
        /// threshold or overflow.
        reason: String,
    },
    /// An automatic compaction ended.
    #[serde(rename_all = "camelCase")]
    AutoCompactionEnd {
        /// The compaction's result when it succeeded.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// True when it was cancelled.
        aborted: bool,
        /// True when the run is retried after it.
        will_retry: bool,
        /// Why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// Streamed rules stopped an answer.
    TtsrTriggered {
        /// The rules, as `{name, path, content, globs, description, ttsrTrigger}`.
        rules: Vec<Value>,
    },
    /// A run that would end with incomplete todos is reminded of them.
    #[serde(rename_all = "camelCase")]
    TodoReminder {
        /// The incomplete todos.
        todos: Vec<TodoTask>,
        /// This reminder's number.
        attempt: u32,
        /// The most reminders.
        max_attempts: u32,
    },
    /// A finished todo list was cleared.
    TodoAutoClear,
    /// A compaction's summary request failed transiently and is retried after a delay.
    #[serde(rename_all = "camelCase")]
    SummarizationRetryScheduled {
        /// The retry (1 for the first).
        attempt: u32,
        /// How many retries there may be.
        max_attempts: u32,
        /// The wait before it.
        delay_ms: u64,
        /// The failure.
        error_message: String,
    },
    /// The retried summary request starts.
    SummarizationRetryAttemptStart {
        /// What the summary is for (`compaction`).
        source: String,
        /// Why the compaction runs (`manual`, `threshold`, `overflow`).
        reason: String,
    },
    /// The retries of a summary request are over (it succeeded or they ran out).
    SummarizationRetryFinished,
    /// An entry that is not a message was added to the session (pi 1.5): an extension's
    /// `appendEntry`, or the `context_edit` that takes a failed answer out of the context
    /// before a retry.
    EntryAppended {
        /// The entry as the session file holds it.
        entry: Value,
    },
    /// The plugin set changed (hot reload).
    PluginsChanged {
        /// Ids of new plugins.
        added: Vec<String>,
        /// Ids of changed plugins.
        updated: Vec<String>,
        /// Ids of plugins gone.
        removed: Vec<String>,
    },
    /// An extension failed; the session goes on. Never filtered, never observed.
    #[serde(rename_all = "camelCase")]
    ExtensionError {
        /// The extension's manifest path.
        extension_path: String,
        /// What it was doing.
        event: String,
        /// The error.
        error: String,
    },
    /// The user's `bash` command finished (its record). Front-ends that predate the record in
    /// `get_messages` (pi 0.16) show it as `bash_end`; extensions do not observe it.
    BashEnd {
        /// The `bashExecution` message.
        message: AgentMessage,
    },
    /// The session was replaced (observed by extensions only).
    #[serde(rename_all = "camelCase")]
    SessionSwitch {
        /// new or resume.
        reason: String,
        /// The file left.
        previous_session_file: Option<String>,
    },
    /// The session was forked or cloned (observed by extensions only).
    #[serde(rename_all = "camelCase")]
    SessionFork {
        /// The file left.
        previous_session_file: Option<String>,
    },
    /// An extension asks the host something (a dialog) or tells it something. Never filtered,
    /// never observed.
    UiRequest {
        /// The request id the answer names.
        id: String,
        /// What to show.
        #[serde(skip)]
        request: UiRequest,
        /// The tool call the dialog is about (the sandbox's approval of a call), when there is
        /// one: a front-end can show it on that call (ACP's `session/request_permission`).
        #[serde(skip)]
        tool_call_id: Option<String>,
    },
    /// A dialog the host was asked is withdrawn (it timed out).
    #[serde(rename_all = "camelCase")]
    UiCancel {
        /// This notice's id.
        id: String,
        /// The dialog withdrawn.
        target_id: String,
    },
    /// The host is asked to run one of its tools.
    #[serde(rename_all = "camelCase")]
    HostToolCall {
        /// The request id its answer names.
        id: String,
        /// The model's tool call id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The arguments.
        arguments: Value,
    },
    /// A host tool call is withdrawn (abort or timeout).
    #[serde(rename_all = "camelCase")]
    HostToolCancel {
        /// This notice's id.
        id: String,
        /// The call withdrawn.
        target_id: String,
    },
}

impl SessionEvent {
    /// The event's pi name (`message_start`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::AgentStart => "agent_start",
            SessionEvent::AgentEnd { .. } => "agent_end",
            SessionEvent::TurnStart => "turn_start",
            SessionEvent::TurnEnd { .. } => "turn_end",
            SessionEvent::MessageStart { .. } => "message_start",
            SessionEvent::MessageEnd { .. } => "message_end",
            SessionEvent::QueueUpdate { .. } => "queue_update",
            SessionEvent::ToolExecutionStart { .. } => "tool_execution_start",
            SessionEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            SessionEvent::ToolExecutionEnd { .. } => "tool_execution_end",
            SessionEvent::ThinkingLevelChanged { .. } => "thinking_level_changed",
            SessionEvent::SessionInfoChanged { .. } => "session_info_changed",
            SessionEvent::AgentSettled { .. } => "agent_settled",
            SessionEvent::AutoRetryStart { .. } => "auto_retry_start",
            SessionEvent::AutoRetryEnd { .. } => "auto_retry_end",
            SessionEvent::CompactionStart { .. } => "compaction_start",
            SessionEvent::CompactionEnd { .. } => "compaction_end",
            SessionEvent::AutoCompactionStart { .. } => "auto_compaction_start",
            SessionEvent::AutoCompactionEnd { .. } => "auto_compaction_end",
            SessionEvent::TtsrTriggered { .. } => "ttsr_triggered",
            SessionEvent::TodoReminder { .. } => "todo_reminder",
            SessionEvent::TodoAutoClear => "todo_auto_clear",
            SessionEvent::SummarizationRetryScheduled { .. } => "summarization_retry_scheduled",
            SessionEvent::SummarizationRetryAttemptStart { .. } => {
                "summarization_retry_attempt_start"
            }
            SessionEvent::SummarizationRetryFinished => "summarization_retry_finished",
            SessionEvent::EntryAppended { .. } => "entry_appended",
            SessionEvent::PluginsChanged { .. } => "plugins_changed",
            SessionEvent::ExtensionError { .. } => "extension_error",
            SessionEvent::BashEnd { .. } => "bash_end",
            SessionEvent::SessionSwitch { .. } => "session_switch",
            SessionEvent::SessionFork { .. } => "session_fork",
            SessionEvent::UiRequest { .. } => "extension_ui_request",
            SessionEvent::UiCancel { .. } => "extension_ui_request",
            SessionEvent::HostToolCall { .. } => "host_tool_call",
            SessionEvent::HostToolCancel { .. } => "host_tool_cancel",
        }
    }

    /// True for the events extensions may observe (not requests to the host, errors, or
    /// front-end-only records).
    pub fn observable(&self) -> bool {
        !matches!(
            self,
            SessionEvent::ExtensionError { .. }
                | SessionEvent::BashEnd { .. }
                | SessionEvent::UiRequest { .. }
                | SessionEvent::UiCancel { .. }
                | SessionEvent::HostToolCall { .. }
                | SessionEvent::HostToolCancel { .. }
        )
    }

    /// True for the events only extensions see (a front-end ignores them).
    pub fn observe_only(&self) -> bool {
        matches!(
            self,
            SessionEvent::SessionSwitch { .. } | SessionEvent::SessionFork { .. }
        )
    }
}

/// What changed in a streamed answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// A text block opened.
    TextStart,
    /// Text was appended.
    TextDelta,
    /// A text block is complete.
    TextEnd,
    /// A thinking block opened.
    ThinkingStart,
    /// Thinking was appended.
    ThinkingDelta,
    /// A thinking block is complete.
    ThinkingEnd,
    /// A tool call opened.
    ToolcallStart,
    /// Tool-call argument JSON was appended.
    ToolcallDelta,
    /// A tool call is complete.
    ToolcallEnd,
}

impl UpdateKind {
    /// pi's name for it (`assistantMessageEvent.type`).
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateKind::TextStart => "text_start",
            UpdateKind::TextDelta => "text_delta",
            UpdateKind::TextEnd => "text_end",
            UpdateKind::ThinkingStart => "thinking_start",
            UpdateKind::ThinkingDelta => "thinking_delta",
            UpdateKind::ThinkingEnd => "thinking_end",
            UpdateKind::ToolcallStart => "toolcall_start",
            UpdateKind::ToolcallDelta => "toolcall_delta",
            UpdateKind::ToolcallEnd => "toolcall_end",
        }
    }

    /// True for the deltas that only append to a text or thinking block.
    pub fn appends_text(self) -> bool {
        matches!(self, UpdateKind::TextDelta | UpdateKind::ThinkingDelta)
    }
}

/// What an update carries besides the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdatePayload {
    /// Nothing (a block opened).
    None,
    /// The text appended (`delta`).
    Delta(String),
    /// The block's whole text (`content`, at its end).
    Content(String),
    /// The finished tool call (`toolCall`: the block at `content_index`).
    ToolCall,
}

/// One change to the answer being streamed: pi's `message_update`.
#[derive(Debug, Clone, Copy)]
pub struct AssistantUpdate<'a> {
    /// What changed.
    pub kind: UpdateKind,
    /// The block it changed.
    pub content_index: usize,
    /// What it carries.
    pub payload: &'a UpdatePayload,
    /// The answer after the change.
    pub message: &'a AssistantMessage,
}

impl AssistantUpdate<'_> {
    /// The finished tool call of a `toolcall_end`.
    pub fn tool_call(&self) -> Option<&AssistantBlock> {
        match self.payload {
            UpdatePayload::ToolCall => self.message.content.get(self.content_index),
            _ => None,
        }
    }
}

/// The update's `assistantMessageEvent` (with `partial`).
struct AssistantEvent<'a>(&'a AssistantUpdate<'a>);

impl Serialize for AssistantEvent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let update = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", update.kind.as_str())?;
        map.serialize_entry("contentIndex", &update.content_index)?;
        match update.payload {
            UpdatePayload::None => {}
            UpdatePayload::Delta(delta) => map.serialize_entry("delta", delta)?,
            UpdatePayload::Content(content) => map.serialize_entry("content", content)?,
            UpdatePayload::ToolCall => map.serialize_entry("toolCall", &update.tool_call())?,
        }
        map.serialize_entry("partial", &AssistantRef::Assistant(update.message))?;
        map.end()
    }
}

/// An assistant message serialized as an `AgentMessage` (with its `role`) without a clone.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
enum AssistantRef<'a> {
    Assistant(&'a AssistantMessage),
}

impl Serialize for AssistantUpdate<'_> {
    /// pi's full `message_update` event: `{type, assistantMessageEvent{…, partial}, message}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", "message_update")?;
        map.serialize_entry("assistantMessageEvent", &AssistantEvent(self))?;
        map.serialize_entry("message", &AssistantRef::Assistant(self.message))?;
        map.end()
    }
}

/// A boxed future a sink returns.
pub type SinkFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Where a session's events go. Implemented by each front-end.
pub trait EventSink: Send + Sync {
    /// Takes an event. Called in order; must not wait (a front-end queues what it writes).
    fn emit(&self, event: &SessionEvent);

    /// Takes a change to the answer being streamed; the returned future resolves when the
    /// front-end is ready for more (a slow reader slows the stream instead of growing memory).
    fn message_update<'a>(&'a self, update: &AssistantUpdate<'_>) -> SinkFuture<'a>;

    /// An extension asked for the end of the process (pi's `ctx.shutdown()`): a front-end that
    /// can end does so once the session is idle; the others ignore it, as pi's print mode does.
    fn extension_shutdown(&self) {}

    /// An extension asked to switch to the session file `path` (pi's `ctx.switchSession`;
    /// relative to the folder pith started in). A front-end that can serve a session of
    /// another folder does the switch and resolves to its outcome (`Err`: why it failed);
    /// `None` leaves it to the engine, which switches to files of the session's own folder.
    fn switch_session(&self, path: &str) -> Option<SwitchFuture> {
        let _ = path;
        None
    }
}

/// A front-end's switch on an extension's request: `Ok(true)` when an extension cancelled it.
pub type SwitchFuture = Pin<Box<dyn Future<Output = Result<bool, String>> + Send>>;

/// A sink that drops everything (a session nobody watches).
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: &SessionEvent) {}

    fn message_update<'a>(&'a self, _update: &AssistantUpdate<'_>) -> SinkFuture<'a> {
        Box::pin(std::future::ready(()))
    }
}

/// The `clientMessageId`s of the queued messages, one per text of each queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueIds {
    /// The steering queue's.
    pub steering: Vec<Option<String>>,
    /// The follow-up queue's.
    pub follow_up: Vec<Option<String>>,
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
