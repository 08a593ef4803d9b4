//! What a session's commands and its runs share: the state behind its short-lived lock, the
//! event sink, the plugins, the extensions and the MCP servers. A run (`run/`) holds this
//! narrow view of its session, never the `Session` handle, so the run depends on the session's
//! parts and the session's commands on the run, not each on the other.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::watch;

use crate::agent::conversation::message::Usage;
use crate::agent::conversation::system_prompt::PromptOptions;
use crate::agent::event::{AssistantUpdate, EventSink, SessionEvent};
use crate::agent::events;
use crate::agent::extensions::Extensions;
use crate::agent::extensions::agent_events;
use crate::agent::extensions::hooks::Event as HookEvent;
use crate::agent::extensions::ui::UiBridge;
use crate::agent::models::ModelRegistry;
use crate::agent::session::state::{PiBehaviour, ReloadSources, RunMode, State};
use crate::agent::session::user_bash::BashControl;
use crate::agent::tools::host_tools::HostToolBridge;
use crate::agent::tools::{SessionTool, session_tools};
use crate::plugin_host::PluginHost;
use crate::resources::Resources;

/// What the run task and the commands share.
pub struct Shared {
    /// The plugins.
    pub host: Arc<PluginHost>,
    /// Where events go (the front-end).
    pub events: Arc<dyn EventSink>,
    /// Host-defined tools' bridge.
    pub bridge: Arc<HostToolBridge>,
    /// Models and keys.
    pub(super) models: std::sync::RwLock<Arc<ModelRegistry>>,
    /// Where the settings and the model files are read from (for `reload`).
    pub sources: ReloadSources,
    /// Where new sessions are written; in memory when `None`. A switch to a file makes its
    /// folder the place of the next ones (as pi's).
    pub(super) sessions_dir: Mutex<Option<PathBuf>>,
    /// The working directory.
    pub cwd: PathBuf,
    /// System prompt options.
    pub prompt: PromptOptions,
    /// The running `bash` command.
    pub bash: BashControl,
    /// The session's extensions.
    pub extensions: Arc<Extensions>,
    /// Extension dialogs waiting for the host.
    pub ui: UiBridge,
    /// How long a finished todo list stays before it is cleared.
    pub todo_clear_delay: std::time::Duration,
    /// Which pi's behaviour the session follows where pi changed it.
    pub behaviour: PiBehaviour,
    /// The session's MCP servers (replaced when their configuration changes).
    pub(super) mcp: std::sync::RwLock<Arc<crate::mcp::McpHub>>,
    /// Where they come from.
    pub(super) mcp_setup: Mutex<crate::mcp::McpSetup>,
    /// The watch on their files.
    pub(super) mcp_watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// The session's own sandbox, when it is not the host's.
    pub(super) sandbox: Option<Arc<crate::sandbox::SandboxPolicy>>,
    pub(super) resources: Mutex<Arc<Resources>>,
    pub(super) state: Mutex<State>,
    pub(super) idle: watch::Sender<bool>,
    /// False while a compaction runs.
    pub(super) not_compacting: watch::Sender<bool>,
    /// Providers extensions registered or removed after they loaded, in order (applied
    /// whenever the registry is built again).
    pub(super) provider_changes: Mutex<Vec<crate::agent::models::ProviderChange>>,
    /// What each extension spent on its own model calls (`completion`), by plugin id.
    pub(super) extension_spend: Mutex<std::collections::BTreeMap<String, Usage>>,
    /// The extensions' flags given on the command line.
    pub flags: crate::agent::extensions::flags::CliFlags,
    /// How the process was started (pi's `ctx.mode`).
    pub mode: RunMode,
    /// The nested calls each running `codemode` call made, by its call id, until its result
    /// message takes them (pi's `nestedCalls`).
    pub(crate) nested_calls: Mutex<std::collections::HashMap<String, Value>>,
    /// Which call made each recent nested call (pi's `parentToolCallId`), for extensions.
    pub(crate) nested_parents: Mutex<crate::agent::session::nested_parents::NestedParents>,
    /// The encoded conversation prefix its requests reuse (long sessions).
    pub(crate) history_cache: crate::agent::run::history_cache::HistoryCache,
}

impl Shared {
    /// Locks the state (a poisoned lock is recovered: the state stays usable).
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts `usage` as the extension `plugin`'s spending.
    pub fn spent(&self, plugin: &str, usage: &Usage) {
        self.extension_spend
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(plugin.to_string())
            .or_default()
            .add(usage);
    }

    /// What each extension spent on its own model calls, by plugin id.
    pub fn extension_spend(&self) -> std::collections::BTreeMap<String, Usage> {
        self.extension_spend
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Where new sessions are written now; in memory when `None`.
    pub fn sessions_dir(&self) -> Option<PathBuf> {
        self.sessions_dir
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Sends a session event to the front-end, then to the extensions that observe it.
    pub fn emit(&self, event: &SessionEvent) {
        if !event.observable() {
            return self.events.emit(event);
        }
        self.extensions.observe_event(
            event.kind(),
            || self.events.emit(event),
            || heard_as(event),
            || serde_json::to_value(event).unwrap_or(Value::Null),
        );
    }

    /// Has the extensions that listen to `event` handle it now, after every event queued for
    /// them before (pi awaits its agent lifecycle handlers inside the run); false when none
    /// listens, or before they started. The front-end has not been sent it.
    pub async fn hear(&self, event: &SessionEvent) -> bool {
        let kind = event.kind();
        if !self.extensions.has_started() || !self.extensions.wants(kind) {
            return false;
        }
        self.extensions.observed_so_far().await;
        let heard = heard_as(event);
        let pi_json = self.extensions.json_for_v1(kind, &heard, || {
            serde_json::to_value(event).unwrap_or(Value::Null)
        });
        self.extensions.hook_as(kind, heard, pi_json).await;
        true
    }

    /// Emits `event` once the extensions that listen to it have handled it ([`Shared::hear`]),
    /// so what they show comes before it; without a listener, as [`Shared::emit`].
    pub async fn emit_heard(&self, event: &SessionEvent) {
        if self.hear(event).await {
            self.events.emit(event);
        } else {
            self.emit(event);
        }
    }

    /// Sends a change of the answer being streamed, waiting while the front-end is behind.
    pub async fn emit_update(&self, update: &AssistantUpdate<'_>) {
        self.extensions.observe_event(
            "message_update",
            || {},
            || HookEvent::Agent(agent_events::message_update(update)),
            || serde_json::to_value(update).unwrap_or(Value::Null),
        );
        self.events.message_update(update).await;
    }

    /// Shows the host a notice (`extension_ui_request` `notify`), as pi's built-ins do.
    pub fn notify(&self, message: &str, kind: &'static str) {
        let request = crate::plugin_host::imports::ui::UiRequest::Notify {
            message: message.to_string(),
            kind: Some(kind),
        };
        // A notice is no dialog: it is emitted and resolves on the first poll.
        let _ = futures_util::FutureExt::now_or_never(self.ui.request(request));
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
        self.load_resources(dirs).await;
    }

    /// pi's `resources_discover` (after `session_start`, and on `reload`): the skills and
    /// templates the extensions name join the session's resources.
    pub async fn discover_resources(
        &self,
        reason: crate::agent::extensions::hooks::DiscoverReason,
    ) {
        let found = self.extensions.discover_resources(&self.cwd, reason).await;
        let mut dirs = self.resources().dirs.clone();
        if dirs.discovered_skills == found.skills && dirs.discovered_templates == found.templates {
            return;
        }
        dirs.discovered_skills = found.skills;
        dirs.discovered_templates = found.templates;
        self.load_resources(dirs).await;
    }

    async fn load_resources(&self, dirs: crate::resources::ResourceDirs) {
        let fresh = Resources::load(dirs, &self.host).await;
        self.host.grant_read_dirs(fresh.skill_dirs());
        *self
            .resources
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(fresh);
    }

    /// The tools of the session now.
    pub fn tools(&self) -> Vec<SessionTool> {
        self.tools_of(&self.host.tools())
    }

    /// The tools of the session with the plugin tools of `plugin_tools` (the set a run was
    /// started with: a hot reload applies from the next run).
    pub fn tools_of(&self, plugin_tools: &crate::plugin_host::PluginTools) -> Vec<SessionTool> {
        let selected = self.state().tools.clone();
        self.offer_codemode(self.declared_tools(plugin_tools), &selected)
    }

    /// The tools the selection declares to the model, before `codemode` presents them (what
    /// scripts may call among them).
    pub fn declared_tools(
        &self,
        plugin_tools: &crate::plugin_host::PluginTools,
    ) -> Vec<SessionTool> {
        let state = self.state();
        session_tools(
            plugin_tools,
            &state.tools,
            self.extensions.tools(),
            self.mcp().active_tools(),
            &state.host_tools,
        )
    }

    /// `tools` with `codemode` when it is on (`--tools +codemode`, `defaultTools`, or an MCP
    /// server with `codemode` exposure connected) and no extension replaced it: its description
    /// lists what scripts may call, and the other tools are presented by `codemode.mode`.
    pub fn offer_codemode(
        &self,
        tools: Vec<SessionTool>,
        selected: &crate::agent::tools::ToolSelection,
    ) -> Vec<SessionTool> {
        use crate::agent::tools::CODEMODE;
        use crate::agent::tools::codemode::catalog;
        let settings = catalog::CodemodeSettings::from_settings(&self.host.settings());
        let mcp = self.mcp();
        // Named, not matched by a pattern: pi's `--tools` globs do not reach its built-in
        // extensions' tools.
        let named = |list: &[String]| list.iter().any(|n| n == CODEMODE);
        let chosen = match &selected.only {
            Some(names) => named(names),
            None => named(&selected.add) || selected.defaults.as_deref().is_some_and(named),
        } && !named(&selected.remove)
            && !selected
                .exclude
                .iter()
                .any(|p| crate::agent::models::glob(p, CODEMODE));
        let wanted = chosen
            || (settings.auto_enable
                && !selected.remove.iter().any(|n| n == CODEMODE)
                && !selected
                    .exclude
                    .iter()
                    .any(|p| crate::agent::models::glob(p, CODEMODE))
                && mcp.codemode_server_connected());
        if !wanted
            || tools.iter().any(|t| t.name() == CODEMODE)
            || self.host.script_engine().is_none()
        {
            return tools;
        }
        catalog::offer(tools, mcp.tools(), &settings)
    }

    /// Emits `queue_update` with the queues' texts (and `clientMessageId`s).
    pub fn emit_queue_update(&self) {
        let event = {
            let state = self.state();
            events::queue_update(&state.steering, &state.follow_up)
        };
        self.emit(&event);
    }

    /// Marks a compaction under way (prompts wait for it).
    pub(crate) fn begin_compaction(&self) {
        let mut state = self.state();
        state.compacting += 1;
        self.not_compacting.send_replace(false);
    }

    /// Marks a compaction over (one `end` per `begin`: a run holds prompts back from before
    /// its threshold compaction until its `agent_settled`).
    pub(crate) fn end_compaction(&self) {
        let mut state = self.state();
        state.compacting = state.compacting.saturating_sub(1);
        if state.compacting == 0 {
            self.not_compacting.send_replace(true);
        }
    }

    /// A run's threshold compaction is over; its hold on prompts lasts until
    /// [`Shared::end_compaction`] after its `agent_settled`.
    pub(crate) fn compaction_settling(&self) {
        self.state().settling += 1;
    }

    /// A run that compacted past its threshold has settled: its hold on prompts ends.
    pub(crate) fn end_settled_compaction(&self) {
        {
            let mut state = self.state();
            state.settling = state.settling.saturating_sub(1);
        }
        self.end_compaction();
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

/// The error when no model can be used.
pub fn no_model_message() -> String {
    "No model available. Set an API key for a provider (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY), add a provider to models.json in the agent directory, or pick one with --provider and --model.".to_string()
}

/// A session event as extensions of version 0.2 hear it: an agent event typed, any other as
/// pi's JSON (`observe`).
fn heard_as(event: &SessionEvent) -> HookEvent {
    agent_events::agent_event(event).map_or_else(
        || {
            let json = serde_json::to_value(event).unwrap_or(Value::Null);
            HookEvent::Observe((event.kind().to_string(), json.to_string()))
        },
        HookEvent::Agent,
    )
}
