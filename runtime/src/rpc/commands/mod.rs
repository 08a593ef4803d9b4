//! Routing commands to the session, by area: each command runs in its own task (so a slow one
//! never holds up the others) and its response echoes the request's `id`. Each area module
//! answers the commands it knows and leaves the rest; the error texts are pi's.

mod control;
mod model;
mod prompting;
mod protocol;
mod queries;
mod sessions;
mod tools;

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::OwnedSemaphorePermit;

use super::envelope::response;
use super::events::RpcEvents;
use super::fields::Fields;
use super::slot::{Replacing, SessionSlot};
use crate::agent::session::Session;
use crate::agent::tools::host_tools::HostResult;

/// A command being answered.
pub(super) struct Command<'a> {
    /// The session.
    pub session: &'a Session,
    /// Where it is held (a switch to another folder's file replaces it).
    pub slot: &'a SessionSlot,
    /// The event sink (for the protocol's own settings).
    pub events: &'a RpcEvents,
    /// The command's type.
    pub kind: &'a str,
    /// The whole command.
    pub frame: &'a Map<String, Value>,
    /// Its fields.
    pub fields: Fields<'a>,
    id: Option<&'a Value>,
    /// Its place among the commands in flight, given back when its response is written.
    place: std::sync::Mutex<Option<OwnedSemaphorePermit>>,
}

impl<'a> Command<'a> {
    /// The request's `id`.
    pub fn id(&self) -> Option<&'a Value> {
        self.id
    }

    /// Writes the response (and pi 0.16's `error` event for a failure, when asked for).
    /// The error is rendered as its text (pi's, for the engine's `SessionError`s).
    pub fn respond<E: std::fmt::Display>(&self, result: Result<Option<Value>, E>) {
        let result = result.map_err(|err| err.to_string());
        let error = result.as_ref().err().cloned();
        let protocol = self.events.protocol();
        let result =
            result.map(|data| data.and_then(|data| protocol.response_data(self.kind, data)));
        let frame = response(self.id, self.kind, result);
        let place = self
            .place
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        match place {
            Some(place) => self.events.out().send_holding(&frame, place),
            None => self.events.out().send(&frame),
        }
        if let Some(error) = error {
            self.events.legacy_error(&error);
        }
    }

    /// A success without data.
    pub fn ok(&self) {
        self.respond(Ok::<_, String>(None));
    }

    /// A success with `data`.
    /// Answers with `{"messages": [...]}`, the items written by `write` straight into the
    /// frame's line: a long conversation is not made a JSON tree first (pi 1.5's frames; the
    /// older protocol's rewrite of the messages needs the tree).
    pub fn messages_data(&self, write: impl FnOnce(&mut Vec<u8>)) {
        const HOLE: &str = "\u{0}pith-messages\u{0}";
        let frame = response(self.id, self.kind, Ok(Some(json!({ "messages": HOLE }))));
        let text = serde_json::to_string(&frame).unwrap_or_default();
        let quoted = serde_json::to_string(HOLE).unwrap_or_default();
        let Some(at) = text.find(&quoted) else {
            return self.respond(Err("the messages could not be written"));
        };
        let mut line = Vec::with_capacity(text.len() + 4096);
        line.extend_from_slice(&text.as_bytes()[..at]);
        line.push(b'[');
        write(&mut line);
        line.push(b']');
        line.extend_from_slice(&text.as_bytes()[at + quoted.len()..]);
        let place = self
            .place
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        self.events.out().send_rendered(line, place);
    }

    /// Answers with `data`.
    pub fn data<T: serde::Serialize>(&self, data: T) {
        self.respond(Ok::<_, String>(data_of(data)));
    }

    /// Runs `apply` with a required field's value, or answers the field's error.
    pub fn with<T>(&self, field: Result<T, String>, apply: impl FnOnce(T)) {
        match field {
            Ok(value) => apply(value),
            Err(err) => self.respond(Err(err)),
        }
    }
}

/// Handles a frame that is not a command (`extension_ui_response`, `host_tool_*`); returns
/// false when it is a command. An answer pi would take silently gets no response (as in pi);
/// one that names no open dialog or has a wrong type gets an error response saying why.
pub fn side_channel(session: &Session, events: &RpcEvents, tagged: &Map<String, Value>) -> bool {
    // From a socket client the id carries its route: errors answer with it, the lookups use the
    // id the client sent.
    let frame = &*crate::rpc::listen::untagged_answer(tagged);
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    let id = frame.get("id").and_then(Value::as_str).unwrap_or("");
    let result = |key: &str| {
        frame
            .get(key)
            .and_then(|r| serde_json::from_value::<HostResult>(r.clone()).ok())
    };
    match kind {
        "extension_ui_response" => {
            if let Err(error) = session.answer_dialog_frame(frame) {
                events.out().send(&response(
                    tagged.get("id"),
                    "extension_ui_response",
                    Err(error.to_string()),
                ));
            }
            true
        }
        "host_tool_result" => match result("result") {
            Some(result) => {
                let is_error = frame
                    .get("isError")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                session.host_tools().on_result(id, result, is_error);
                true
            }
            None => false,
        },
        "host_tool_update" => match result("partialResult") {
            Some(partial) => {
                session.host_tools().on_update(id, partial);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Commands answered at once whatever else is in flight: they wait only for a place among
/// their own kind (see `crate::rpc::MAX_PRIORITY_IN_FLIGHT`).
pub const PRIORITY: &[&str] = &[
    "abort",
    "abort_bash",
    "abort_retry",
    "get_state",
    "ping",
    "shutdown",
];

/// Commands that replace the session: the commands read after one wait until it is answered.
pub const REPLACING: &[&str] = &[
    "switch_session",
    "new_session",
    "reset",
    "fork",
    "branch",
    "clone",
];

/// Runs one command and writes its response; `place` is its place among the commands in flight
/// (and, for one that replaces the session, its count among those under way).
pub async fn command(
    slot: Arc<SessionSlot>,
    events: Arc<RpcEvents>,
    frame: Map<String, Value>,
    (place, replacing): (Option<OwnedSemaphorePermit>, Option<Replacing>),
) {
    let id = frame.get("id").cloned();
    let Some(kind) = frame.get("type").and_then(Value::as_str) else {
        let mut out = Map::new();
        if let Some(id) = &id {
            out.insert("id".into(), id.clone());
        }
        out.insert("type".into(), json!("response"));
        out.insert("success".into(), json!(false));
        out.insert(
            "error".into(),
            json!("Unknown command: undefined (the command has no \"type\")"),
        );
        events.out().send(&Value::Object(out));
        return;
    };
    // Plugins compiling after start-up (new third-party ones) are part of every answer but the
    // priority ones': `get_state` and the liveness commands never wait for a compile, nor for a
    // switch under way.
    if !PRIORITY.contains(&kind) && replacing.is_none() {
        slot.settled().await;
    }
    let session = slot.current();
    if !PRIORITY.contains(&kind) {
        session.plugins_settled().await;
        session.extensions_started().await;
    }
    let command = Command {
        session: &session,
        slot: &slot,
        events: &events,
        kind,
        frame: &frame,
        fields: Fields(&frame),
        id: id.as_ref(),
        place: std::sync::Mutex::new(place),
    };
    let handled = prompting::handle(&command).await
        || queries::handle(&command)
        || model::handle(&command)
        || control::handle(&command)
        || sessions::handle(&command).await
        || tools::handle(&command).await
        || protocol::handle(&command);
    if !handled {
        command.respond(Err(format!("Unknown command: {kind}")));
    }
    drop(replacing);
}

/// An engine result with its error as the text RPC answers (pi's), for a command whose fields
/// were read first.
pub(super) fn rendered<T>(
    result: Result<T, crate::agent::session::SessionError>,
) -> Result<T, String> {
    result.map_err(|err| err.to_string())
}

/// An engine answer as a response's `data` (its serde form is pi's JSON).
pub(super) fn data_of<T: serde::Serialize>(data: T) -> Option<Value> {
    Some(as_json(data))
}

/// An engine answer's JSON (its serde form is pi's).
pub(super) fn as_json<T: serde::Serialize>(answer: T) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}
