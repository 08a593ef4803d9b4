//! The agent session: the conversation state and every command that reads or changes it.
//!
//! The state sits behind a short-lived lock; a run is a separate task (see [`super::agent_loop`])
//! that takes the lock only to read or append, so `get_state`, `steer` or `abort` never wait
//! behind a streaming answer or a slow tool.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::event::{AssistantUpdate, EventSink, SessionEvent};
use super::events;
use super::extensions::Extensions;
use super::extensions::context::SessionContext;
use super::extensions::hooks::{BeforeSwitchEvent, Event as HookEvent, SwitchReason};
use super::extensions::ui::UiBridge;
use super::host_tools::{HostToolBridge, HostToolDefinition};
use super::message::{AgentMessage, js_value};
use super::model::{Model, ThinkingLevel};
use super::models::ModelRegistry;
use super::queue::{Queue, QueueMode, Queued};
use super::session_file::SessionFile;
use super::system_prompt::PromptOptions;
use super::todos::{self, TodoPhase};
use super::tools::{SessionTool, ToolSelection, session_tools};
use crate::content::Content;
use crate::plugin_host::PluginHost;
use crate::resources::Resources;

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
    pub compaction: super::compaction::CompactionPolicy,
    /// The limit on one tool result's text (settings `toolResults`).
    pub tool_output: super::tool_output::OutputLimit,
    /// Whether automatic retry is on.
    pub auto_retry: bool,
    /// Retry attempts and delays.
    pub retry: super::retry::RetryPolicy,
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
    pub compaction: super::compaction::CompactionPolicy,
    /// The limit on one tool result's text.
    pub tool_output: super::tool_output::OutputLimit,
    /// True while a compaction runs.
    pub compacting: bool,
    /// Automatic retry.
    pub auto_retry: bool,
    /// Retry attempts and delays.
    pub retry: super::retry::RetryPolicy,
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

    /// Replaces the conversation with the session's context at its leaf.
    fn load_context(&mut self, context: super::session_file::Context) {
        let (ids, messages): (Vec<String>, Vec<AgentMessage>) =
            context.messages.into_iter().unzip();
        self.messages = messages;
        self.entry_ids = ids;
    }

    /// Records the model in the session file.
    fn record_model(&mut self) {
        if let Some(model) = &self.model {
            let fields = json!({"provider": model.provider, "modelId": model.id});
            if let Value::Object(fields) = fields {
                self.store.append("model_change", fields);
            }
        }
    }

    /// Records the thinking level in the session file.
    fn record_thinking(&mut self) {
        if let Value::Object(fields) = json!({"thinkingLevel": self.thinking.as_str()}) {
            self.store.append("thinking_level_change", fields);
        }
    }
}

/// What the run task and the commands share.
pub struct Shared {
    /// The plugins.
    pub host: Arc<PluginHost>,
    /// Where events go (the front-end).
    pub events: Arc<dyn EventSink>,
    /// Host-defined tools' bridge.
    pub bridge: Arc<HostToolBridge>,
    /// Models and keys.
    pub models: ModelRegistry,
    /// Where new sessions are written; in memory when `None`.
    pub sessions_dir: Option<PathBuf>,
    /// The working directory.
    pub cwd: PathBuf,
    /// System prompt options.
    pub prompt: PromptOptions,
    /// The running `bash` command.
    pub bash: super::bash::BashControl,
    /// The session's extensions.
    pub extensions: Arc<Extensions>,
    /// Extension dialogs waiting for the host.
    pub ui: UiBridge,
    /// How long a finished todo list stays before it is cleared.
    pub todo_clear_delay: std::time::Duration,
    resources: Mutex<Arc<Resources>>,
    state: Mutex<State>,
    idle: watch::Sender<bool>,
    /// False while a compaction runs.
    not_compacting: watch::Sender<bool>,
}

impl Shared {
    /// Locks the state (a poisoned lock is recovered: the state stays usable).
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends a session event to the front-end, then to the extensions that observe it.
    pub fn emit(&self, event: &SessionEvent) {
        self.events.emit(event);
        if event.observable() {
            self.extensions.observe(event.kind(), || {
                serde_json::to_value(event).unwrap_or(Value::Null)
            });
        }
    }

    /// Sends a change of the answer being streamed, waiting while the front-end is behind.
    pub async fn emit_update(&self, update: &AssistantUpdate<'_>) {
        self.extensions.observe("message_update", || {
            serde_json::to_value(update).unwrap_or(Value::Null)
        });
        self.events.message_update(update).await;
    }

    /// The skills and templates now.
    pub fn resources(&self) -> Arc<Resources> {
        self.resources
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Finds the skills and templates again (after the plugin set changed).
    pub async fn reload_resources(&self) {
        let dirs = self.resources().dirs.clone();
        let fresh = Resources::load(dirs, &self.host).await;
        self.host.grant_read_dirs(fresh.skill_dirs());
        *self
            .resources
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(fresh);
    }

    /// The tools of the session now.
    pub fn tools(&self) -> Vec<SessionTool> {
        let state = self.state();
        session_tools(
            &self.host,
            &state.tools,
            self.extensions.tools(),
            &state.host_tools,
        )
    }

    /// Emits `queue_update` with the queues' texts.
    pub fn emit_queue_update(&self) {
        let (steering, follow_up) = {
            let state = self.state();
            (state.steering.texts(), state.follow_up.texts())
        };
        self.emit(&events::queue_update(steering, follow_up));
    }

    /// Marks a compaction under way (prompts wait for it).
    pub(crate) fn begin_compaction(&self) {
        self.state().compacting = true;
        self.not_compacting.send_replace(false);
    }

    /// Marks the compaction over.
    pub(crate) fn end_compaction(&self) {
        self.state().compacting = false;
        self.not_compacting.send_replace(true);
    }

    /// Waits until no compaction runs.
    pub async fn wait_compaction(&self) {
        let mut done = self.not_compacting.subscribe();
        let _ = done.wait_for(|done| *done).await;
    }

    /// Marks the run over for new prompts (before its `agent_end` goes out).
    pub(crate) fn accept_prompts(&self) {
        let mut state = self.state();
        state.streaming = false;
        state.cancel = None;
    }

    /// Wakes those waiting for the run to end (`abort` answers after `agent_end`).
    pub(crate) fn signal_idle(&self) {
        self.idle.send_replace(true);
    }
}

/// The agent session.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

/// A run claimed by `prompt` and not started yet, so that the prompt's response can be written
/// before the run's first event.
#[must_use = "a claimed run must be started"]
pub struct PendingRun {
    shared: Arc<Shared>,
    messages: Vec<AgentMessage>,
    cancel: CancellationToken,
}

impl PendingRun {
    /// Starts the run.
    pub fn start(self) {
        tokio::spawn(super::agent_loop::run(
            self.shared,
            self.messages,
            self.cancel,
        ));
    }
}

/// `streamingBehavior` of a prompt sent while a run streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamingBehavior {
    /// Queue as steering.
    Steer,
    /// Queue as follow-up.
    FollowUp,
}

/// The message when a prompt arrives during a run without `streamingBehavior`.
pub const ALREADY_PROCESSING: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

impl Session {
    /// Creates a session.
    pub fn new(
        host: Arc<PluginHost>,
        events: Arc<dyn EventSink>,
        models: ModelRegistry,
        config: SessionConfig,
    ) -> Session {
        let store = config.session.unwrap_or_else(|| {
            let (id, path) = new_session_file(config.sessions_dir.as_deref());
            SessionFile::create(path, &id, &config.cwd, None)
        });
        let context = store.context();
        let resumed = !context.messages.is_empty() || context.thinking_level.is_some();
        // A resumed session restores its model (unless one was asked for) and thinking level.
        let mut model = config.model;
        if resumed
            && !config.model_explicit
            && let Some((provider, id)) = &context.model
            && let Some(saved) = models.available().into_iter().find(|m| m.is(provider, id))
        {
            model = Some(saved);
        }
        let thinking = match (
            &model,
            context
                .thinking_level
                .as_deref()
                .and_then(ThinkingLevel::parse),
        ) {
            (Some(model), Some(saved)) if config.thinking.is_none() => saved.clamp(model),
            (Some(model), _) => config
                .thinking
                .unwrap_or(ThinkingLevel::Medium)
                .clamp(model),
            (None, _) => ThinkingLevel::Off,
        };
        let session_id = store.id().to_string();
        let session_name = store.name();
        let mut state = State {
            messages: Vec::new(),
            entry_ids: Vec::new(),
            store,
            model,
            thinking,
            steering: Queue::with_mode(config.steering_mode),
            follow_up: Queue::with_mode(config.follow_up_mode),
            interrupt_mode: InterruptMode::Immediate,
            streaming: false,
            cancel: None,
            session_id,
            session_name,
            auto_compaction: config.auto_compaction,
            compaction: config.compaction,
            tool_output: config.tool_output,
            compacting: false,
            auto_retry: config.auto_retry,
            retry: config.retry,
            scoped_models: config.scoped_models,
            retry_wait: None,
            tools: config.tools,
            host_tools: Vec::new(),
            pending_bash: Vec::new(),
            next_turn: Vec::new(),
            system_prompt_override: None,
            todos: Vec::new(),
            todo_generation: 0,
            triggered_rules: Default::default(),
        };
        if resumed {
            state.load_context(context);
        } else {
            state.record_model();
            state.record_thinking();
        }
        let (idle, _) = watch::channel(true);
        let bridge = Arc::new(HostToolBridge::new(events.clone()));
        let extensions = Arc::new(Extensions::new(host.clone(), events.clone()));
        host.grant_read_dirs(config.resources.skill_dirs());
        let session = Session {
            shared: Arc::new(Shared {
                ui: UiBridge::new(events.clone()),
                resources: Mutex::new(Arc::new(config.resources)),
                todo_clear_delay: config.todo_clear_delay,
                extensions,
                host,
                events,
                bridge,
                models,
                sessions_dir: config.sessions_dir,
                cwd: config.cwd,
                prompt: config.prompt,
                bash: Default::default(),
                state: Mutex::new(state),
                idle,
                not_compacting: watch::channel(true).0,
            }),
        };
        let context = Arc::new(SessionContext::new(&session.shared));
        session.shared.extensions.attach(context);
        session
    }

    /// The session whose shared parts these are.
    pub fn from_shared(shared: Arc<Shared>) -> Session {
        Session { shared }
    }

    /// Starts the extensions (`session_start`); called once the host's frames are read.
    pub async fn start_extensions(&self) {
        self.shared.extensions.start().await;
    }

    /// Adds an extension's message: queued while a run streams (steering by default), kept for
    /// the next prompt (`next-turn`), else appended, and a run started when `trigger_turn`.
    pub fn send_extension_message(
        &self,
        message: AgentMessage,
        deliver_as: Option<super::extensions::context::Delivery>,
        trigger_turn: bool,
    ) {
        use super::extensions::context::Delivery;
        let text = message.text();
        let mut state = self.shared.state();
        if deliver_as == Some(Delivery::NextTurn) {
            state.next_turn.push(message);
            return;
        }
        if state.streaming {
            let queued = Queued { text, message };
            match deliver_as {
                Some(Delivery::FollowUp) => state.follow_up.push(queued),
                _ => state.steering.push(queued),
            }
            drop(state);
            self.shared.emit_queue_update();
            return;
        }
        if !trigger_turn || state.model.is_none() {
            state.append(message.clone());
            drop(state);
            self.shared.emit(&events::message_start(&message));
            self.shared.emit(&events::message_end(&message));
            return;
        }
        drop(state);
        if let Ok(run) = self.claim_run(vec![message]) {
            run.start();
        }
    }

    /// The shared parts.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// True while a run streams.
    pub fn is_streaming(&self) -> bool {
        self.shared.state().streaming
    }

    /// Waits until no run is going on.
    pub async fn wait_idle(&self) {
        let mut idle = self.shared.idle.subscribe();
        let _ = idle.wait_for(|idle| *idle).await;
    }

    /// `prompt`: claims a run (started with [`PendingRun::start`] once the response is out), or
    /// queues the message when one is streaming (`Ok(None)`).
    pub fn prompt(
        &self,
        text: &str,
        images: Vec<Content>,
        behavior: Option<StreamingBehavior>,
    ) -> Result<Option<PendingRun>, String> {
        let message = AgentMessage::user(text, images);
        {
            let mut state = self.shared.state();
            if state.streaming {
                let queued = Queued {
                    text: text.to_string(),
                    message,
                };
                match behavior {
                    None => return Err(ALREADY_PROCESSING.to_string()),
                    Some(StreamingBehavior::FollowUp) => state.follow_up.push(queued),
                    Some(StreamingBehavior::Steer) => state.steering.push(queued),
                }
                drop(state);
                self.shared.emit_queue_update();
                return Ok(None);
            }
        }
        self.claim_run(vec![message]).map(Some)
    }

    /// Claims a run that starts with `messages` (and the extension messages kept for the next
    /// prompt); fails when a run streams or no model is set.
    fn claim_run(&self, mut messages: Vec<AgentMessage>) -> Result<PendingRun, String> {
        {
            let mut state = self.shared.state();
            if state.streaming {
                return Err(ALREADY_PROCESSING.to_string());
            }
            if state.model.is_none() {
                return Err(no_model_message());
            }
            state.streaming = true;
            for record in std::mem::take(&mut state.pending_bash) {
                state.append(record);
            }
            messages.append(&mut state.next_turn);
        }
        let _ = self.shared.idle.send_replace(false);
        let cancel = CancellationToken::new();
        self.shared.state().cancel = Some(cancel.clone());
        Ok(PendingRun {
            shared: self.shared.clone(),
            messages,
            cancel,
        })
    }

    /// `steer` / `follow_up`: queues a message (delivered during the run, or in the next one).
    pub fn enqueue(&self, text: &str, images: Vec<Content>, behavior: StreamingBehavior) {
        let queued = Queued {
            text: text.to_string(),
            message: AgentMessage::user(text, images),
        };
        {
            let mut state = self.shared.state();
            match behavior {
                StreamingBehavior::Steer => state.steering.push(queued),
                StreamingBehavior::FollowUp => state.follow_up.push(queued),
            }
        }
        self.shared.emit_queue_update();
    }

    /// `abort`: cancels the run and waits until it has ended.
    pub async fn abort(&self) {
        let cancel = self.shared.state().cancel.clone();
        if let Some(cancel) = cancel {
            cancel.cancel();
        }
        self.wait_idle().await;
    }

    /// `get_state`'s data.
    pub fn state_json(&self) -> Value {
        let state = self.shared.state();
        let mut data = Map::new();
        data.insert(
            "model".into(),
            state.model.as_ref().map_or(Value::Null, |m| json!(m)),
        );
        data.insert("thinkingLevel".into(), json!(state.thinking.as_str()));
        data.insert("isStreaming".into(), json!(state.streaming));
        data.insert("isCompacting".into(), json!(state.compacting));
        data.insert("steeringMode".into(), json!(state.steering.mode.as_str()));
        data.insert("followUpMode".into(), json!(state.follow_up.mode.as_str()));
        data.insert("interruptMode".into(), json!(state.interrupt_mode.as_str()));
        if let Some(path) = state.store.path() {
            data.insert("sessionFile".into(), json!(path.display().to_string()));
        }
        data.insert("sessionId".into(), json!(state.session_id));
        if let Some(name) = &state.session_name {
            data.insert("sessionName".into(), json!(name));
        }
        data.insert("autoCompactionEnabled".into(), json!(state.auto_compaction));
        data.insert("messageCount".into(), json!(state.messages.len()));
        let pending = state.steering.len() + state.follow_up.len();
        data.insert("pendingMessageCount".into(), json!(pending));
        data.insert("queuedMessageCount".into(), json!(pending));
        data.insert("todoPhases".into(), json!(state.todos));
        data.insert("queueMode".into(), json!(state.follow_up.mode.as_str()));
        Value::Object(data)
    }

    /// `set_todos`: replaces the todo list with `phases` (normalised); `{"todoPhases"}`.
    pub fn set_todos(&self, phases: &Value) -> Result<Value, String> {
        let phases = todos::normalize(phases)?;
        set_todo_list(&self.shared, phases.clone());
        Ok(json!({ "todoPhases": phases }))
    }

    /// `get_messages`'s data.
    pub fn messages_json(&self) -> Value {
        json!({"messages": self.shared.state().messages})
    }

    /// `get_session_stats`'s data.
    pub fn stats_json(&self) -> Value {
        let state = self.shared.state();
        let (mut users, mut assistants, mut calls, mut results) = (0, 0, 0, 0);
        let (mut input, mut output, mut cache_read, mut cache_write, mut cost) =
            (0u64, 0u64, 0u64, 0u64, 0f64);
        let mut last_context: Option<u64> = None;
        for message in &state.messages {
            match message {
                AgentMessage::User(_) => users += 1,
                AgentMessage::Assistant(a) => {
                    assistants += 1;
                    calls += a.tool_calls().count();
                    input += a.usage.input;
                    output += a.usage.output;
                    cache_read += a.usage.cache_read;
                    cache_write += a.usage.cache_write;
                    cost += a.usage.cost.total;
                    if a.usage.total_tokens > 0 {
                        last_context = Some(a.usage.total_tokens);
                    }
                }
                AgentMessage::ToolResult(_) => results += 1,
                _ => {}
            }
        }
        let window = state.model.as_ref().map_or(0, |m| m.context_window);
        let tokens = last_context.unwrap_or(0);
        let percent = if window > 0 {
            tokens as f64 / window as f64 * 100.0
        } else {
            0.0
        };
        let mut stats = json!({
            "sessionId": state.session_id,
            "userMessages": users,
            "assistantMessages": assistants,
            "toolCalls": calls,
            "toolResults": results,
            "totalMessages": state.messages.len(),
            "tokens": {"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write, "total": input + output + cache_read + cache_write},
            "cost": js_value(cost),
            "contextUsage": {"tokens": tokens, "contextWindow": window, "percent": js_value(percent)},
        });
        // pi's key order: sessionFile first, when the session is on disk.
        if let (Some(path), Value::Object(fields)) = (state.store.path(), &stats) {
            let mut ordered = serde_json::Map::new();
            ordered.insert("sessionFile".into(), json!(path.display().to_string()));
            ordered.extend(fields.clone());
            stats = Value::Object(ordered);
        }
        stats
    }

    /// `get_last_assistant_text`'s data: `{"text"}` or `{}`.
    pub fn last_assistant_text(&self) -> Value {
        let state = self.shared.state();
        let text = state.messages.iter().rev().find_map(|m| match m {
            AgentMessage::Assistant(a)
                if !(a.stop_reason == super::message::StopReason::Aborted
                    && a.content.is_empty()) =>
            {
                Some(a.text())
            }
            _ => None,
        });
        match text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
            Some(text) => json!({"text": text}),
            None => json!({}),
        }
    }

    /// `get_fork_messages`'s data: every user message with text, `{"entryId","text"}`.
    pub fn fork_messages(&self) -> Value {
        let state = self.shared.state();
        let messages: Vec<Value> = state
            .store
            .user_messages()
            .into_iter()
            .map(|(id, text)| json!({"entryId": id, "text": text}))
            .collect();
        json!({"messages": messages})
    }

    /// `get_branch_messages`: as `get_fork_messages`, each with pi 0.16's `entryIndex` (its
    /// position in the conversation) when it is in the current context.
    pub fn branch_messages(&self) -> Value {
        let state = self.shared.state();
        let messages: Vec<Value> = state
            .store
            .user_messages()
            .into_iter()
            .map(|(id, text)| {
                let mut item = json!({"entryId": id, "text": text});
                if let Some(index) = state.entry_ids.iter().position(|e| *e == id) {
                    item["entryIndex"] = json!(index);
                }
                item
            })
            .collect();
        json!({"messages": messages})
    }

    /// The entry id of the message at `index` in the conversation (pi 0.16's `entryIndex`).
    pub fn entry_at(&self, index: u64) -> Result<String, String> {
        let state = self.shared.state();
        usize::try_from(index)
            .ok()
            .and_then(|i| state.entry_ids.get(i))
            .cloned()
            .ok_or_else(|| "Invalid entry index for branching".to_string())
    }

    /// `get_available_models`'s data.
    pub fn available_models(&self) -> Value {
        json!({"models": self.shared.models.available()})
    }

    /// Sets the thinking level, clamped; emits `thinking_level_changed` when it changed.
    fn apply_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        let (clamped, changed) = {
            let mut state = self.shared.state();
            let clamped = match &state.model {
                Some(model) => level.clamp(model),
                None => ThinkingLevel::Off,
            };
            let changed = state.thinking != clamped;
            state.thinking = clamped;
            if changed {
                state.record_thinking();
            }
            (clamped, changed)
        };
        if changed {
            self.shared
                .emit(&events::thinking_level_changed(clamped.as_str()));
        }
        clamped
    }

    /// `set_model`: an available model by provider and id.
    pub fn set_model(&self, provider: &str, id: &str) -> Result<Value, String> {
        let model = self
            .shared
            .models
            .available()
            .into_iter()
            .find(|m| m.is(provider, id))
            .ok_or_else(|| format!("Model not found: {provider}/{id}"))?;
        let level = {
            let mut state = self.shared.state();
            state.model = Some(model.clone());
            state.record_model();
            state.thinking
        };
        self.apply_thinking(level);
        Ok(json!(model))
    }

    /// `cycle_model`: the next model (of the scoped ones whose provider has a key, else of the
    /// available ones), or `null` when there is at most one.
    pub fn cycle_model(&self) -> Value {
        let scoped: Vec<(Model, Option<ThinkingLevel>)> = {
            let state = self.shared.state();
            state
                .scoped_models
                .iter()
                .filter(|(m, _)| self.shared.models.has_key(&m.provider))
                .cloned()
                .collect()
        };
        let is_scoped = !scoped.is_empty();
        let candidates: Vec<(Model, Option<ThinkingLevel>)> = if is_scoped {
            scoped
        } else {
            self.shared
                .models
                .available()
                .into_iter()
                .map(|m| (m, None))
                .collect()
        };
        if candidates.len() <= 1 {
            return Value::Null;
        }
        let (current_index, previous_reasoning, level) = {
            let state = self.shared.state();
            let index = state
                .model
                .as_ref()
                .and_then(|m| {
                    candidates
                        .iter()
                        .position(|(c, _)| c.is(&m.provider, &m.id))
                })
                .unwrap_or(0);
            (
                index,
                state.model.as_ref().is_some_and(|m| m.reasoning),
                state.thinking,
            )
        };
        let (next, explicit) = candidates[(current_index + 1) % candidates.len()].clone();
        let wanted = explicit.unwrap_or(if previous_reasoning {
            level
        } else {
            ThinkingLevel::Medium
        });
        {
            let mut state = self.shared.state();
            state.model = Some(next.clone());
            state.record_model();
        }
        let level = self.apply_thinking(wanted);
        json!({"model": next, "thinkingLevel": level.as_str(), "isScoped": is_scoped})
    }

    /// `set_thinking_level`.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        self.apply_thinking(level);
    }

    /// `cycle_thinking_level`: `{"level"}`, or `null` for a non-reasoning model.
    pub fn cycle_thinking_level(&self) -> Value {
        let (available, current) = {
            let state = self.shared.state();
            match &state.model {
                Some(model) if model.reasoning => (ThinkingLevel::available(model), state.thinking),
                _ => return Value::Null,
            }
        };
        let index = available
            .iter()
            .position(|l| *l == current)
            .map_or(0, |i| (i + 1) % available.len());
        let level = self.apply_thinking(available[index]);
        json!({"level": level.as_str()})
    }

    /// `get_available_thinking_levels`: the levels of the current model (`off` only without
    /// reasoning).
    pub fn available_thinking_levels(&self) -> Value {
        let levels: Vec<&str> = match &self.shared.state().model {
            Some(model) if model.reasoning => ThinkingLevel::available(model)
                .into_iter()
                .map(ThinkingLevel::as_str)
                .collect(),
            _ => vec![ThinkingLevel::Off.as_str()],
        };
        json!({ "levels": levels })
    }

    /// `get_entries`: the session's entries (after `since`, an entry id) and the leaf.
    pub fn entries_json(&self, since: Option<&str>) -> Result<Value, String> {
        let state = self.shared.state();
        let entries = state.store.entries_since(since)?;
        Ok(json!({"entries": entries, "leafId": state.store.leaf_id()}))
    }

    /// `get_tree`: the session tree and the leaf.
    pub fn tree_json(&self) -> Value {
        let state = self.shared.state();
        json!({"tree": state.store.tree(), "leafId": state.store.leaf_id()})
    }

    /// `set_steering_mode`.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.shared.state().steering.mode = mode;
    }

    /// `set_follow_up_mode`.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.shared.state().follow_up.mode = mode;
    }

    /// `set_interrupt_mode`.
    pub fn set_interrupt_mode(&self, mode: InterruptMode) {
        self.shared.state().interrupt_mode = mode;
    }

    /// `set_auto_compaction`.
    pub fn set_auto_compaction(&self, enabled: bool) {
        self.shared.state().auto_compaction = enabled;
    }

    /// `set_auto_retry`.
    pub fn set_auto_retry(&self, enabled: bool) {
        self.shared.state().auto_retry = enabled;
    }

    /// `abort_retry`: cancels the wait before a retry, if one is pending.
    pub fn abort_retry(&self) {
        if let Some(wait) = self.shared.state().retry_wait.clone() {
            wait.cancel();
        }
    }

    /// `set_session_name`: refuses an empty name; emits `session_info_changed`.
    pub fn set_session_name(&self, name: &str) -> Result<(), String> {
        let name = name.trim();
        if name.is_empty() {
            return Err("Session name cannot be empty".into());
        }
        {
            let mut state = self.shared.state();
            state.session_name = Some(name.to_string());
            if let Value::Object(fields) = json!({"name": name}) {
                state.store.append("session_info", fields);
            }
        }
        self.shared.emit(&events::session_info_changed(name));
        Ok(())
    }

    /// `new_session`: aborts any run and starts an empty session (with `parentSession` in its
    /// header when given); the thinking level is recorded in it, as pi does.
    pub async fn new_session(&self, parent_session: Option<&str>) -> Value {
        if self.switch_cancelled(SwitchReason::New, None).await {
            return json!({"cancelled": true});
        }
        let previous = self.session_file();
        self.abort().await;
        let (id, path) = new_session_file(self.shared.sessions_dir.as_deref());
        let store = SessionFile::create(path, &id, &self.shared.cwd, parent_session);
        {
            let mut state = self.shared.state();
            state.steering.drain();
            state.follow_up.drain();
            self.replace_store(&mut state, store);
            state.record_thinking();
        }
        self.after_switch("new", previous);
        json!({"cancelled": false})
    }

    /// Asks the extensions whether a switch may happen (`session_before_switch`).
    async fn switch_cancelled(&self, reason: SwitchReason, target: Option<String>) -> bool {
        self.shared
            .extensions
            .hook(
                "session_before_switch",
                HookEvent::SessionBeforeSwitch(BeforeSwitchEvent {
                    reason,
                    target_session_file: target,
                }),
            )
            .await
            .cancelled()
    }

    /// The current session file's path, if it has one.
    fn session_file(&self) -> Option<String> {
        self.shared
            .state()
            .store
            .path()
            .map(|p| p.display().to_string())
    }

    /// Tells the extensions a switch happened (`session_switch`).
    fn after_switch(&self, reason: &str, previous: Option<String>) {
        self.shared.emit(&SessionEvent::SessionSwitch {
            reason: reason.to_string(),
            previous_session_file: previous,
        });
    }

    /// Makes `store` the session: its context becomes the conversation.
    fn replace_store(&self, state: &mut State, store: SessionFile) {
        let context = store.context();
        state.session_id = store.id().to_string();
        state.session_name = store.name();
        state.store = store;
        state.pending_bash.clear();
        state.load_context(context);
    }

    /// `switch_session`: aborts any run and opens another session file; a missing or invalid
    /// file is an error (never created or truncated). Restores the file's model when it is
    /// available and its thinking level.
    pub async fn switch_session(&self, path: &str) -> Result<Value, String> {
        let full = self.shared.cwd.join(path);
        let (store, problems) = SessionFile::open(&full).map_err(|err| err.to_string())?;
        for problem in problems {
            tracing::warn!("{problem}");
        }
        if self
            .switch_cancelled(SwitchReason::Resume, Some(full.display().to_string()))
            .await
        {
            return Ok(json!({"cancelled": true}));
        }
        let previous = self.session_file();
        self.abort().await;
        let context = store.context();
        let level = {
            let mut state = self.shared.state();
            state.steering.drain();
            state.follow_up.drain();
            if let Some((provider, id)) = &context.model
                && let Some(model) = self
                    .shared
                    .models
                    .available()
                    .into_iter()
                    .find(|m| m.is(provider, id))
            {
                state.model = Some(model);
            }
            self.replace_store(&mut state, store);
            context
                .thinking_level
                .as_deref()
                .and_then(ThinkingLevel::parse)
                .unwrap_or(state.thinking)
        };
        self.apply_thinking(level);
        self.after_switch("resume", previous);
        Ok(json!({"cancelled": false}))
    }

    /// `fork` (and `branch`): a new session with the conversation up to (not including) the
    /// user message `entry_id`; returns that message's text so the host can edit and resend it.
    pub async fn fork(&self, entry_id: &str) -> Result<Value, String> {
        let outcome = self
            .shared
            .extensions
            .hook(
                "session_before_fork",
                HookEvent::SessionBeforeFork(entry_id.to_string()),
            )
            .await;
        if outcome.cancelled() {
            return Ok(json!({"text": "", "cancelled": true}));
        }
        let previous = self.session_file();
        let forked = self.fork_now(entry_id)?;
        self.shared.emit(&SessionEvent::SessionFork {
            previous_session_file: previous,
        });
        Ok(forked)
    }

    /// `clone`: a copy of the current branch in a new session file, which becomes the session.
    pub async fn clone_session(&self) -> Result<Value, String> {
        let (leaf, empty) = {
            let state = self.shared.state();
            (
                state.store.leaf_id().map(str::to_string),
                state.messages.is_empty(),
            )
        };
        let Some(leaf) = leaf else {
            return Err("Cannot clone session: no current entry selected".into());
        };
        if empty {
            return Err("Cannot clone session: it has no messages yet".into());
        }
        let outcome = self
            .shared
            .extensions
            .hook(
                "session_before_fork",
                HookEvent::SessionBeforeFork(leaf.clone()),
            )
            .await;
        if outcome.cancelled() {
            return Ok(json!({"cancelled": true}));
        }
        self.abort().await;
        let previous = self.session_file();
        {
            let mut state = self.shared.state();
            let (id, path) = new_session_file(self.shared.sessions_dir.as_deref());
            let cloned = state.store.branch(Some(&leaf), path, &id, &self.shared.cwd);
            self.replace_store(&mut state, cloned);
        }
        self.shared.emit(&SessionEvent::SessionFork {
            previous_session_file: previous,
        });
        Ok(json!({"cancelled": false}))
    }

    fn fork_now(&self, entry_id: &str) -> Result<Value, String> {
        let mut state = self.shared.state();
        let entry = state
            .store
            .entry(entry_id)
            .cloned()
            .ok_or_else(|| "Invalid entry ID for forking".to_string())?;
        let message = entry
            .get("message")
            .and_then(|m| serde_json::from_value::<AgentMessage>(m.clone()).ok());
        let Some(AgentMessage::User(user)) = message else {
            return Err("Invalid entry ID for forking".into());
        };
        let parent = entry
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let (id, path) = new_session_file(self.shared.sessions_dir.as_deref());
        let branched = match &parent {
            Some(parent) => state
                .store
                .branch(Some(parent), path, &id, &self.shared.cwd),
            None => {
                let previous = state.store.path().map(|p| p.display().to_string());
                SessionFile::create(path, &id, &self.shared.cwd, previous.as_deref())
            }
        };
        self.replace_store(&mut state, branched);
        Ok(json!({"text": user.content.text(), "cancelled": false}))
    }

    /// `compact`: aborts any run, then summarizes the older conversation; the compaction result.
    pub async fn compact(&self, instructions: Option<&str>) -> Result<Value, String> {
        self.abort().await;
        compact(&self.shared, instructions, "manual").await
    }

    /// `export_html`: the session as one self-contained HTML file; `{"path"}`.
    pub fn export_html(&self, output: Option<&str>) -> Result<Value, String> {
        let state = self.shared.state();
        let Some(file) = state.store.path() else {
            return Err("Cannot export in-memory session to HTML".into());
        };
        if !state.store.is_written() {
            return Err("Nothing to export yet - start a conversation first".into());
        }
        let default = format!(
            "pith-session-{}.html",
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let target = self.shared.cwd.join(output.unwrap_or(&default));
        let html = super::export::render(
            &state.store,
            state.session_name.as_deref(),
            &state.messages,
            state.model.as_ref(),
        );
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
        }
        std::fs::write(&target, html)
            .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
        Ok(json!({"path": output.map_or(default, str::to_string)}))
    }

    /// `bash`: runs the user's command and records it in the conversation (after the run when
    /// one is streaming), without an event.
    pub async fn bash(&self, command: &str) -> Result<Value, String> {
        let result = self.shared.bash.run(command, &self.shared.cwd).await?;
        let record = AgentMessage::BashExecution(result.message(command));
        self.shared.emit(&SessionEvent::BashEnd {
            message: record.clone(),
        });
        {
            let mut state = self.shared.state();
            if state.streaming {
                state.pending_bash.push(record);
            } else {
                state.append(record);
            }
        }
        Ok(serde_json::to_value(result).unwrap_or(Value::Null))
    }

    /// `abort_bash`: kills the running `bash` command.
    pub fn abort_bash(&self) {
        self.shared.bash.abort();
    }

    /// `set_host_tools`: replaces the host's tool set; `{"toolNames"}`.
    pub fn set_host_tools(&self, tools: Vec<HostToolDefinition>) -> Result<Value, String> {
        HostToolDefinition::validate_all(&tools)?;
        let names: Vec<String> = tools.iter().map(|t| t.name.trim().to_string()).collect();
        self.shared.state().host_tools = tools
            .into_iter()
            .map(|mut t| {
                t.name = t.name.trim().to_string();
                t
            })
            .collect();
        Ok(json!({"toolNames": names}))
    }

    /// The host-tool bridge (for `host_tool_result` / `host_tool_update` frames).
    pub fn host_tools(&self) -> &Arc<HostToolBridge> {
        &self.shared.bridge
    }
}

/// Replaces the todo list; a list with everything done is cleared after the session's delay,
/// with `todo_auto_clear`, unless it changes in the meantime.
pub fn set_todo_list(shared: &Arc<Shared>, phases: Vec<TodoPhase>) {
    let done = todos::all_done(&phases);
    let generation = {
        let mut state = shared.state();
        state.todos = phases;
        state.todo_generation += 1;
        state.todo_generation
    };
    if done {
        let shared = Arc::downgrade(shared);
        let delay = match shared.upgrade() {
            Some(shared) => shared.todo_clear_delay,
            None => return,
        };
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let Some(shared) = shared.upgrade() else {
                return;
            };
            {
                let mut state = shared.state();
                if state.todo_generation != generation {
                    return;
                }
                state.todos.clear();
                state.todo_generation += 1;
            }
            shared.emit(&SessionEvent::TodoAutoClear);
        });
    }
}

/// A fresh session id and, unless sessions stay in memory, the file it goes to in `dir`.
fn new_session_file(dir: Option<&std::path::Path>) -> (String, Option<PathBuf>) {
    let id = uuid::Uuid::now_v7().to_string();
    let path = dir.map(|dir| SessionFile::default_path(dir, &id));
    (id, path)
}

/// The error when no model can be used.
pub fn no_model_message() -> String {
    "No model available. Set an API key for a provider (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY), add a provider to models.json in the agent directory, or pick one with --provider and --model.".to_string()
}

/// Compacts the session (`reason`: manual, threshold or overflow), emitting `compaction_start`
/// and `compaction_end`; returns the result (`summary`, `firstKeptEntryId`, `tokensBefore`,
/// `details`).
pub async fn compact(
    shared: &Arc<Shared>,
    instructions: Option<&str>,
    reason: &str,
) -> Result<Value, String> {
    use super::compaction;
    let (model, messages, ids, policy) = {
        let state = shared.state();
        let Some(model) = state.model.clone() else {
            return Err("No model selected".into());
        };
        if state.messages.is_empty() && state.store.context().messages.is_empty() {
            return Err("Nothing to compact (session too small)".into());
        }
        if state.store.leaf_type() == Some("compaction") {
            return Err("Already compacted".into());
        }
        (
            model,
            state.messages.clone(),
            state.entry_ids.clone(),
            state.compaction,
        )
    };
    shared.begin_compaction();
    shared.emit(&SessionEvent::CompactionStart {
        reason: reason.to_string(),
    });
    let previous = match messages.first() {
        Some(AgentMessage::CompactionSummary(summary)) => Some(summary.summary.clone()),
        _ => None,
    };
    let skip = usize::from(previous.is_some());
    let (body, body_ids) = (&messages[skip..], &ids[skip..]);
    let (cut, first_kept) = if reason == "overflow" {
        // The cut must leave less than before, or the overflow repeats.
        let cut =
            compaction::overflow_cut_point(body, policy.keep_recent_tokens, model.context_window);
        // Keeping nothing: an id not on the branch keeps no entry before the compaction.
        (cut, body_ids.get(cut).cloned().unwrap_or_default())
    } else {
        let cut = compaction::cut_point(body, policy.keep_recent_tokens);
        let first_kept = body_ids.get(cut).or(body_ids.last()).cloned();
        (cut, first_kept.unwrap_or_default())
    };
    let older = &body[..cut];
    let tokens_before = compaction::context_tokens(&messages);
    let fail = |message: String| {
        shared.end_compaction();
        shared.emit(&compaction_end(reason, None, false, Some(message.clone())));
        Err(message)
    };
    // An extension may cancel the compaction or supply the summary.
    let supplied = match before_compact(
        shared,
        instructions,
        older,
        previous.as_deref(),
        &first_kept,
        tokens_before,
    )
    .await
    {
        Err(message) => {
            // A cancellation is an abort, as pi reports it (no error message in the event).
            shared.end_compaction();
            shared.emit(&compaction_end(reason, None, true, None));
            return Err(message);
        }
        Ok(supplied) => supplied,
    };
    if let Some(result) = supplied {
        shared.end_compaction();
        let mut fields = result.as_object().cloned().unwrap_or_default();
        fields.insert("fromHook".into(), json!(true));
        let mut state = shared.state();
        state.store.append("compaction", fields);
        let context = state.store.context();
        state.load_context(context);
        drop(state);
        shared.emit(&compaction_end(reason, Some(result.clone()), false, None));
        return Ok(result);
    }
    let outcome = compaction::summarize(
        &shared.host,
        &model,
        shared.models.api_key(&model.provider),
        older,
        previous.as_deref(),
        instructions,
        policy,
    )
    .await;
    let summary = match outcome {
        Ok(summary) => summary,
        Err(err) => return fail(format!("Summarization failed: {err}")),
    };
    shared.end_compaction();
    let mut state = shared.state();
    let details = compaction::file_details(older);
    let mut summary = summary;
    for (key, tag) in [
        ("readFiles", "read-files"),
        ("modifiedFiles", "modified-files"),
    ] {
        let files: Vec<&str> = details[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !files.is_empty() {
            summary.push_str(&format!("\n\n<{tag}>\n{}\n</{tag}>", files.join("\n")));
        }
    }
    let result = json!({"summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": tokens_before, "details": details});
    let mut fields = result.as_object().cloned().unwrap_or_default();
    fields.insert("fromHook".into(), json!(false));
    state.store.append("compaction", fields);
    let context = state.store.context();
    state.load_context(context);
    drop(state);
    shared.emit(&compaction_end(reason, Some(result.clone()), false, None));
    Ok(result)
}

/// `compaction_end` (a compaction never retries by itself: `willRetry` is the automatic one's).
fn compaction_end(
    reason: &str,
    result: Option<Value>,
    aborted: bool,
    error_message: Option<String>,
) -> SessionEvent {
    SessionEvent::CompactionEnd {
        reason: reason.to_string(),
        result,
        aborted,
        will_retry: false,
        error_message,
    }
}

/// `session_before_compact`: `Err` when an extension cancelled, `Ok(Some(result))` when one
/// supplied the summary.
async fn before_compact(
    shared: &Shared,
    instructions: Option<&str>,
    older: &[AgentMessage],
    previous: Option<&str>,
    first_kept: &str,
    tokens_before: u64,
) -> Result<Option<Value>, String> {
    use super::extensions::hooks::{BeforeCompactEvent, EventResult};
    if !shared.extensions.wants("session_before_compact") {
        return Ok(None);
    }
    let preparation = json!({
        "firstKeptEntryId": first_kept,
        "messagesToSummarize": older,
        "tokensBefore": tokens_before,
        "previousSummary": previous,
        "isSplitTurn": false,
    });
    let branch = json!(shared.state().store.branch_entries());
    let outcome = shared
        .extensions
        .hook(
            "session_before_compact",
            HookEvent::SessionBeforeCompact(BeforeCompactEvent {
                custom_instructions: instructions.map(str::to_string),
                preparation: preparation.to_string(),
                branch_entries: branch.to_string(),
            }),
        )
        .await;
    if outcome.cancelled() {
        return Err("Compaction cancelled".into());
    }
    Ok(outcome
        .results
        .into_iter()
        .find_map(|(_, result)| match result {
            EventResult::Compaction(summary) => {
                let details = summary
                    .details
                    .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                    .unwrap_or(Value::Null);
                Some(json!({
                    "summary": summary.summary,
                    "firstKeptEntryId": summary.first_kept_entry_id,
                    "tokensBefore": summary.tokens_before,
                    "details": details,
                }))
            }
            _ => None,
        }))
}
