//! The session's configuration and conversation state.

use crate::agent::session::file::held::{Held, HeldMessages};
use std::path::PathBuf;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::agent::conversation::message::AgentMessage;
use crate::agent::conversation::system_prompt::PromptOptions;
use crate::agent::model::{Model, ThinkingLevel};
use crate::agent::session::file::SessionFile;
use crate::agent::session::queue::{Queue, QueueMode, Queued};
use crate::agent::tools::ToolSelection;
use crate::agent::tools::host_tools::HostToolDefinition;
use crate::agent::tools::todos::TodoPhase;
use crate::resources::Resources;

/// How steering interacts with tool calls in flight (seed 001's `interruptMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
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

/// Where pi's own behaviour changed between the versions pith speaks for; the front-end picks
/// one (pi 1.5's by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PiBehaviour {
    /// Runs record pi 1.5's `system` message (the first run of a session, and a run after the
    /// tool set changed).
    pub system_message: bool,
    /// pi 1.5's compaction: a cut inside a turn keeps the turn's tail and summarizes its start
    /// as the turn's context, and a manual compaction with nothing outside the kept tail fails
    /// with "Nothing to compact (session too small)"; pi 0.73 cut at the turn's start and
    /// summarized even nothing.
    pub split_turn_compaction: bool,
    /// Cycling from a non-reasoning model to a reasoning one raises the thinking level to
    /// medium (pi 0.73; pi 1.5 leaves it as it is).
    pub raise_thinking_on_cycle: bool,
    /// A failed answer before its retry is taken out of the context by a `context_edit` entry
    /// in the session file (pi 1.5); pi 0.73 only left it out of the next request.
    pub context_edit: bool,
    /// Whose words a tool call's invalid arguments are told in.
    pub validation: crate::agent::tools::Wording,
}

impl PiBehaviour {
    /// pi 1.5.2's.
    pub const PI_1_5: PiBehaviour = PiBehaviour {
        system_message: true,
        split_turn_compaction: true,
        raise_thinking_on_cycle: false,
        context_edit: true,
        validation: crate::agent::tools::Wording::PiSchema,
    };
    /// pi 0.73.1's.
    pub const PI_0_73: PiBehaviour = PiBehaviour {
        system_message: false,
        split_turn_compaction: false,
        raise_thinking_on_cycle: true,
        context_edit: false,
        validation: crate::agent::tools::Wording::Ajv,
    };
}

impl Default for PiBehaviour {
    fn default() -> Self {
        PiBehaviour::PI_1_5
    }
}

/// Where `reload` reads the settings and the model files.
#[derive(Debug, Clone, Default)]
pub struct ReloadSources {
    /// The agent directory's `settings.json`.
    pub global_settings: PathBuf,
    /// The project's directory, when it is trusted (its settings files load).
    pub project_dir: Option<PathBuf>,
    /// `models.json`.
    pub models_file: PathBuf,
    /// `auth.json`.
    pub auth_file: PathBuf,
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
    pub compaction: crate::agent::session::policies::CompactionPolicy,
    /// Their per-model values (`compaction.modelOverrides`).
    pub compaction_overrides: crate::agent::session::policies::CompactionOverrides,
    /// The limit on one tool result's text (settings `toolResults`).
    pub tool_output: crate::agent::run::tool_output::OutputLimit,
    /// The most bytes one answer may stream (settings `answer.maxBytes`).
    pub max_answer_bytes: usize,
    /// The wall-clock limit per tool call (settings `tools.timeoutMs`, `tools.byName`).
    pub tool_timeouts: crate::agent::run::tool_timeout::ToolTimeouts,
    /// What shapes each request (settings `images.blockImages`, `thinkingBudgets`).
    pub request_settings: crate::agent::session::policies::RequestSettings,
    /// The thinking level a model is given when it is chosen without one.
    pub thinking_defaults: crate::agent::session::policies::ThinkingDefaults,
    /// Where `reload` reads the settings and the model files.
    pub sources: ReloadSources,
    /// Whether automatic retry is on.
    pub auto_retry: bool,
    /// Retry attempts and delays.
    pub retry: crate::agent::run::retry::RetryPolicy,
    /// Models for `cycle_model` (`--models`, settings `enabledModels`), with optional levels.
    pub scoped_models: Vec<(Model, Option<ThinkingLevel>)>,
    /// True when the model was asked for on the command line (a resumed session keeps it).
    pub model_explicit: bool,
    /// The session to start with (new, or opened with `--session` / `--continue`).
    pub session: Option<SessionFile>,
    /// `--name`: the new session's name (recorded before anything else).
    pub name: Option<String>,
    /// `--session-id`: the new session's id.
    pub session_id: Option<String>,
    /// Which pi's behaviour the session follows where pi changed it.
    pub behaviour: PiBehaviour,
    /// Where new sessions are written; in memory when `None` (`--no-session`).
    pub sessions_dir: Option<PathBuf>,
    /// Skills and prompt templates.
    pub resources: Resources,
    /// How long a finished todo list stays before it is cleared.
    pub todo_clear_delay: std::time::Duration,
    /// The MCP servers to connect (`mcp.json`, an ACP client's) and where their log goes.
    pub mcp: crate::mcp::McpSetup,
    /// The session's sandbox when it works elsewhere than the process (an ACP session in
    /// another directory; its `workspace` is the session's directory). `None`: the host's.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::SandboxPolicy>>,
    /// The extensions' flags given on the command line.
    pub flags: crate::agent::extensions::flags::CliFlags,
    /// How the process was started (what extensions see as pi's `ctx.mode`).
    pub mode: RunMode,
}

/// How the process serves the session (pi's `ctx.mode`, with pith's ACP).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunMode {
    /// `--mode rpc`.
    #[default]
    Rpc,
    /// `--mode json`.
    Json,
    /// `-p` / `--mode text`.
    Print,
    /// `--mode acp`.
    Acp,
}

impl From<RunMode>
    for crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::session_read::RunMode
{
    fn from(mode: RunMode) -> Self {
        match mode {
            RunMode::Rpc => Self::Rpc,
            RunMode::Json => Self::Json,
            RunMode::Print => Self::Print,
            RunMode::Acp => Self::Acp,
        }
    }
}

impl RunMode {
    /// True when someone can answer dialogs (pi's `ctx.hasUI`).
    pub fn has_ui(self) -> bool {
        matches!(self, RunMode::Rpc | RunMode::Acp)
    }
}

/// How many of the last messages a session keeps in memory after a run (the others are read
/// back from the session file when needed).
const KEPT_IN_MEMORY: usize = 64;

/// The conversation state.
pub struct State {
    /// The current context (most of a long session's messages left in its file).
    pub(super) messages: Vec<Held>,
    /// The entry id of each message (pi's short ids), parallel to `messages`.
    pub(super) entry_ids: Vec<String>,
    /// Counts the changes of `messages` other than appends (a reload, a dropped answer): a
    /// prefix of the same generation is unchanged.
    pub(super) messages_generation: u64,
    /// The session file (or the in-memory session).
    pub(super) store: SessionFile,
    /// The model.
    pub(super) model: Option<Model>,
    /// The thinking level.
    pub(super) thinking: ThinkingLevel,
    /// Steering messages.
    pub(super) steering: Queue,
    /// Follow-up messages.
    pub(super) follow_up: Queue,
    /// The interrupt mode.
    pub(super) interrupt_mode: InterruptMode,
    /// True while a run streams.
    pub(super) streaming: bool,
    /// Cancels the current run.
    pub(super) cancel: Option<CancellationToken>,
    /// The session id.
    pub(super) session_id: String,
    /// The session name.
    pub(super) session_name: Option<String>,
    /// Automatic compaction.
    pub(super) auto_compaction: bool,
    /// Compaction reserve and kept tokens.
    pub(super) compaction: crate::agent::session::policies::CompactionPolicy,
    /// Their per-model values.
    pub(super) compaction_overrides: crate::agent::session::policies::CompactionOverrides,
    /// The limit on one tool result's text.
    pub(super) tool_output: crate::agent::run::tool_output::OutputLimit,
    /// The most bytes one answer may stream.
    pub(super) max_answer_bytes: usize,
    /// The wall-clock limit per tool call.
    pub(super) tool_timeouts: crate::agent::run::tool_timeout::ToolTimeouts,
    /// What shapes each request.
    pub(super) request_settings: crate::agent::session::policies::RequestSettings,
    /// The thinking level a model is given when it is chosen without one.
    pub(super) thinking_defaults: crate::agent::session::policies::ThinkingDefaults,
    /// Which pi's behaviour the session follows.
    pub(super) behaviour: PiBehaviour,
    /// How many holds keep prompts waiting: a compaction running, and a run that will
    /// compact past the threshold until it settles (0: none).
    pub(super) compacting: u32,
    /// Of those holds, the runs whose threshold compaction is over but which have not settled
    /// yet (they hold prompts, but no compaction runs: `isCompacting` is false).
    pub(super) settling: u32,
    /// Automatic retry.
    pub(super) auto_retry: bool,
    /// Retry attempts and delays.
    pub(super) retry: crate::agent::run::retry::RetryPolicy,
    /// Models for `cycle_model`.
    pub(super) scoped_models: Vec<(Model, Option<ThinkingLevel>)>,
    /// Cancels the wait before a retry (`abort_retry`).
    pub(super) retry_wait: Option<CancellationToken>,
    /// Active plugin tools.
    pub(super) tools: ToolSelection,
    /// Host-defined tools.
    pub(super) host_tools: Vec<HostToolDefinition>,
    /// `bash` command records made while a run streamed, added before the next prompt.
    pub(super) pending_bash: Vec<AgentMessage>,
    /// The failed answer taken out of the context before a retry: a virtual model's router
    /// gets it as `failed`.
    pub(super) retry_failed: Option<crate::agent::conversation::message::AssistantMessage>,
    /// Under a virtual model, the physical model its router chose last (its limits size the
    /// requests).
    pub(super) routed_model: Option<crate::agent::model::Model>,
    /// Extension messages delivered with the next prompt (`next-turn`).
    pub(super) next_turn: Vec<AgentMessage>,
    /// The `clientMessageId` of the prompt that started the run, echoed in the `message_start`
    /// of its user message.
    pub(crate) prompt_client_id: Option<String>,
    /// The system prompt an extension set for the current run (`before_agent_start`).
    pub(super) system_prompt_override: Option<String>,
    /// The todo list.
    pub(super) todos: Vec<TodoPhase>,
    /// Bumped on every change of the todo list (a pending auto-clear checks it).
    pub(super) todo_generation: u64,
    /// The streamed rules that already triggered in this session (each triggers once).
    pub(super) triggered_rules: std::collections::HashSet<String>,
}

impl State {
    /// The model, if one is set.
    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// The thinking level.
    pub fn thinking(&self) -> ThinkingLevel {
        self.thinking
    }

    /// The conversation as the model sees it (stored messages read when asked).
    pub fn messages(&self) -> HeldMessages<'_> {
        HeldMessages::new(&self.messages, &self.entry_ids, &self.store)
    }

    /// Lets the messages older than the last few go back to their lines in the session file
    /// (after a run: a long-lived session holds what it recently added, not all of it).
    pub fn settle_messages(&mut self) {
        crate::agent::session::file::held::settle(
            &mut self.messages,
            &self.entry_ids,
            &self.store,
            KEPT_IN_MEMORY,
        );
    }

    /// The generation of the conversation: the same while messages are only appended.
    pub fn messages_generation(&self) -> u64 {
        self.messages_generation
    }

    /// The session file, when it is saved to one.
    pub fn session_file_path(&self) -> Option<&std::path::Path> {
        self.store.path()
    }

    /// The session's id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The session's name, if it has one.
    pub fn session_name(&self) -> Option<&str> {
        self.session_name.as_deref()
    }

    /// True while a run streams.
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// What cancels the current run, if one runs.
    pub fn run_cancel(&self) -> Option<CancellationToken> {
        self.cancel.clone()
    }

    /// The limit on one tool result for the current model.
    pub fn output_limit(&self) -> crate::agent::run::tool_output::OutputLimit {
        self.tool_output.for_window(self.window())
    }

    /// The context window requests are sized by: the model's; under a virtual model, that of
    /// the physical model it routed to last, or its own declared one before any (pi's).
    fn window(&self) -> u64 {
        match &self.model {
            Some(model) if model.is_virtual() => self
                .routed_model
                .as_ref()
                .map_or(model.context_window, |routed| routed.context_window),
            Some(model) => model.context_window,
            None => 0,
        }
    }

    /// Records the physical model a virtual model's request went to.
    pub fn set_routed_model(&mut self, model: crate::agent::model::Model) {
        self.routed_model = Some(model);
    }

    /// The most bytes one answer may stream before it is stopped.
    pub fn max_answer_bytes(&self) -> usize {
        self.max_answer_bytes
    }

    /// What shapes each request (`images.blockImages`, `thinkingBudgets`).
    pub fn request_settings(&self) -> crate::agent::session::policies::RequestSettings {
        self.request_settings.clone()
    }

    /// The wall-clock limits of tool calls.
    pub fn tool_timeouts(&self) -> crate::agent::run::tool_timeout::ToolTimeouts {
        self.tool_timeouts.clone()
    }

    /// Whether automatic compaction is on.
    pub fn auto_compaction(&self) -> bool {
        self.auto_compaction
    }

    /// True when the context is past the compaction threshold (the window minus the reserve)
    /// and automatic compaction is on.
    pub fn over_compaction_threshold(&self) -> bool {
        let window = self.window();
        self.auto_compaction
            && window > 0
            && crate::agent::conversation::tokens::context_tokens(&self.messages())
                > window.saturating_sub(self.compaction_policy().reserve_tokens)
    }

    /// The compaction policy for the current model (its `compaction.modelOverrides` entry over
    /// the ordinary settings).
    pub fn compaction_policy(&self) -> crate::agent::session::policies::CompactionPolicy {
        self.compaction_overrides
            .resolve(self.compaction, self.model.as_ref())
    }

    /// Whether automatic retry is on, and its policy.
    pub fn retry_settings(&self) -> (bool, crate::agent::run::retry::RetryPolicy) {
        (self.auto_retry, self.retry)
    }

    /// Sets (or clears) the wait before a retry, which `abort_retry` cancels.
    pub fn set_retry_wait(&mut self, wait: Option<CancellationToken>) {
        self.retry_wait = wait;
    }

    /// The system prompt an extension set for the current run.
    pub fn system_prompt_override(&self) -> Option<&str> {
        self.system_prompt_override.as_deref()
    }

    /// Sets (or clears) the run's system prompt override.
    pub fn set_system_prompt_override(&mut self, prompt: Option<String>) {
        self.system_prompt_override = prompt;
    }

    /// The keys of the streamed rules that already triggered.
    pub fn triggered_rules(&self) -> &std::collections::HashSet<String> {
        &self.triggered_rules
    }

    /// Records that a streamed rule triggered (each triggers once a session).
    pub fn mark_rule_triggered(&mut self, key: String) {
        self.triggered_rules.insert(key);
    }

    /// How steering interacts with tool calls in flight.
    pub fn interrupt_mode(&self) -> InterruptMode {
        self.interrupt_mode
    }

    /// The todo list.
    pub fn todos(&self) -> &[TodoPhase] {
        &self.todos
    }

    /// Takes what one poll of the steering queue delivers.
    pub fn poll_steering(&mut self) -> Vec<Queued> {
        self.steering.poll()
    }

    /// Takes what one poll of the follow-up queue delivers.
    pub fn poll_follow_up(&mut self) -> Vec<Queued> {
        self.follow_up.poll()
    }

    /// The failed answer the coming retry replaces, taken (see [`State::drop_failed_answer`]).
    pub fn take_retry_failed(
        &mut self,
    ) -> Option<crate::agent::conversation::message::AssistantMessage> {
        self.retry_failed.take()
    }

    /// The entries from the root to the leaf.
    pub fn branch_entries(&self) -> Vec<&crate::agent::session::file::Entry> {
        self.store.path_to_leaf()
    }

    /// One entry of the session as a JSON object (empty when its line cannot be read back).
    pub fn entry_body(&self, entry: &crate::agent::session::file::Entry) -> Map<String, Value> {
        self.store.body(entry)
    }

    /// Appends a non-message entry (`custom`, …) to the session file; returns the entry.
    pub fn append_entry(&mut self, kind: &str, fields: Map<String, Value>) -> Value {
        let id = self.store.append(kind, fields);
        self.store
            .entry(&id)
            .map_or(Value::Null, |entry| self.store.value(entry))
    }

    /// Appends a message to the conversation and the session file; returns its entry id.
    pub fn append(&mut self, message: AgentMessage) -> String {
        let id = self.store.append_message(&message);
        // An extension's message is a `custom_message` entry, not its message's line.
        self.messages
            .push(if matches!(message, AgentMessage::Custom(_)) {
                Held::kept(message)
            } else {
                Held::settling(message)
            });
        self.entry_ids.push(id.clone());
        id
    }

    /// Takes a failed answer at the end out of the context before a retry: it stays in the
    /// session file, and a `context_edit` entry (pi 1.5's) takes it out of the context there
    /// too; returns that entry.
    pub fn drop_failed_answer(&mut self) -> Option<Value> {
        if !matches!(self.messages.last().and_then(Held::parsed), Some(AgentMessage::Assistant(a)) if a.stop_reason == crate::agent::conversation::message::StopReason::Error)
        {
            return None;
        }
        self.messages_generation += 1;
        if let Some(Held::Parsed { message, .. }) = self.messages.pop()
            && let AgentMessage::Assistant(failed) = *message
        {
            self.retry_failed = Some(failed);
        }
        let target = self.entry_ids.pop()?;
        if !self.behaviour.context_edit {
            return None;
        }
        let fields = json!({"targetId": target, "replacement": null});
        let Value::Object(fields) = fields else {
            return None;
        };
        Some(self.append_entry("context_edit", fields))
    }

    /// Takes the settings' limits (`reload`); true when any differs from before.
    pub fn apply_policies(&mut self, policies: crate::agent::session::policies::Policies) -> bool {
        let before = (
            self.compaction,
            self.compaction_overrides.clone(),
            self.thinking_defaults.clone(),
            self.retry,
            self.tool_output,
            self.max_answer_bytes,
            self.tool_timeouts.clone(),
            self.request_settings.clone(),
        );
        self.compaction = policies.compaction;
        self.compaction_overrides = policies.compaction_overrides;
        self.request_settings = policies.request;
        self.thinking_defaults = policies.thinking;
        self.retry = policies.retry;
        self.tool_output = policies.tool_output;
        self.max_answer_bytes = policies.max_answer_bytes;
        self.tool_timeouts = policies.tool_timeouts;
        before
            != (
                self.compaction,
                self.compaction_overrides.clone(),
                self.thinking_defaults.clone(),
                self.retry,
                self.tool_output,
                self.max_answer_bytes,
                self.tool_timeouts.clone(),
                self.request_settings.clone(),
            )
    }

    /// Replaces the conversation with the session's context at its leaf.
    pub(super) fn load_context(&mut self, context: crate::agent::session::file::Context<Held>) {
        // A pi 1.5 session opened for a pi 0.73 host: its system records are not conversation.
        let keep_records = self.behaviour.system_message;
        let count = context.messages.len();
        let (mut ids, mut messages) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for (id, message) in context.messages {
            if keep_records || !matches!(message.parsed(), Some(AgentMessage::System(_))) {
                ids.push(id);
                messages.push(message);
            }
        }
        self.messages = messages;
        self.entry_ids = ids;
        self.messages_generation += 1;
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
