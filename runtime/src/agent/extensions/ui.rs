//! Extension UI: dialogs are sent to the front-end as [`SessionEvent::UiRequest`] with a fresh
//! id and wait for its answer (or their timeout, which resolves the default and sends
//! [`SessionEvent::UiCancel`] so the host can close the dialog); the other methods are
//! fire-and-forget. Unknown and late answer ids are ignored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::oneshot;

use crate::agent::event::{EventSink, SessionEvent};
use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};

/// Why a host's answer reached no dialog (the dialog, if any, stays open).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DialogError {
    /// The frame has no `id`.
    #[error("extension_ui_response needs the \"id\" of the extension_ui_request it answers")]
    NoId,
    /// A field has the wrong type.
    #[error("Field \"{key}\" must be {expected}, got {got} (the dialog stays open)")]
    FieldType {
        /// The field.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it was.
        got: String,
    },
    /// No dialog with that id is open.
    #[error("No open dialog with id \"{0}\": it was answered, cancelled or timed out")]
    NotOpen(String),
}

/// The environment variable that lets `setTitle` frames out (seed 001: `1`, `true`, `yes`, `on`).
pub const EMIT_TITLE_ENV: &str = "PI_RPC_EMIT_TITLE";

/// The dialogs waiting for the host.
pub struct UiBridge {
    out: Arc<dyn EventSink>,
    pending: Mutex<HashMap<String, Waiting>>,
    emit_title: bool,
    /// Several hosts may be attached (`--listen`): an answered dialog is cancelled for the
    /// others.
    announce_answers: std::sync::atomic::AtomicBool,
    /// How many dialogs have been opened (a front-end waiting on the extensions' start stops
    /// waiting once one asks the host).
    opened: tokio::sync::watch::Sender<u64>,
}

/// A dialog sent to the host and not yet answered.
struct Waiting {
    answer: oneshot::Sender<UiAnswer>,
    request: UiRequest,
    opened: Instant,
}

/// A dialog open now, as [`UiBridge::open_dialogs`] lists it.
#[derive(Debug, Clone)]
pub struct OpenDialog {
    /// The id of its `extension_ui_request`.
    pub id: String,
    /// What it asks.
    pub request: UiRequest,
    /// The time left before it resolves with its default, when it has a timeout.
    pub remaining: Option<Duration>,
}

impl UiBridge {
    /// A bridge sending its requests to `out`.
    pub fn new(out: Arc<dyn EventSink>) -> UiBridge {
        let emit_title = std::env::var(EMIT_TITLE_ENV).is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        UiBridge {
            out,
            pending: Mutex::new(HashMap::new()),
            emit_title,
            announce_answers: std::sync::atomic::AtomicBool::new(false),
            opened: tokio::sync::watch::Sender::new(0),
        }
    }

    /// From now on, a dialog answered by one host is cancelled (a `cancel` request naming it)
    /// for every other host attached.
    pub fn announce_answers(&self) {
        self.announce_answers
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// True once [`UiBridge::announce_answers`] was called.
    pub fn announces_answers(&self) -> bool {
        self.announce_answers
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Shows `request`; dialogs wait for the answer, the rest resolve at once.
    pub async fn request(&self, request: UiRequest) -> UiAnswer {
        self.request_about(request, None).await
    }

    /// Shows `request` about the tool call `tool_call_id` (see [`UiBridge::request`]).
    pub async fn request_about(
        &self,
        request: UiRequest,
        tool_call_id: Option<String>,
    ) -> UiAnswer {
        if matches!(request, UiRequest::SetTitle { .. }) && !self.emit_title {
            return UiAnswer::Cancelled;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let timeout = request.timeout_ms();
        if !is_dialog(&request) {
            self.out.emit(&SessionEvent::UiRequest {
                id,
                request,
                tool_call_id,
            });
            return UiAnswer::Cancelled;
        }
        let (answer, answered) = oneshot::channel();
        self.pending().insert(
            id.clone(),
            Waiting {
                answer,
                request: request.clone(),
                opened: Instant::now(),
            },
        );
        self.out.emit(&SessionEvent::UiRequest {
            id: id.clone(),
            request,
            tool_call_id,
        });
        self.opened.send_modify(|n| *n += 1);
        let outcome = match timeout.filter(|ms| *ms > 0) {
            Some(ms) => tokio::time::timeout(Duration::from_millis(ms.into()), answered)
                .await
                .ok(),
            None => Some(answered.await),
        };
        match outcome {
            Some(Ok(answer)) => answer,
            // Timed out (or the bridge went away): the default, and tell the host.
            _ => {
                self.pending().remove(&id);
                self.out.emit(&SessionEvent::UiCancel {
                    id: uuid::Uuid::new_v4().to_string(),
                    target_id: id,
                });
                UiAnswer::Cancelled
            }
        }
    }

    /// Takes an `extension_ui_response` frame and answers the dialog it names. An error (the
    /// dialog is left open) when the frame names no open dialog or an answer has the wrong
    /// type: the message says which and what is expected.
    pub fn on_response(&self, frame: &Map<String, Value>) -> Result<(), DialogError> {
        let Some(id) = frame.get("id").and_then(Value::as_str) else {
            return Err(DialogError::NoId);
        };
        for (key, expected) in [("cancelled", "true"), ("confirmed", "true or false")] {
            if let Some(value) = frame.get(key).filter(|v| !v.is_boolean() && !v.is_null()) {
                return Err(DialogError::FieldType {
                    key,
                    expected,
                    got: value.to_string(),
                });
            }
        }
        let answer = if frame.get("cancelled").and_then(Value::as_bool) == Some(true) {
            UiAnswer::Cancelled
        } else if let Some(confirmed) = frame.get("confirmed").and_then(Value::as_bool) {
            UiAnswer::Confirmed(confirmed)
        } else if let Some(value) = frame.get("value") {
            match value {
                Value::String(text) => UiAnswer::Value(text.clone()),
                Value::Null => UiAnswer::Cancelled,
                other => UiAnswer::Value(other.to_string()),
            }
        } else {
            UiAnswer::Cancelled
        };
        self.answer(id, answer)
    }

    /// Answers the open dialog `id` (from any front-end: an RPC frame, an ACP permission
    /// request); an error when no dialog with that id is open.
    pub fn answer(&self, id: &str, answer: UiAnswer) -> Result<(), DialogError> {
        let Some(waiting) = self.pending().remove(id) else {
            return Err(DialogError::NotOpen(id.to_string()));
        };
        let _ = waiting.answer.send(answer);
        if self
            .announce_answers
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            self.out.emit(&SessionEvent::UiCancel {
                id: uuid::Uuid::new_v4().to_string(),
                target_id: id.to_string(),
            });
        }
        Ok(())
    }

    /// True while the dialog `id` waits for its answer.
    /// Resolves once a dialog has been opened.
    pub async fn a_dialog_opened(&self) {
        let mut opened = self.opened.subscribe();
        let _ = opened.wait_for(|n| *n > 0).await;
    }

    /// True while the dialog `id` waits for its answer.
    pub fn is_open(&self, id: &str) -> bool {
        self.pending().contains_key(id)
    }

    /// The dialogs open now, oldest first: what a host that reconnects or lost a frame needs
    /// to show them again and answer them by id.
    pub fn open_dialogs(&self) -> Vec<OpenDialog> {
        let pending = self.pending();
        let mut open: Vec<(&Instant, OpenDialog)> = pending
            .iter()
            .map(|(id, waiting)| {
                let remaining = waiting.request.timeout_ms().filter(|ms| *ms > 0).map(|ms| {
                    Duration::from_millis(ms.into()).saturating_sub(waiting.opened.elapsed())
                });
                let dialog = OpenDialog {
                    id: id.clone(),
                    request: waiting.request.clone(),
                    remaining,
                };
                (&waiting.opened, dialog)
            })
            .collect();
        open.sort_by_key(|(opened, _)| **opened);
        open.into_iter().map(|(_, dialog)| dialog).collect()
    }

    /// Resolves every waiting dialog with its default (the session is closing).
    pub fn cancel_all(&self) {
        self.pending().clear();
    }
}

fn is_dialog(request: &UiRequest) -> bool {
    matches!(
        request,
        UiRequest::Select { .. }
            | UiRequest::Confirm { .. }
            | UiRequest::Input { .. }
            | UiRequest::Editor { .. }
    )
}
