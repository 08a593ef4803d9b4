//! The session's configuration and conversation state.

use super::*;

/// How steering interacts with tool calls in flight (seed 001's `interruptMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptMode {
    /// Steering is checked between tool calls; pending steering skips the remaining calls (pi).
    Immediate,
    /// Steering waits for the turn to finish.
    Wait,
}

impl InterruptMode {
    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            InterruptMode::Immediate => "immediate",
            InterruptMode::Wait => "wait",
        }
    }
}

/// How a session starts.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// The working directory.
    pub cwd: PathBuf,
    /// The initial model, if any.
    pub model: Option<Model>,
    /// The initial thinking level (clamped to the model).
    pub thinking: Option<ThinkingLevel>,
    /// Which plugin tools are active.
    pub tools: ToolSelection,
    /// System prompt options.
    pub prompt: PromptOptions,
    /// Steering mode.
    pub steering_mode: QueueMode,
    /// Follow-up mode.
    pub follow_up_mode: QueueMode,
    /// Whether automatic compaction is on.
    pub auto_compaction: bool,
    /// Compaction reserve and kept tokens.
    pub compaction: crate::agent::compaction::CompactionPolicy,
    /// The limit on one tool result's text (settings `toolResults`).
    pub tool_output: crate::agent::tool_output::OutputLimit,
    /// Whether automatic retry is on.
    pub auto_retry: bool,
    /// Retry attempts and delays.
    pub retry: crate::agent::retry::RetryPolicy,
    /// Models for `cycle_model` (`--models`, settings `enabledModels`), with optional levels.
    pub scoped_models: Vec<(Model, Option<ThinkingLevel>)>,
    /// True when the model was asked for on the command line (a resumed session keeps it).
    pub model_explicit: bool,
    /// The session to start with (new, or opened with `--session` / `--continue`).
    pub session: Option<SessionFile>,
    /// Where new sessions are written; in memory when `None` (`--no-session`).
    pub sessions_dir: Option<PathBuf>,
    /// Skills and prompt templates.
    pub resources: Resources,
    /// How long a finished todo list stays before it is cleared.
    pub todo_clear_delay: std::time::Duration,
}

/// The conversation state.
pub struct State {
    /// The current context.
    pub messages: Vec<AgentMessage>,
    /// The entry id of each message (pi's short ids), parallel to `messages`.
    pub entry_ids: Vec<String>,
    /// The session file (or the in-memory session).
    pub store: SessionFile,
    /// The model.
    pub model: Option<Model>,
    /// The thinking level.
    pub thinking: ThinkingLevel,
    /// Steering messages.
    pub steering: Queue,
    /// Follow-up messages.
    pub follow_up: Queue,
    /// The interrupt mode.
    pub interrupt_mode: InterruptMode,
    /// True while a run streams.
    pub streaming: bool,
    /// Cancels the current run.
    pub cancel: Option<CancellationToken>,
    /// The session id.
    pub session_id: String,
    /// The session name.
    pub session_name: Option<String>,
    /// Automatic compaction.
    pub auto_compaction: bool,
    /// Compaction reserve and kept tokens.
    pub compaction: crate::agent::compaction::CompactionPolicy,
    /// The limit on one tool result's text.
    pub tool_output: crate::agent::tool_output::OutputLimit,
    /// True while a compaction runs.
    pub compacting: bool,
    /// Automatic retry.
    pub auto_retry: bool,
    /// Retry attempts and delays.
    pub retry: crate::agent::retry::RetryPolicy,
    /// Models for `cycle_model`.
    pub scoped_models: Vec<(Model, Option<ThinkingLevel>)>,
    /// Cancels the wait before a retry (`abort_retry`).
    pub retry_wait: Option<CancellationToken>,
    /// Active plugin tools.
    pub tools: ToolSelection,
    /// Host-defined tools.
    pub host_tools: Vec<HostToolDefinition>,
    /// `bash` command records made while a run streamed, added before the next prompt.
    pub pending_bash: Vec<AgentMessage>,
    /// Extension messages delivered with the next prompt (`next-turn`).
    pub next_turn: Vec<AgentMessage>,
    /// The system prompt an extension set for the current run (`before_agent_start`).
    pub system_prompt_override: Option<String>,
    /// The todo list.
    pub todos: Vec<TodoPhase>,
    /// Bumped on every change of the todo list (a pending auto-clear checks it).
    pub todo_generation: u64,
    /// The streamed rules that already triggered in this session (each triggers once).
    pub triggered_rules: std::collections::HashSet<String>,
}

impl State {
    /// Appends a message to the conversation and the session file; returns its entry id.
    pub fn append(&mut self, message: AgentMessage) -> String {
        let id = self.store.append_message(&message);
        self.messages.push(message);
        self.entry_ids.push(id.clone());
        id
    }

    /// Takes a failed answer at the end out of the context (it stays in the session file, as
    /// in pi's; providers would leave it out anyway).
    pub fn drop_failed_answer(&mut self) {
        if matches!(self.messages.last(), Some(AgentMessage::Assistant(a)) if a.stop_reason == crate::agent::message::StopReason::Error)
        {
            self.messages.pop();
            self.entry_ids.pop();
        }
    }

    /// Replaces the conversation with the session's context at its leaf.
    pub(super) fn load_context(&mut self, context: crate::agent::session_file::Context) {
        let (ids, messages): (Vec<String>, Vec<AgentMessage>) =
            context.messages.into_iter().unzip();
        self.messages = messages;
        self.entry_ids = ids;
    }

    /// Records the model in the session file.
    pub(super) fn record_model(&mut self) {
        if let Some(model) = &self.model {
            let fields = json!({"provider": model.provider, "modelId": model.id});
            if let Value::Object(fields) = fields {
                self.store.append("model_change", fields);
            }
        }
    }

    /// Records the thinking level in the session file.
    pub(super) fn record_thinking(&mut self) {
        if let Value::Object(fields) = json!({"thinkingLevel": self.thinking.as_str()}) {
            self.store.append("thinking_level_change", fields);
        }
    }
}
