//! The RPC mode's event sink: renders the engine's [`SessionEvent`]s as pi's JSONL frames, in
//! pi's key order, onto the single stdout writer. It owns what is a matter of the protocol and
//! not of the session: the host's event filter (`set_event_filter`), how `message_update` frames
//! are written (full snapshots or lean), pi 0.16's legacy events, and the frames of extension
//! dialogs and host tools.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value, json};

use super::profile::Protocol;
use super::render::{MessageRender, UpdateMode};
use super::writer::FrameSink;
use crate::agent::conversation::message::{AgentMessage, StopReason};
use crate::agent::event::{AssistantUpdate, EventSink, SessionEvent, SinkFuture, SwitchFuture};
use crate::agent::session::Session;
use crate::plugin_host::imports::ui::UiRequest;

/// Which session events reach the host (`set_event_filter`).
#[derive(Debug, Clone, PartialEq)]
pub struct EventFilter {
    /// The event types let through; all when `None`.
    pub events: Option<Vec<String>>,
    /// How `message_update` frames are written.
    pub updates: UpdateMode,
}

impl EventFilter {
    /// Every event, with the profile's `message_update` frames.
    pub fn all(protocol: Protocol) -> EventFilter {
        EventFilter {
            events: None,
            updates: UpdateMode::of(protocol),
        }
    }

    /// True when events of `kind` go out.
    pub fn allows(&self, kind: &str) -> bool {
        self.events
            .as_ref()
            .is_none_or(|events| events.iter().any(|e| e == kind))
    }
}

/// The answer being streamed: its cached JSON and the mode chosen when it started.
#[derive(Default)]
struct Streamed {
    render: MessageRender,
    mode: UpdateMode,
}

/// Renders session events as frames on stdout.
pub struct RpcEvents {
    out: FrameSink,
    filter: Mutex<EventFilter>,
    legacy: AtomicBool,
    protocol: Protocol,
    streamed: Mutex<Streamed>,
    /// Set by `shutdown`: the serve loop stops reading and exits.
    shutdown: tokio::sync::watch::Sender<bool>,
    /// When serving began (for `ping`).
    started: std::time::Instant,
    /// What switches the session served to another file on an extension's request.
    switcher: std::sync::OnceLock<Switcher>,
}

/// Switches the session served to a session file (see [`RpcEvents::on_switch`]).
pub type Switcher = Box<dyn Fn(String) -> SwitchFuture + Send + Sync>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RpcEvents {
    /// A sink writing `protocol`'s frames to `out`; `legacy` sends pi 0.16's events too.
    pub fn new(out: FrameSink, legacy: bool, protocol: Protocol) -> RpcEvents {
        RpcEvents {
            out,
            filter: Mutex::new(EventFilter::all(protocol)),
            legacy: AtomicBool::new(legacy),
            protocol,
            streamed: Mutex::new(Streamed::default()),
            shutdown: tokio::sync::watch::channel(false).0,
            started: std::time::Instant::now(),
            switcher: std::sync::OnceLock::new(),
        }
    }

    /// Sets what switches the session served when an extension asks (the slot's
    /// `switch_session`, which can move to another folder).
    pub fn on_switch(&self, switcher: Switcher) {
        let _ = self.switcher.set(switcher);
    }

    /// How long pith has been serving.
    pub fn uptime(&self) -> std::time::Duration {
        self.started.elapsed()
    }

    /// Asks the serve loop to stop (the `shutdown` command).
    pub fn request_shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// Resolves once a shutdown was requested.
    pub async fn shutdown_requested(&self) {
        let mut requested = self.shutdown.subscribe();
        let _ = requested.wait_for(|requested| *requested).await;
    }

    /// The protocol profile.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The frame writer (responses go through it too, so they keep their place among events).
    pub fn out(&self) -> &FrameSink {
        &self.out
    }

    /// Replaces the event filter.
    pub fn set_filter(&self, filter: EventFilter) {
        *lock(&self.filter) = filter;
    }

    /// True when pi 0.16's events are sent too.
    pub fn legacy(&self) -> bool {
        self.legacy.load(Ordering::Relaxed)
    }

    /// Turns pi 0.16's events on or off.
    pub fn set_legacy(&self, enabled: bool) {
        self.legacy.store(enabled, Ordering::Relaxed);
    }

    /// pi 0.16's `error` event for a failed command, when legacy events are on.
    pub fn legacy_error(&self, error: &str) {
        if self.legacy() {
            self.filtered(&json!({"type": "error", "error": error}));
        }
    }

    /// pi 1.5's `bash_execution_update`: output of the `bash` command `id` as it runs.
    pub fn bash_output(&self, id: Option<&Value>, delta: &str) {
        if self.protocol != Protocol::Pi15 || !self.allows("bash_execution_update") {
            return;
        }
        let mut frame = Map::new();
        frame.insert("type".into(), json!("bash_execution_update"));
        if let Some(id) = id {
            frame.insert("id".into(), id.clone());
        }
        frame.insert("delta".into(), json!(delta));
        self.out.send(&Value::Object(frame));
    }

    fn allows(&self, kind: &str) -> bool {
        lock(&self.filter).allows(kind)
    }

    /// Writes `frame` unless the filter holds its type back.
    fn filtered(&self, frame: &Value) {
        let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
        if self.allows(kind) {
            self.out.send(frame);
        }
    }

    fn serialized(event: &SessionEvent) -> Value {
        serde_json::to_value(event).unwrap_or(Value::Null)
    }

    /// Writes an event in the profile's form, unless the profile has no such frame or the
    /// filter holds it back.
    fn write(&self, event: &SessionEvent) {
        if let Some(frame) = self.protocol.event(Self::serialized(event)) {
            self.filtered(&frame);
        }
    }
}

impl EventSink for RpcEvents {
    fn extension_shutdown(&self) {
        self.request_shutdown();
    }

    fn switch_session(&self, path: &str) -> Option<SwitchFuture> {
        self.switcher.get().map(|switch| switch(path.to_string()))
    }

    fn emit(&self, event: &SessionEvent) {
        match event {
            SessionEvent::SessionSwitch { .. } | SessionEvent::SessionFork { .. } => {}
            SessionEvent::UiCancel { id, target_id } => self.out.send(&json!({
                "type": "extension_ui_request",
                "id": id,
                "method": "cancel",
                "targetId": target_id,
            })),
            SessionEvent::ExtensionError { .. }
            | SessionEvent::HostToolCall { .. }
            | SessionEvent::HostToolCancel { .. } => self.out.send(&Self::serialized(event)),
            SessionEvent::UiRequest { id, request, .. } => self.out.send(&ui_frame(id, request)),
            SessionEvent::BashEnd { .. } => {
                if self.legacy() {
                    self.write(event);
                }
            }
            SessionEvent::MessageEnd {
                message: AgentMessage::Assistant(answer),
            } if answer.stop_reason == StopReason::Aborted => {
                // The aborted answer's queued updates are dropped; its end is written.
                self.out.discard_streaming();
                self.write(event);
            }
            SessionEvent::MessageStart {
                message: AgentMessage::Assistant(_),
                ..
            } => {
                let mode = lock(&self.filter).updates;
                *lock(&self.streamed) = Streamed {
                    render: MessageRender::default(),
                    mode,
                };
                self.write(event);
            }
            SessionEvent::CompactionEnd {
                reason,
                result: Some(result),
                ..
            } => {
                self.write(event);
                if self.legacy() {
                    // pi 0.16's `compaction`: {summary, tokensBefore, auto?}.
                    let mut frame = json!({"type": "compaction", "summary": result["summary"], "tokensBefore": result["tokensBefore"]});
                    if reason != "manual" {
                        frame["auto"] = json!(true);
                    }
                    self.filtered(&frame);
                }
            }
            _ => self.write(event),
        }
    }

    fn message_update<'a>(&'a self, update: &AssistantUpdate<'_>) -> SinkFuture<'a> {
        let line = {
            let mut streamed = lock(&self.streamed);
            let mode = streamed.mode;
            streamed.render.render(update, mode)
        };
        if !self.allows("message_update") {
            return Box::pin(std::future::ready(()));
        }
        Box::pin(self.out.send_streaming(line))
    }
}

/// An `extension_ui_request` frame in pi's key order (absent fields left out).
pub(super) fn ui_frame(id: &str, request: &UiRequest) -> Value {
    let mut frame = Map::new();
    frame.insert("type".into(), json!("extension_ui_request"));
    frame.insert("id".into(), json!(id));
    let mut put = |key: &str, value: Value| {
        frame.insert(key.into(), value);
    };
    match request {
        UiRequest::Select { title, options, .. } => {
            put("method", json!("select"));
            put("title", json!(title));
            put("options", json!(options));
        }
        UiRequest::Confirm { title, message, .. } => {
            put("method", json!("confirm"));
            put("title", json!(title));
            put("message", json!(message));
        }
        UiRequest::Input {
            title, placeholder, ..
        } => {
            put("method", json!("input"));
            put("title", json!(title));
            if let Some(placeholder) = placeholder {
                put("placeholder", json!(placeholder));
            }
        }
        UiRequest::Editor { title, prefill } => {
            put("method", json!("editor"));
            put("title", json!(title));
            if let Some(prefill) = prefill {
                put("prefill", json!(prefill));
            }
        }
        UiRequest::Notify { message, kind } => {
            put("method", json!("notify"));
            put("message", json!(message));
            if let Some(kind) = kind {
                put("notifyType", json!(kind));
            }
        }
        UiRequest::SetStatus { key, text } => {
            put("method", json!("setStatus"));
            put("statusKey", json!(key));
            if let Some(text) = text {
                put("statusText", json!(text));
            }
        }
        UiRequest::SetWidget {
            key,
            lines,
            placement,
        } => {
            put("method", json!("setWidget"));
            put("widgetKey", json!(key));
            if let Some(lines) = lines {
                put("widgetLines", json!(lines));
            }
            if let Some(placement) = placement {
                put("widgetPlacement", json!(placement));
            }
        }
        UiRequest::SetTitle { title } => {
            put("method", json!("setTitle"));
            put("title", json!(title));
        }
        UiRequest::SetEditorText { text } => {
            put("method", json!("set_editor_text"));
            put("text", json!(text));
        }
    }
    if let Some(ms) = request.timeout_ms().filter(|ms| *ms > 0) {
        frame.insert("timeout".into(), json!(ms));
    }
    Value::Object(frame)
}

/// Every dialog still open, oldest first, as its `extension_ui_request` frame was sent, with
/// `remainingMs` when it has a timeout.
pub(crate) fn open_dialog_frames(session: &Session) -> Vec<Value> {
    session
        .open_dialogs()
        .into_iter()
        .map(|dialog| {
            let mut frame = ui_frame(&dialog.id, &dialog.request);
            if let (Some(remaining), Value::Object(fields)) = (dialog.remaining, &mut frame) {
                fields.insert("remainingMs".into(), json!(remaining.as_millis() as u64));
            }
            frame
        })
        .collect()
}
