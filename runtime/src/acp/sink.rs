//! An engine session's events as ACP `session/update` notifications. The translation is
//! synchronous (the engine may emit under its locks); what needs the session's state (config
//! options, the command list) or a round trip to the client (dialogs) is handed to tasks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Client, RequestCancellationHandle};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::flow::Flow;
use super::{tools, updates};
use crate::agent::conversation::message::{AgentMessage, AssistantBlock, StopReason};
use crate::agent::event::{
    AssistantUpdate, EventSink, SessionEvent, SinkFuture, UpdateKind, UpdatePayload,
};
use crate::agent::session::Session;
use crate::agent::session::front_end::WeakSession;
use crate::plugin_host::imports::ui::UiRequest;

/// What the client said it can show beyond the basics (`clientCapabilities.session`,
/// `elicitation`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ClientFeatures {
    /// `compaction_update` notifications.
    pub compaction: bool,
    /// `notice` notifications.
    pub notices: bool,
    /// `elicitation/create` forms.
    pub forms: bool,
}

impl ClientFeatures {
    /// The features from the client's `initialize` capabilities.
    pub fn of(capabilities: &acp::ClientCapabilities) -> ClientFeatures {
        let session = capabilities.session.as_ref();
        ClientFeatures {
            compaction: session.is_some_and(|s| s.compaction.is_some()),
            notices: session.is_some_and(|s| s.notices.is_some()),
            forms: capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some()),
        }
    }
}

/// Work the sink hands to the session's follower task (it needs the session's state).
pub(super) enum Follow {
    /// Send the config options again (the model or thinking level changed).
    ConfigOptions,
    /// Send the command list again (plugins, templates or skills changed).
    Commands,
}

/// A dialog's request open at the client: withdrawn with `$/cancel_request`, and its task told
/// to stop waiting.
struct OpenDialog {
    handle: RequestCancellationHandle,
    withdrawn: oneshot::Sender<()>,
}

impl OpenDialog {
    fn withdraw(self) {
        if let Err(err) = self.handle.cancel() {
            tracing::debug!(%err, "acp: request not withdrawn");
        }
        let _ = self.withdrawn.send(());
    }
}

/// A tool call the client was told of and that has not ended.
struct OpenCall {
    name: String,
    args: Value,
}

/// What the translation remembers between events.
#[derive(Default)]
struct Live {
    calls: HashMap<String, OpenCall>,
    /// The id of the answer being streamed (chunks of one answer share it).
    message_id: String,
    /// User messages the client sent itself and must not see echoed.
    echoes: u32,
    /// The session's cost so far.
    cost: f64,
    /// The compaction running (an automatic one wraps the compaction it runs: one id, and
    /// how deep the nesting is), when the client follows compactions.
    compaction: Option<(String, u32)>,
    /// Requests open at the client for dialogs, by dialog id.
    dialogs: HashMap<String, OpenDialog>,
    /// How the last answer of the prompt running ended, and its error.
    last_stop: Option<(StopReason, Option<String>)>,
}

/// The sink of one ACP session.
pub(super) struct AcpSink {
    client: ConnectionTo<Client>,
    id: acp::SessionId,
    cwd: PathBuf,
    features: ClientFeatures,
    session: OnceLock<WeakSession>,
    live: Mutex<Live>,
    follow: mpsc::UnboundedSender<Follow>,
    flow: Arc<Flow>,
    /// Itself, for the dialog tasks it starts.
    me: Weak<AcpSink>,
}

impl AcpSink {
    /// A sink for the session `id`; the follower's work arrives on the receiver.
    pub fn new(
        client: ConnectionTo<Client>,
        id: acp::SessionId,
        cwd: PathBuf,
        features: ClientFeatures,
        flow: Arc<Flow>,
    ) -> (Arc<AcpSink>, mpsc::UnboundedReceiver<Follow>) {
        let (follow, work) = mpsc::unbounded_channel();
        let sink = Arc::new_cyclic(|me| AcpSink {
            client,
            id,
            cwd,
            features,
            session: OnceLock::new(),
            live: Mutex::new(Live::default()),
            follow,
            flow,
            me: me.clone(),
        });
        (sink, work)
    }

    /// Ties the sink to its engine session (for dialogs and the model's context window).
    pub fn attach(&self, session: &Session, cost: f64) {
        let _ = self.session.set(session.downgrade());
        self.live().cost = cost;
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn engine(&self) -> Option<Session> {
        self.session.get().and_then(WeakSession::upgrade)
    }

    /// Sends one update (a closed connection drops it: the session is going away).
    pub fn send(&self, update: acp::SessionUpdate) {
        let notification = acp::SessionNotification::new(self.id.clone(), update);
        if let Err(err) = self.client.send_notification(notification) {
            tracing::debug!(%err, "acp: update not sent");
        }
    }

    /// A prompt starts; with `echo`, its user message is the one the client sent (not echoed
    /// back).
    pub fn begin_prompt(&self, echo: bool) {
        let mut live = self.live();
        live.echoes = u32::from(echo);
        live.last_stop = None;
    }

    /// The prompt's run is over: how its last answer ended.
    pub fn end_prompt(&self) -> Option<(StopReason, Option<String>)> {
        let mut live = self.live();
        live.echoes = 0;
        live.last_stop.take()
    }

    /// A request for dialog `id` is open at the client; the receiver resolves if it is
    /// withdrawn (the dialog timed out, or the prompt was cancelled).
    pub fn dialog_opened(
        &self,
        id: &str,
        handle: RequestCancellationHandle,
    ) -> oneshot::Receiver<()> {
        let (withdrawn, signal) = oneshot::channel();
        self.live()
            .dialogs
            .insert(id.to_string(), OpenDialog { handle, withdrawn });
        signal
    }

    /// Withdraws every dialog open at the client (the prompt was cancelled); returns their ids.
    pub fn withdraw_dialogs(&self) -> Vec<String> {
        let open: Vec<(String, OpenDialog)> = self.live().dialogs.drain().collect();
        open.into_iter()
            .map(|(id, dialog)| {
                dialog.withdraw();
                id
            })
            .collect()
    }

    /// Marks the calls still open as failed: their answer ended before they ran (an error, an
    /// abort, a rule that stopped the stream).
    fn close_open_calls(&self) {
        let open: Vec<String> = self.live().calls.drain().map(|(id, _)| id).collect();
        for id in open {
            self.send(acp::SessionUpdate::ToolCallUpdate(
                acp::ToolCallUpdate::new(
                    id,
                    acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Failed),
                ),
            ));
        }
    }

    /// The permission request for dialog `id` got its answer.
    pub fn dialog_closed(&self, id: &str) {
        self.live().dialogs.remove(id);
    }

    /// The id of the only tool call open, when exactly one is (the call an extension's
    /// `tool_call` hook asks about).
    pub fn only_open_call(&self) -> Option<String> {
        let live = self.live();
        let mut ids = live.calls.keys();
        match (ids.next(), ids.next()) {
            (Some(id), None) => Some(id.clone()),
            _ => None,
        }
    }

    /// The tool call `id`'s name and arguments, when it is open.
    pub fn open_call(&self, id: &str) -> Option<(String, Value)> {
        self.live()
            .calls
            .get(id)
            .map(|call| (call.name.clone(), call.args.clone()))
    }

    fn notice(&self, severity: acp::NoticeSeverity, title: String, description: Option<String>) {
        if self.features.notices {
            self.send(acp::SessionUpdate::Notice(
                acp::Notice::new(severity, title).description(description),
            ));
        } else {
            tracing::debug!(title, ?description, "acp: notice (client takes none)");
        }
    }

    fn compaction(
        &self,
        status: acp::CompactionStatus,
        result: Option<&Value>,
        error: Option<&String>,
    ) {
        if !self.features.compaction {
            return;
        }
        let id = {
            let mut live = self.live();
            let starting = matches!(status, acp::CompactionStatus::InProgress);
            match (starting, &mut live.compaction) {
                (true, Some((_, depth))) => {
                    *depth += 1;
                    return;
                }
                (true, None) => {
                    let id = uuid::Uuid::new_v4().to_string();
                    live.compaction = Some((id.clone(), 1));
                    id
                }
                (_, Some((_, depth))) if *depth > 1 => {
                    *depth -= 1;
                    return;
                }
                (_, open) => match open.take() {
                    Some((id, _)) => id,
                    None => return,
                },
            }
        };
        let mut update = acp::CompactionUpdate::new(id, status);
        if let Some(summary) = result
            .and_then(|r| r.get("summary"))
            .and_then(Value::as_str)
        {
            update = update.summary(vec![acp::ContentBlock::from(summary.to_string())]);
        }
        if let Some(error) = error {
            update = update.error(error.clone());
        }
        self.send(acp::SessionUpdate::CompactionUpdate(update));
    }

    fn compaction_end(&self, result: Option<&Value>, aborted: bool, error: Option<&String>) {
        let status = if aborted {
            acp::CompactionStatus::Cancelled
        } else if result.is_some() {
            acp::CompactionStatus::Completed
        } else {
            acp::CompactionStatus::Failed
        };
        self.compaction(status, result, error);
    }

    fn message_start(&self, message: &AgentMessage) {
        match message {
            AgentMessage::User(user) => {
                {
                    let mut live = self.live();
                    if live.echoes > 0 {
                        live.echoes -= 1;
                        return;
                    }
                }
                for update in updates::user_chunks(&user.content) {
                    self.send(update);
                }
            }
            AgentMessage::Assistant(_) => {
                self.live().message_id = uuid::Uuid::new_v4().to_string();
            }
            _ => {}
        }
    }

    fn message_end(&self, message: &AgentMessage) {
        match message {
            AgentMessage::Assistant(answer) => {
                let cost = {
                    let mut live = self.live();
                    live.last_stop = Some((answer.stop_reason, answer.error_message.clone()));
                    live.cost += answer.usage.cost.total;
                    live.cost
                };
                let window = self
                    .engine()
                    .and_then(|session| session.context_window(&answer.provider, &answer.model));
                let used = answer.usage.total_tokens;
                // A failed or aborted answer reports no usage: nothing to tell.
                if let Some(size) = window.filter(|_| used > 0) {
                    self.send(acp::SessionUpdate::UsageUpdate(
                        acp::UsageUpdate::new(used, size).cost(acp::Cost::new(cost, "USD")),
                    ));
                }
            }
            AgentMessage::Custom(custom) if custom.display => {
                if let Some(text) = updates::custom_text(&custom.content) {
                    self.send(acp::SessionUpdate::AgentMessageChunk(
                        acp::ContentChunk::new(text.into()),
                    ));
                }
            }
            _ => {}
        }
    }

    fn tool_start(&self, id: &str, name: &str, args: &Value) {
        let known = self.live().calls.contains_key(id);
        if known {
            self.send(acp::SessionUpdate::ToolCallUpdate(
                acp::ToolCallUpdate::new(
                    id.to_string(),
                    acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::InProgress),
                ),
            ));
        } else {
            self.open(id, name, args, acp::ToolCallStatus::InProgress);
        }
    }

    /// Tells the client of a tool call (once, when the model finished it or it starts).
    fn open(&self, id: &str, name: &str, args: &Value, status: acp::ToolCallStatus) {
        self.live().calls.insert(
            id.to_string(),
            OpenCall {
                name: name.to_string(),
                args: args.clone(),
            },
        );
        let call = tools::announce(id, name, args, &self.cwd).status(status);
        self.send(acp::SessionUpdate::ToolCall(call));
    }

    fn tool_end(&self, id: &str, name: &str, event: &SessionEvent) {
        let SessionEvent::ToolExecutionEnd {
            result, is_error, ..
        } = event
        else {
            return;
        };
        let args = self
            .live()
            .calls
            .remove(id)
            .map(|call| call.args)
            .unwrap_or(Value::Null);
        let details = result.0.details.as_ref();
        let fields = tools::finish(
            name,
            &args,
            &result.0.content,
            details,
            *is_error,
            &self.cwd,
        );
        self.send(acp::SessionUpdate::ToolCallUpdate(
            acp::ToolCallUpdate::new(id.to_string(), fields),
        ));
        if name == "todo"
            && !is_error
            && let Some(plan) = updates::plan_of(details)
        {
            self.send(acp::SessionUpdate::Plan(plan));
        }
    }

    fn ui_request(&self, id: &str, request: &UiRequest, tool_call: Option<&String>) {
        match request {
            UiRequest::Notify { message, kind } => {
                let severity = match *kind {
                    Some("error") => acp::NoticeSeverity::Error,
                    Some("warning") => acp::NoticeSeverity::Warning,
                    _ => acp::NoticeSeverity::Info,
                };
                self.notice(severity, message.clone(), None);
            }
            UiRequest::Select { .. }
            | UiRequest::Confirm { .. }
            | UiRequest::Input { .. }
            | UiRequest::Editor { .. } => {
                let (Some(session), Some(sink)) = (self.engine(), self.me.upgrade()) else {
                    return;
                };
                tokio::spawn(sink.ask_permission(
                    session.downgrade(),
                    self.client.clone(),
                    id.to_string(),
                    request.clone(),
                    tool_call.cloned(),
                ));
            }
            other => tracing::debug!(?other, "acp: UI request with no ACP equivalent, dropped"),
        }
    }

    /// The session id as the client knows it.
    pub fn session_id(&self) -> &acp::SessionId {
        &self.id
    }

    /// The workspace the session's paths are relative to.
    pub fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// What the client can show.
    pub fn features(&self) -> ClientFeatures {
        self.features
    }
}

impl EventSink for AcpSink {
    fn emit(&self, event: &SessionEvent) {
        match event {
            SessionEvent::MessageStart { message, .. } => self.message_start(message),
            SessionEvent::MessageEnd { message } => self.message_end(message),
            SessionEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                ..
            } => self.tool_start(tool_call_id, tool_name, args),
            SessionEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial_result,
                ..
            } => self.send(acp::SessionUpdate::ToolCallUpdate(
                acp::ToolCallUpdate::new(
                    tool_call_id.clone(),
                    acp::ToolCallUpdateFields::new()
                        .content(tools::output(tool_name, &partial_result.0.content)),
                ),
            )),
            SessionEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                ..
            } => self.tool_end(tool_call_id, tool_name, event),
            SessionEvent::TodoAutoClear => {
                self.send(acp::SessionUpdate::Plan(acp::Plan::new(Vec::new())))
            }
            SessionEvent::SessionInfoChanged { name } => {
                self.send(acp::SessionUpdate::SessionInfoUpdate(
                    acp::SessionInfoUpdate::new().title(name.clone()),
                ))
            }
            SessionEvent::ThinkingLevelChanged { .. } => {
                let _ = self.follow.send(Follow::ConfigOptions);
            }
            SessionEvent::PluginsChanged { .. } => {
                let _ = self.follow.send(Follow::Commands);
                let _ = self.follow.send(Follow::ConfigOptions);
            }
            SessionEvent::CompactionStart { .. } | SessionEvent::AutoCompactionStart { .. } => {
                self.compaction(acp::CompactionStatus::InProgress, None, None)
            }
            SessionEvent::CompactionEnd {
                result,
                aborted,
                error_message,
                ..
            }
            | SessionEvent::AutoCompactionEnd {
                result,
                aborted,
                error_message,
                ..
            } => self.compaction_end(result.as_ref(), *aborted, error_message.as_ref()),
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => self.notice(
                acp::NoticeSeverity::Warning,
                format!("Retrying ({attempt}/{max_attempts}) in {delay_ms} ms"),
                Some(error_message.clone()),
            ),
            SessionEvent::AutoRetryEnd {
                success: false,
                final_error,
                ..
            } => self.notice(
                acp::NoticeSeverity::Error,
                "Retries exhausted".into(),
                final_error.clone(),
            ),
            SessionEvent::ExtensionError {
                extension_path,
                event,
                error,
            } => self.notice(
                acp::NoticeSeverity::Error,
                format!("Extension {extension_path} failed in {event}"),
                Some(error.clone()),
            ),
            SessionEvent::UiRequest {
                id,
                request,
                tool_call_id,
            } => self.ui_request(id, request, tool_call_id.as_ref()),
            SessionEvent::UiCancel { target_id, .. } => {
                let open = self.live().dialogs.remove(target_id);
                if let Some(dialog) = open {
                    dialog.withdraw();
                }
            }
            SessionEvent::AgentSettled { .. } => {
                self.close_open_calls();
                // The run may have changed the model (an extension's `set_model`).
                let _ = self.follow.send(Follow::ConfigOptions);
            }
            _ => {}
        }
    }

    fn message_update<'a>(&'a self, update: &AssistantUpdate<'_>) -> SinkFuture<'a> {
        match (update.kind, update.payload) {
            (UpdateKind::TextDelta | UpdateKind::ThinkingDelta, UpdatePayload::Delta(delta)) => {
                let chunk = acp::ContentChunk::new(delta.clone().into())
                    .message_id(acp::MessageId::new(self.live().message_id.clone()));
                self.flow.queued(delta);
                self.send(if update.kind == UpdateKind::TextDelta {
                    acp::SessionUpdate::AgentMessageChunk(chunk)
                } else {
                    acp::SessionUpdate::AgentThoughtChunk(chunk)
                });
                return Box::pin(self.flow.ready());
            }
            (UpdateKind::ToolcallEnd, _) => {
                if let Some(AssistantBlock::ToolCall {
                    id,
                    name,
                    arguments,
                    ..
                }) = update.tool_call()
                {
                    self.open(id, name, arguments, acp::ToolCallStatus::Pending);
                }
            }
            _ => {}
        }
        Box::pin(std::future::ready(()))
    }
}
