//! The session's extensions: one live instance per extension plugin, the hooks the session
//! calls at pi's points (each extension in load order, awaited), the events they observe
//! (delivered in order by one background task, so observers never hold up a run), their
//! commands, and `extension_error` for every failure, after which the session goes on.

pub mod agent_events;
pub mod context;
pub mod discovery;
pub mod flags;
pub mod provider_hooks;
mod registry;
pub mod session_hooks;
pub mod typed;
pub mod ui;
mod virtual_models;
mod wake_ups;

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::agent::event::{EventSink, SessionEvent};
use crate::agent::session::path_completion::{Completion, MAX_COMPLETIONS};
use crate::content::ToolOutput;
use crate::plugin_host::PluginHost;
use crate::plugin_host::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension::{
    Event, EventResult, SessionShutdownEvent, SessionStartEvent, SessionStartReason, ShutdownReason,
};
use crate::plugin_host::extension::ExtensionInstance;
use crate::plugin_host::imports::ui::ExtensionContext;
use crate::plugin_host::manifest::Kind;
use crate::plugin_host::plugin::Plugin;
use crate::plugin_host::resources::ExtensionMeta;
use crate::plugin_host::tool::ToolSpec;

/// The WIT event and result types (version 0.2; an extension built for 0.1 gets them adapted),
/// for the session's hook points.
pub use crate::plugin_host::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension as hooks;

/// One loaded extension.
pub struct Slot {
    /// Its plugin.
    pub plugin: Arc<Plugin>,
    /// What it registered.
    pub meta: ExtensionMeta,
    instance: tokio::sync::Mutex<ExtensionInstance>,
    /// The tools it registered since it started (`register-tool`).
    dynamic_tools: Mutex<Vec<ToolSpec>>,
    /// The bus channels it hears (`events-bus`).
    channels: Mutex<std::collections::BTreeSet<String>>,
}

impl Slot {
    fn new(plugin: Arc<Plugin>, meta: ExtensionMeta, context: Arc<dyn ExtensionContext>) -> Slot {
        Slot {
            instance: tokio::sync::Mutex::new(ExtensionInstance::new(plugin.clone(), context)),
            plugin,
            meta,
            dynamic_tools: Mutex::new(Vec::new()),
            channels: Mutex::new(Default::default()),
        }
    }

    /// True when it listens to events of `kind` (a bus channel's are `bus:<channel>`).
    pub fn wants(&self, kind: &str) -> bool {
        if let Some(plugin) = kind.strip_prefix(wake_ups::WAKE) {
            return plugin == self.plugin.manifest.id;
        }
        match kind.strip_prefix(registry::BUS) {
            Some(channel) => lock(&self.channels).contains(channel),
            None => self.meta.wants(kind),
        }
    }
}

/// Locks a mutex of the extensions' (a poisoned one is recovered).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the extensions answered at a hook point.
#[derive(Debug, Default)]
pub struct HookOutcome {
    /// The answers other than `continue`, in load order, with the answering extension's path.
    pub results: Vec<(String, EventResult)>,
    /// The first failure (already reported as `extension_error`).
    pub failure: Option<String>,
}

impl HookOutcome {
    /// True when an extension cancelled.
    pub fn cancelled(&self) -> bool {
        self.results
            .iter()
            .any(|(_, r)| matches!(r, EventResult::Cancel))
    }
}

/// An observed event in the queue: its kind, the event, and pi's JSON of it for extensions of
/// version 0.1 ([`Extensions::json_for_v1`]).
type Queued = (String, Event, Option<Arc<str>>);

/// How long a completion waits for an extension busy with another call.
const COMPLETION_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The extensions of a session.
pub struct Extensions {
    host: Arc<PluginHost>,
    out: Arc<dyn EventSink>,
    context: OnceLock<Arc<dyn ExtensionContext>>,
    slots: Mutex<Arc<Vec<Arc<Slot>>>>,
    observed: mpsc::UnboundedSender<Queued>,
    observer: Mutex<Option<mpsc::UnboundedReceiver<Queued>>>,
    /// Observed events queued so far, and delivered so far: a command waits until the
    /// extensions have seen every event emitted before it.
    observed_sent: std::sync::atomic::AtomicU64,
    observed_done: tokio::sync::watch::Sender<u64>,
    /// The calls whose tool asked the run to end after their batch (pi's `terminate`).
    terminating: Mutex<std::collections::HashSet<String>>,
    /// True once every extension has handled the first `session_start`.
    started: tokio::sync::watch::Sender<bool>,
    /// The timers and watches the extensions set.
    wake_ups: wake_ups::WakeUps,
}

impl Extensions {
    /// The extensions of `host`'s plugin set, reporting errors to `out`; inert until
    /// [`Extensions::attach`].
    pub fn new(host: Arc<PluginHost>, out: Arc<dyn EventSink>) -> Extensions {
        let (observed, observer) = mpsc::unbounded_channel();
        Extensions {
            host,
            out,
            context: OnceLock::new(),
            slots: Mutex::new(Arc::new(Vec::new())),
            observed,
            observer: Mutex::new(Some(observer)),
            observed_sent: std::sync::atomic::AtomicU64::new(0),
            observed_done: tokio::sync::watch::Sender::new(0),
            terminating: Mutex::new(Default::default()),
            started: tokio::sync::watch::Sender::new(false),
            wake_ups: Default::default(),
        }
    }

    /// Connects the extensions to their session and creates their slots.
    pub fn attach(&self, context: Arc<dyn ExtensionContext>) {
        let _ = self.context.set(context);
        self.refresh();
    }

    /// The current slots.
    pub fn slots(&self) -> Arc<Vec<Arc<Slot>>> {
        self.slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Brings the slots in line with the host's plugin set (after a reload); returns the slots
    /// that are new, which have not seen `session_start` yet. Unchanged plugins keep their
    /// instance and its state.
    pub fn refresh(&self) -> Vec<Arc<Slot>> {
        let Some(context) = self.context.get() else {
            return Vec::new();
        };
        let old = self.slots();
        let mut fresh = Vec::new();
        let slots: Vec<Arc<Slot>> = self
            .host
            .plugins()
            .iter()
            .filter(|p| p.manifest.has_kind(Kind::Extension))
            .filter_map(|plugin| {
                if let Some(slot) = old.iter().find(|s| Arc::ptr_eq(&s.plugin, plugin)) {
                    return Some(slot.clone());
                }
                let meta = plugin.meta.extension.clone()?;
                let slot = Arc::new(Slot::new(plugin.clone(), meta, context.clone()));
                fresh.push(slot.clone());
                Some(slot)
            })
            .collect();
        *self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(slots);
        fresh
    }

    /// Starts delivering observed events and sends `session_start` (`startup`) to every
    /// extension. Runs after the RPC reader is up, so a dialog opened in `session_start` can be
    /// answered.
    pub async fn start(self: &Arc<Self>) {
        self.start_as(SessionStartReason::Startup, None).await;
    }

    /// [`Extensions::start`] for a session that replaced another (`reason`, the file left).
    pub async fn start_as(
        self: &Arc<Self>,
        reason: SessionStartReason,
        previous_session_file: Option<String>,
    ) {
        let receiver = self
            .observer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(mut receiver) = receiver {
            // Held weakly: the task ends with the session (its sender goes with it).
            let extensions = Arc::downgrade(self);
            tokio::spawn(async move {
                while let Some((kind, event, pi_json)) = receiver.recv().await {
                    let Some(extensions) = extensions.upgrade() else {
                        break;
                    };
                    extensions.hook_as(&kind, event, pi_json).await;
                    extensions.observed_done.send_modify(|done| *done += 1);
                }
            });
        }
        self.session_start(&self.slots(), reason, previous_session_file)
            .await;
        // What they sent on the events bus while starting is heard first, too.
        self.observed_so_far().await;
    }

    /// Marks the start done (after `session_start` and `resources_discover`): commands waiting
    /// for it go on.
    pub fn mark_started(&self) {
        self.started.send_replace(true);
    }

    /// True once every extension has handled the first `session_start`.
    pub fn has_started(&self) -> bool {
        *self.started.borrow()
    }

    /// Resolves once every extension has handled the first `session_start`.
    pub async fn started(&self) {
        let mut started = self.started.subscribe();
        let _ = started.wait_for(|started| *started).await;
    }

    /// Sends `session_start` (with pi's `reason` and the session file left) to `slots`.
    pub async fn session_start(
        &self,
        slots: &[Arc<Slot>],
        reason: SessionStartReason,
        previous_session_file: Option<String>,
    ) {
        let event = Event::SessionStart(SessionStartEvent {
            reason,
            previous_session_file,
        });
        for slot in slots {
            let _ = self.call_slot(slot, "session_start", event.clone()).await;
        }
    }

    /// pi's `session_shutdown`: the session is being left (`target`: the session file replacing
    /// it). Awaited, as pi awaits it, so an extension can finish its work (commit, save) first.
    pub async fn session_shutdown(&self, reason: ShutdownReason, target: Option<String>) {
        let event = Event::SessionShutdown(SessionShutdownEvent {
            reason,
            target_session_file: target,
        });
        self.hook("session_shutdown", event).await;
    }

    /// A new session replaced the old one in place (`new_session`, `switch_session`, `fork`,
    /// `clone`): every extension starts afresh, as pi builds its extensions again for the new
    /// session, and gets `session_start` with `reason` and the file left.
    pub async fn restart(&self, reason: SessionStartReason, previous: Option<String>) {
        self.restart_slots(&self.slots(), reason, previous).await;
    }

    /// [`Extensions::restart`] for `slots` only.
    pub async fn restart_slots(
        &self,
        slots: &[Arc<Slot>],
        reason: SessionStartReason,
        previous: Option<String>,
    ) {
        let Some(context) = self.context.get() else {
            return;
        };
        for slot in slots.iter() {
            *slot.instance.lock().await =
                ExtensionInstance::new(slot.plugin.clone(), context.clone());
            lock(&slot.dynamic_tools).clear();
            lock(&slot.channels).clear();
            self.wake_ups.clear(&slot.plugin.manifest.id);
        }
        self.session_start(slots, reason, previous).await;
        // What they sent on the events bus while starting is heard before the move is answered.
        self.observed_so_far().await;
    }

    /// True when some extension listens to events of `kind`.
    pub fn wants(&self, kind: &str) -> bool {
        self.slots().iter().any(|s| s.wants(kind))
    }

    /// Queues an event (its pi JSON, made only when someone listens) for the extensions that
    /// observe it; they see it after the front-end does.
    pub fn observe(&self, kind: &str, json: impl FnOnce() -> Value) {
        self.observe_after(kind, || {}, json);
    }

    /// Queues a typed event (made only when someone listens) for the extensions that listen to
    /// `kind`, in order with the observed ones.
    pub fn observe_typed(&self, kind: &str, event: impl FnOnce() -> Event) {
        self.queue(kind, || {}, event, || Value::Null);
    }

    /// Runs `write` (the front-end's copy of the event), then queues `event` as
    /// [`Extensions::observe_typed`] does; an agent event (`Event::Agent`) reaches the extensions
    /// of version 0.1 as `pi_json`, made only when one of them listens.
    pub fn observe_event(
        &self,
        kind: &str,
        write: impl FnOnce(),
        event: impl FnOnce() -> Event,
        pi_json: impl FnOnce() -> Value,
    ) {
        self.queue(kind, write, event, pi_json);
    }

    /// Runs `write` (the front-end's copy of the event), then queues the event as
    /// [`Extensions::observe`] does; a command that starts once `write` has run waits for the
    /// extensions to see the event.
    pub fn observe_after(&self, kind: &str, write: impl FnOnce(), json: impl FnOnce() -> Value) {
        self.queue(
            kind,
            write,
            || Event::Observe((kind.to_string(), json().to_string())),
            || Value::Null,
        );
    }

    fn queue(
        &self,
        kind: &str,
        write: impl FnOnce(),
        event: impl FnOnce() -> Event,
        pi_json: impl FnOnce() -> Value,
    ) {
        let wanted = !kind.is_empty() && self.wants(kind);
        if wanted {
            self.observed_sent
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        write();
        if wanted {
            let event = event();
            let pi_json = self.json_for_v1(kind, &event, pi_json);
            let _ = self.observed.send((kind.to_string(), event, pi_json));
        }
    }

    /// pi's JSON of an agent event or a compaction's preparation, when an extension of version
    /// 0.1 listens to it (it gets that, where 0.2 gets typed records).
    pub fn json_for_v1<J: std::fmt::Display>(
        &self,
        kind: &str,
        event: &Event,
        pi_json: impl FnOnce() -> J,
    ) -> Option<Arc<str>> {
        let v1_listens = || {
            self.slots()
                .iter()
                .any(|s| s.wants(kind) && s.plugin.may_speak_extension_v1())
        };
        let has_json = matches!(event, Event::Agent(_) | Event::SessionBeforeCompact(_));
        (has_json && v1_listens()).then(|| Arc::from(pi_json().to_string()))
    }

    /// Calls the hook `kind` on every extension that subscribed to it, in load order.
    pub async fn hook(&self, kind: &str, event: Event) -> HookOutcome {
        self.hook_as(kind, event, None).await
    }

    /// [`Extensions::hook`] for an agent event with its pi JSON for 0.1's extensions
    /// ([`Extensions::json_for_v1`]).
    pub async fn hook_as(
        &self,
        kind: &str,
        event: Event,
        pi_json: Option<Arc<str>>,
    ) -> HookOutcome {
        let mut outcome = HookOutcome::default();
        for slot in self.slots().iter().filter(|s| s.wants(kind)) {
            match self
                .call_slot_as(slot, kind, event.clone(), pi_json.clone())
                .await
            {
                Ok(EventResult::Continue) => {}
                Ok(result) => outcome.results.push((slot.plugin.path.clone(), result)),
                Err(error) => {
                    outcome.failure.get_or_insert(error);
                }
            }
        }
        outcome
    }

    async fn call_slot(
        &self,
        slot: &Slot,
        kind: &str,
        event: Event,
    ) -> Result<EventResult, String> {
        self.call_slot_as(slot, kind, event, None).await
    }

    async fn call_slot_as(
        &self,
        slot: &Slot,
        kind: &str,
        event: Event,
        pi_json: Option<Arc<str>>,
    ) -> Result<EventResult, String> {
        let mut instance = slot.instance.lock().await;
        let result = match instance.hear(&self.host, event, pi_json).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(message)) => Err(message),
            Err(err) => Err(err.to_string()),
        };
        if let Err(error) = &result {
            self.error(&slot.plugin.path, kind, error);
        }
        result
    }

    /// The tools the extensions register (at load, then at run time), with the id of the
    /// plugin of each.
    pub fn tools(&self) -> Vec<(ToolSpec, String)> {
        self.slots()
            .iter()
            .flat_map(|slot| {
                let id = slot.plugin.manifest.id.clone();
                let dynamic = lock(&slot.dynamic_tools).clone();
                let described: Vec<ToolSpec> = slot
                    .meta
                    .tools
                    .iter()
                    .filter(|spec| !dynamic.iter().any(|d| d.name == spec.name))
                    .cloned()
                    .collect();
                described
                    .into_iter()
                    .chain(dynamic)
                    .map(move |spec| (spec, id.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Runs an extension's tool on its live instance; every failure is an error result.
    pub async fn execute_tool(
        &self,
        plugin: &str,
        name: &str,
        call_id: &str,
        arguments: &Value,
    ) -> ToolOutput {
        let Some(slot) = self
            .slots()
            .iter()
            .find(|s| s.plugin.manifest.id == plugin)
            .cloned()
        else {
            return ToolOutput::error(format!("Tool {name} not found"));
        };
        let mut instance = slot.instance.lock().await;
        match instance
            .execute_tool(&self.host, name, call_id, &arguments.to_string())
            .await
        {
            Ok(Ok(outcome)) => {
                if outcome.terminate {
                    lock(&self.terminating).insert(call_id.to_string());
                }
                ToolOutput::from_wit(outcome.tool_result, false)
            }
            Ok(Err(error)) => ToolOutput::from_wit_error(error),
            Err(err) => ToolOutput::error(err.to_string()),
        }
    }

    /// The extension that registered the command `name`, if any.
    pub fn command(&self, name: &str) -> Option<Arc<Slot>> {
        self.slots()
            .iter()
            .find(|s| s.meta.commands.iter().any(|c| c.name == name))
            .cloned()
    }

    /// Waits until the extensions have been given every event observed so far.
    pub async fn observed_so_far(&self) {
        let emitted = self.observed_sent.load(std::sync::atomic::Ordering::SeqCst);
        let mut delivered = self.observed_done.subscribe();
        let _ = delivered.wait_for(|done| *done >= emitted).await;
    }

    /// Runs an extension command; a failure is reported as `extension_error`.
    pub async fn run_command(&self, slot: &Slot, name: &str, args: &str) {
        // The extensions see every event emitted before the command first (a host that read
        // `agent_end` and then runs a command finds the extension has seen it).
        self.observed_so_far().await;
        let outcome = {
            let mut instance = slot.instance.lock().await;
            instance.run_command(&self.host, name, args).await
        };
        let error = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(message)) => Some(message),
            Err(err) => Some(err.to_string()),
        };
        if let Some(error) = error {
            self.error(&format!("command:{name}"), "command", &error);
        }
        // What it sent on the events bus is heard before the command is answered, as pi's
        // emitter calls the listeners at once.
        self.observed_so_far().await;
    }

    /// The completions the extension that registered `command` offers for its argument.
    pub async fn complete_argument(
        &self,
        slot: &Slot,
        command: &str,
        prefix: &str,
    ) -> Result<Vec<Completion>, String> {
        // An extension busy for long (a tool, a command, a dialog) offers none now: a
        // completion waits a moment for it, not for the whole call.
        let Ok(mut instance) = tokio::time::timeout(COMPLETION_WAIT, slot.instance.lock()).await
        else {
            return Ok(Vec::new());
        };
        let completions = instance
            .complete_argument(&self.host, command, prefix)
            .await
            .map_err(|err| {
                let error = format!("The extension's completions failed: {err}");
                self.error(&slot.plugin.path, "complete_argument", &error);
                error
            })?;
        Ok(completions
            .into_iter()
            .take(MAX_COMPLETIONS)
            .map(|c| Completion {
                value: c.value,
                label: c.label,
                description: c.description,
            })
            .collect())
    }

    /// Reports an extension's failure (`extension_error`).
    pub fn error(&self, path: &str, event: &str, error: &str) {
        self.out.emit(&SessionEvent::ExtensionError {
            extension_path: path.to_string(),
            event: event.to_string(),
            error: error.to_string(),
        });
    }
}
