//! The agent session: the conversation state and every command that reads or changes it.
//!
//! The state sits behind a short-lived lock; a run is a separate task (see [`crate::agent::run::agent_loop`])
//! that takes the lock only to read or append, so `get_state`, `steer` or `abort` never wait
//! behind a streaming answer or a slow tool.
//!
//! Over 600 lines for one reason: `Session` is defined here with its constructor, the prompt
//! and queue entry points, and `SessionContext` (what its extensions reach), which starts runs
//! through the session's private claim; in a file of its own it would import this one while
//! this one builds it, an import circle. Every other concern of the session lives in the
//! sibling modules below (what runs share is in `shared.rs`).

use crate::agent::extensions::hooks::DiscoverReason;
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::event::{EventSink, SessionEvent};
use super::events;
use super::extensions::Extensions;
use super::extensions::hooks::{BeforeSwitchEvent, Event as HookEvent, SwitchReason};
use super::extensions::ui::UiBridge;
use super::model::{Model, ThinkingLevel};
use super::models::ModelRegistry;
use crate::agent::conversation::message::AgentMessage;
use crate::agent::extensions::context::{Delivery, custom_message};
use crate::agent::session::file::SessionFile;
use crate::agent::session::queue::{Queue, QueueMode, Queued};
use crate::agent::tools::host_tools::{HostToolBridge, HostToolDefinition};
use crate::agent::tools::todos::{self, TodoPhase};
use crate::content::Content;
use crate::plugin_host::PluginHost;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::convert::details_value;
use crate::plugin_host::imports::ui::{BoxFuture, ExtensionContext, UiAnswer, UiRequest};

pub mod answers;
mod catalog;
mod compaction_run;
mod controls;
pub mod error;
mod extension_access;
pub mod file;
pub mod footprint;
pub mod front_end;
pub mod index;
pub mod input;
mod mcp_watch;
mod model_registry;
pub(crate) mod nested_parents;
pub mod path_completion;
pub mod plugins;
pub mod policies;
mod queries;
pub mod queue;
mod records;
pub mod shared;
pub mod state;
pub mod submit;
pub mod switching;
mod todo_list;
mod tool_set;
mod tree_moves;
pub mod user_bash;
mod workspace;

use crate::agent::session::file::new_session_file;
pub use error::SessionError;
pub use shared::{Shared, no_model_message};
pub use state::{InterruptMode, PiBehaviour, ReloadSources, RunMode, SessionConfig, State};

/// The agent session.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

/// A run claimed by `prompt` and not started yet, so that the prompt's response can be written
/// before the run's first event.
#[must_use = "a claimed run must be started"]
pub struct PendingRun {
    /// What the run starts with; taken when it starts.
    start: Option<(Arc<Shared>, Vec<AgentMessage>, CancellationToken)>,
}

impl PendingRun {
    /// Starts the run.
    pub fn start(self) {
        drop(self.spawn());
    }

    /// Starts the run; the handle resolves once it has ended and every event of it was emitted
    /// (`agent_settled` included), so a front-end that answers a prompt when its run ends (ACP's
    /// `session/prompt`) never races the next run's events.
    pub fn spawn(mut self) -> tokio::task::JoinHandle<()> {
        match self.start.take() {
            Some((shared, messages, cancel)) => {
                tokio::spawn(crate::agent::run::agent_loop::run(shared, messages, cancel))
            }
            // (Never: only `spawn`, which consumes the run, takes it before `drop`.)
            None => tokio::spawn(async {}),
        }
    }
}

impl Drop for PendingRun {
    /// A run claimed and never started gives the session back: it takes prompts again, and the
    /// messages held for the next turn (after the prompt, which is dropped) wait there again.
    fn drop(&mut self) {
        let Some((shared, mut messages, _)) = self.start.take() else {
            return;
        };
        {
            let mut state = shared.state();
            if !messages.is_empty() {
                messages.remove(0);
            }
            messages.append(&mut state.next_turn);
            state.next_turn = messages;
        }
        shared.accept_prompts();
        shared.signal_idle();
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

/// Why a prompt was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// A run streams and the prompt said neither steer nor follow up.
    #[error("{}", ALREADY_PROCESSING)]
    Busy,
    /// No model is set (the text says how to pick one).
    #[error("{0}")]
    NoModel(String),
}

impl Session {
    /// Creates a session.
    pub fn new(
        host: Arc<PluginHost>,
        events: Arc<dyn EventSink>,
        models: ModelRegistry,
        config: SessionConfig,
    ) -> Session {
        let store = config.session.unwrap_or_else(|| {
            let (id, path) =
                new_session_file(config.sessions_dir.as_deref(), config.session_id.as_deref());
            SessionFile::create(path, &id, &config.cwd, None)
        });
        let context = store.held_context();
        let resumed = !context.messages.is_empty() || context.thinking_level.is_some();
        // A resumed session restores its model (unless one was asked for) and thinking level.
        let mut model = config.model;
        if resumed
            && !config.model_explicit
            && let Some(saved) = switching::restored_model(&context, &store, &models)
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
            messages_generation: 0,
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
            compaction_overrides: config.compaction_overrides,
            tool_output: config.tool_output,
            max_answer_bytes: config.max_answer_bytes,
            tool_timeouts: config.tool_timeouts,
            request_settings: config.request_settings,
            thinking_defaults: config.thinking_defaults,
            compacting: 0,
            settling: 0,
            behaviour: config.behaviour,
            auto_retry: config.auto_retry,
            retry: config.retry,
            scoped_models: config.scoped_models,
            retry_wait: None,
            tools: config.tools,
            host_tools: Vec::new(),
            pending_bash: Vec::new(),
            retry_failed: None,
            routed_model: None,
            next_turn: Vec::new(),
            prompt_client_id: None,
            system_prompt_override: None,
            todos: Vec::new(),
            todo_generation: 0,
            triggered_rules: Default::default(),
        };
        if resumed {
            state.load_context(context);
        } else {
            if let Some(name) = &config.name {
                state.session_name = Some(name.clone());
                if let Value::Object(fields) = json!({"name": name}) {
                    state.store.append("session_info", fields);
                }
            }
            state.record_model();
            state.record_thinking();
        }
        let (idle, _) = watch::channel(true);
        let bridge = Arc::new(HostToolBridge::new(events.clone()));
        let extensions = Arc::new(Extensions::new(host.clone(), events.clone()));
        host.grant_read_dirs(config.resources.skill_dirs());
        let mcp = config.mcp.start(
            &config.cwd,
            config.sandbox.clone().unwrap_or_else(|| host.sandbox()),
        );
        // Tools `tool_search` loaded on the resumed branch stay loaded.
        mcp.mark_loaded(crate::agent::conversation::system_record::recorded_names(
            &state.messages(),
        ));
        let session = Session {
            shared: Arc::new(Shared {
                ui: UiBridge::new(events.clone()),
                resources: Mutex::new(Arc::new(config.resources)),
                todo_clear_delay: config.todo_clear_delay,
                behaviour: config.behaviour,
                mcp: std::sync::RwLock::new(mcp),
                mcp_setup: Mutex::new(config.mcp),
                mcp_watcher: Mutex::new(None),
                sandbox: config.sandbox.clone(),
                extensions,
                host,
                events,
                bridge,
                models: std::sync::RwLock::new(Arc::new(models)),
                sources: config.sources,
                sessions_dir: Mutex::new(config.sessions_dir),
                cwd: config.cwd,
                prompt: config.prompt,
                bash: Default::default(),
                state: Mutex::new(state),
                idle,
                not_compacting: watch::channel(true).0,
                extension_spend: Default::default(),
                provider_changes: Default::default(),
                flags: config.flags,
                mode: config.mode,
                nested_calls: Default::default(),
                nested_parents: Default::default(),
                history_cache: Default::default(),
            }),
        };
        let context = Arc::new(SessionContext::new(&session.shared));
        session.shared.extensions.attach(context);
        session.report_mcp();
        let watcher = mcp_watch::watch(&session.shared);
        *session
            .shared
            .mcp_watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = watcher;
        session
    }

    /// The session whose shared parts these are.
    pub(in crate::agent) fn from_shared(shared: Arc<Shared>) -> Session {
        Session { shared }
    }

    /// Starts the extensions (`session_start`); called once the host's frames are read.
    pub async fn start_extensions(&self) {
        self.shared.extensions.start().await;
        self.shared
            .discover_resources(DiscoverReason::Startup)
            .await;
        self.shared.extensions.mark_started();
    }

    /// Starts the extensions of a session that replaced the one at `previous` (another
    /// folder's, `switch_session`): their `session_start` has pi's `resume` reason.
    pub async fn start_extensions_resumed(&self, previous: Option<String>) {
        self.shared
            .extensions
            .start_as(
                crate::agent::extensions::hooks::SessionStartReason::Resume,
                previous,
            )
            .await;
        self.shared
            .discover_resources(DiscoverReason::Startup)
            .await;
        self.shared.extensions.mark_started();
    }

    /// The extensions start afresh for a session that replaced this one's (`reason`, the file
    /// left), and add their resources again.
    pub(super) async fn restart_extensions(
        &self,
        reason: crate::agent::extensions::hooks::SessionStartReason,
        previous: Option<String>,
    ) {
        self.shared.extensions.restart(reason, previous).await;
        self.shared
            .discover_resources(DiscoverReason::Startup)
            .await;
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
            let queued = Queued {
                text,
                message,
                client_id: None,
            };
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

    /// The shared parts (the engine's own: a front-end goes through the session's methods).
    pub(in crate::agent) fn shared(&self) -> &Arc<Shared> {
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

    /// A prompt's message: its images fitted for models (pi's `images.autoResize`), with pi's
    /// notes for what changed after its text.
    fn user_message(&self, text: &str, mut images: Vec<Content>) -> AgentMessage {
        if self.shared.state().request_settings().auto_resize {
            let notes = crate::images::fit_prompt_images(&mut images);
            if !notes.is_empty() {
                return AgentMessage::user(&format!("{text}\n\n{}", notes.join("\n")), images);
            }
        }
        AgentMessage::user(text, images)
    }

    /// `prompt`: claims a run (started with [`PendingRun::start`] once the response is out), or
    /// queues the message when one is streaming (`Ok(None)`). `client_id` (the host's
    /// `clientMessageId`) is echoed in the user message's `message_start`.
    pub(crate) fn prompt(
        &self,
        text: &str,
        images: Vec<Content>,
        behavior: Option<StreamingBehavior>,
        client_id: Option<String>,
    ) -> Result<Option<PendingRun>, PromptError> {
        let message = self.user_message(text, images);
        {
            let mut state = self.shared.state();
            if state.streaming {
                let queued = Queued {
                    text: text.to_string(),
                    message,
                    client_id,
                };
                match behavior {
                    None => return Err(PromptError::Busy),
                    Some(StreamingBehavior::FollowUp) => state.follow_up.push(queued),
                    Some(StreamingBehavior::Steer) => state.steering.push(queued),
                }
                drop(state);
                self.shared.emit_queue_update();
                return Ok(None);
            }
        }
        let run = self.claim_run(vec![message])?;
        self.shared.state().prompt_client_id = client_id;
        Ok(Some(run))
    }

    /// Claims a run that starts with `messages` (and the extension messages kept for the next
    /// prompt); fails when a run streams or no model is set.
    fn claim_run(&self, mut messages: Vec<AgentMessage>) -> Result<PendingRun, PromptError> {
        {
            let mut state = self.shared.state();
            if state.streaming {
                return Err(PromptError::Busy);
            }
            if state.model.is_none() {
                return Err(PromptError::NoModel(no_model_message()));
            }
            state.streaming = true;
            state.prompt_client_id = None;
            for record in std::mem::take(&mut state.pending_bash) {
                state.append(record);
            }
            messages.append(&mut state.next_turn);
        }
        let _ = self.shared.idle.send_replace(false);
        let cancel = CancellationToken::new();
        self.shared.state().cancel = Some(cancel.clone());
        Ok(PendingRun {
            start: Some((self.shared.clone(), messages, cancel)),
        })
    }

    /// `steer` / `follow_up`: queues a message (delivered during the run, or in the next one),
    /// with the host's `clientMessageId` when it gave one.
    pub fn enqueue(
        &self,
        text: &str,
        images: Vec<Content>,
        behavior: StreamingBehavior,
        client_id: Option<String>,
    ) {
        let queued = Queued {
            text: text.to_string(),
            message: self.user_message(text, images),
            client_id,
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

    /// `remove_queued {clientMessageId}`: takes that message out of its queue (announced with
    /// `queue_update`); an error when no queued message has the id.
    pub fn remove_queued(&self, client_id: &str) -> Result<(), SessionError> {
        let removed = {
            let mut state = self.shared.state();
            state.steering.remove(client_id) || state.follow_up.remove(client_id)
        };
        if !removed {
            return Err(SessionError::NotQueued(client_id.to_string()));
        }
        self.shared.emit_queue_update();
        Ok(())
    }

    /// `abort`: cancels the run and waits until it has ended.
    pub async fn abort(&self) {
        let cancel = self.shared.state().cancel.clone();
        if let Some(cancel) = cancel {
            cancel.cancel();
        }
        self.wait_idle().await;
    }

    /// `set_host_tools`: replaces the host's tool set; `{"toolNames"}`.
    pub fn set_host_tools(
        &self,
        tools: Vec<HostToolDefinition>,
    ) -> Result<answers::HostToolNames, SessionError> {
        HostToolDefinition::validate_all(&tools)?;
        let names: Vec<String> = tools.iter().map(|t| t.name.trim().to_string()).collect();
        self.shared.state().host_tools = tools
            .into_iter()
            .map(|mut t| {
                t.name = t.name.trim().to_string();
                t
            })
            .collect();
        Ok(answers::HostToolNames { tool_names: names })
    }

    /// The host-tool bridge (for `host_tool_result` / `host_tool_update` frames).
    pub fn host_tools(&self) -> &Arc<HostToolBridge> {
        &self.shared.bridge
    }
}

/// The session as its extensions see it; holds the session weakly (the session owns its
/// extensions).
pub struct SessionContext {
    shared: Weak<Shared>,
}

impl SessionContext {
    /// The context of the session `shared`.
    pub fn new(shared: &Arc<Shared>) -> SessionContext {
        SessionContext {
            shared: Arc::downgrade(shared),
        }
    }

    fn session(&self) -> Option<Session> {
        self.shared.upgrade().map(Session::from_shared)
    }
}

impl ExtensionContext for SessionContext {
    fn access(&self) -> Option<&dyn crate::plugin_host::session_context::SessionAccess> {
        Some(self)
    }

    fn sandbox(&self) -> Option<Arc<crate::sandbox::SandboxPolicy>> {
        self.shared
            .upgrade()
            .and_then(|shared| shared.call_sandbox())
    }

    fn ui(&self, request: UiRequest) -> BoxFuture<UiAnswer> {
        let shared = self.shared.upgrade();
        Box::pin(async move {
            match shared {
                Some(shared) => shared.ui.request(request).await,
                None => UiAnswer::Cancelled,
            }
        })
    }

    fn send_message(
        &self,
        message: wit::CustomMessage,
        deliver_as: Option<Delivery>,
        trigger_turn: bool,
    ) {
        if let Some(session) = self.session() {
            session.send_extension_message(custom_message(message), deliver_as, trigger_turn);
        }
    }

    fn send_user_message(&self, content: Vec<wit::Content>, deliver_as: Option<Delivery>) {
        if let Some(session) = self.session() {
            let content: Vec<Content> = content.into_iter().map(Content::from).collect();
            let text = content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let images = content
                .into_iter()
                .filter(|c| matches!(c, Content::Image { .. }))
                .collect();
            session.send_extension_message(
                AgentMessage::user(&text, images),
                deliver_as.or(Some(Delivery::Steer)),
                true,
            );
        }
    }

    fn append_entry(&self, custom_type: String, data: Option<String>) {
        if let Some(shared) = self.shared.upgrade() {
            let mut fields = serde_json::Map::new();
            fields.insert("customType".into(), json!(custom_type));
            if let Some(data) = details_value(data) {
                fields.insert("data".into(), data);
            }
            let entry = shared.state().append_entry("custom", fields);
            shared.emit(&SessionEvent::EntryAppended { entry });
        }
    }

    fn set_session_name(&self, name: String) {
        if let Some(session) = self.session() {
            let _ = session.set_session_name(&name);
        }
    }

    fn session_name(&self) -> Option<String> {
        self.shared
            .upgrade()
            .and_then(|shared| shared.state().session_name().map(str::to_string))
    }

    fn state(&self) -> String {
        self.session().map_or_else(
            || "{}".into(),
            |s| serde_json::to_string(&s.state()).unwrap_or_default(),
        )
    }

    fn messages(&self) -> String {
        self.session().map_or_else(
            || "[]".into(),
            |s| s.with_messages(|messages| serde_json::to_string(messages).unwrap_or_default()),
        )
    }

    fn abort(&self) {
        if let Some(shared) = self.shared.upgrade() {
            let cancel = shared.state().run_cancel();
            if let Some(cancel) = cancel {
                cancel.cancel();
            }
        }
    }

    fn is_idle(&self) -> bool {
        self.shared
            .upgrade()
            .is_none_or(|shared| !shared.state().is_streaming())
    }
}
