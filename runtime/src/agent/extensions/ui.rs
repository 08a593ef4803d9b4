//! Extension UI over RPC: dialogs become `extension_ui_request` frames with a fresh id and wait
//! for the host's `extension_ui_response` (or their timeout, which resolves the default and
//! sends a `cancel` frame so the host can close the dialog); the other methods are
//! fire-and-forget frames. Unknown and late response ids are ignored.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};
use crate::rpc::writer::FrameSink;

/// The environment variable that lets `setTitle` frames out (seed 001: `1`, `true`, `yes`, `on`).
pub const EMIT_TITLE_ENV: &str = "PI_RPC_EMIT_TITLE";

/// The dialogs waiting for the host.
pub struct UiBridge {
    out: FrameSink,
    pending: Mutex<HashMap<String, oneshot::Sender<UiAnswer>>>,
    emit_title: bool,
}

impl UiBridge {
    /// A bridge writing to `out`.
    pub fn new(out: FrameSink) -> UiBridge {
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
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<UiAnswer>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Shows `request`; dialogs wait for the answer, the rest resolve at once.
    pub async fn request(&self, request: UiRequest) -> UiAnswer {
        if matches!(request, UiRequest::SetTitle { .. }) && !self.emit_title {
            return UiAnswer::Cancelled;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (frame, timeout) = frame(&id, &request);
        if !is_dialog(&request) {
            self.out.send(&frame);
            return UiAnswer::Cancelled;
        }
        let (answer, answered) = oneshot::channel();
        self.pending().insert(id.clone(), answer);
        self.out.send(&frame);
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
                self.out.send(&json!({
                    "type": "extension_ui_request",
                    "id": uuid::Uuid::new_v4().to_string(),
                    "method": "cancel",
                    "targetId": id,
                }));
                UiAnswer::Cancelled
            }
        }
    }

    /// Takes an `extension_ui_response` frame; true when it answered a waiting dialog.
    pub fn on_response(&self, frame: &Map<String, Value>) -> bool {
        let Some(id) = frame.get("id").and_then(Value::as_str) else {
            return false;
        };
        let Some(waiting) = self.pending().remove(id) else {
            return false;
        };
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
        let _ = waiting.send(answer);
        true
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

/// The request's frame in pi's key order (absent fields left out) and its timeout.
fn frame(id: &str, request: &UiRequest) -> (Value, Option<u32>) {
    let mut frame = Map::new();
    frame.insert("type".into(), json!("extension_ui_request"));
    frame.insert("id".into(), json!(id));
    let mut put = |key: &str, value: Value| {
        frame.insert(key.into(), value);
    };
    let mut timeout = None;
    match request {
        UiRequest::Select {
            title,
            options,
            timeout_ms,
        } => {
            put("method", json!("select"));
            put("title", json!(title));
            put("options", json!(options));
            timeout = *timeout_ms;
        }
        UiRequest::Confirm {
            title,
            message,
            timeout_ms,
        } => {
            put("method", json!("confirm"));
            put("title", json!(title));
            put("message", json!(message));
            timeout = *timeout_ms;
        }
        UiRequest::Input {
            title,
            placeholder,
            timeout_ms,
        } => {
            put("method", json!("input"));
            put("title", json!(title));
            if let Some(placeholder) = placeholder {
                put("placeholder", json!(placeholder));
            }
            timeout = *timeout_ms;
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
    if let Some(ms) = timeout.filter(|ms| *ms > 0) {
        frame.insert("timeout".into(), json!(ms));
    }
    (Value::Object(frame), timeout)
}
