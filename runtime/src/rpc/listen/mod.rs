//! `--listen`: the RPC protocol on a socket instead of stdin/stdout, for hosts that come and
//! go while the agent works (an editor restarted, a browser tab closed).
//!
//! The agent outlives its clients. Every client speaks the same JSONL protocol; each gets every
//! event, and the responses to its own commands only: a command's `id` is tagged with the
//! client on the way in and restored on the way out ([`route`]). On attach a client first
//! receives an `attached` frame (the `get_state` data, the open dialogs, the host-tool calls
//! waiting) followed by the open `extension_ui_request` frames and `host_tool_call` frames
//! themselves, re-sent with their original ids; `get_entries {since}` gives it the entries
//! since the last one it saw. A dialog is answered once: the first answer wins, and every
//! client then gets a `cancel` request naming it. A client that stops reading never slows the
//! run: past [`QUEUE_LIMIT`] bytes waiting for it, it gets a `lagged` frame and is
//! disconnected (it can attach again and resync).
//!
//! A unix socket is created `0600` inside a `0700` directory; a TCP client must first send
//! `{"type":"hello","token":…}` with the token of `--rpc-token-file` (compared in constant
//! time), and nothing it sends before is processed.

mod client;
mod endpoint;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

pub use endpoint::{Endpoint, Listener};

use crate::agent::session::Session;
use crate::rpc::host::SessionHost;

/// Bytes that may wait for one client before it is dropped as lagging.
pub const QUEUE_LIMIT: usize = 16 << 20;

use crate::rpc::client_ids::untag;
pub(crate) use crate::rpc::client_ids::{looks_tagged, tag_id, untagged_answer};

/// The clients attached now.
#[derive(Default)]
pub struct Hub {
    clients: Mutex<Vec<Slot>>,
    next_client: AtomicU64,
    /// Hears of each client that goes.
    left: std::sync::OnceLock<Box<dyn Fn(u64) + Send + Sync>>,
}

/// One client's outgoing queue.
struct Slot {
    id: u64,
    queue: mpsc::UnboundedSender<Arc<[u8]>>,
    queued: Arc<AtomicUsize>,
    lagged: Arc<AtomicBool>,
    wake: Arc<Notify>,
}

/// What a client's writer task needs.
pub(crate) struct Outbox {
    pub id: u64,
    pub frames: mpsc::UnboundedReceiver<Arc<[u8]>>,
    pub queued: Arc<AtomicUsize>,
    pub lagged: Arc<AtomicBool>,
    pub wake: Arc<Notify>,
}

impl Hub {
    /// Registers a client and queues its snapshot first (under the lock the broadcasts take,
    /// so every frame after the snapshot reaches it and none comes before it).
    pub(crate) fn attach(&self, session: &Session, opened: &[(String, Session)]) -> Outbox {
        let id = self.next_client.fetch_add(1, Ordering::SeqCst) + 1;
        let (queue, frames) = mpsc::unbounded_channel();
        let slot = Slot {
            id,
            queue,
            queued: Arc::new(AtomicUsize::new(0)),
            lagged: Arc::new(AtomicBool::new(false)),
            wake: Arc::new(Notify::new()),
        };
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        for frame in snapshot(session, id, opened) {
            push(&slot, line_of(&frame));
        }
        let outbox = Outbox {
            id,
            frames,
            queued: slot.queued.clone(),
            lagged: slot.lagged.clone(),
            wake: slot.wake.clone(),
        };
        clients.push(slot);
        outbox
    }

    /// Forgets a client, and tells what [`Hub::on_detach`] set.
    pub(crate) fn detach(&self, id: u64) {
        self.clients
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|slot| slot.id != id);
        if let Some(left) = self.left.get() {
            left(id);
        }
    }

    /// Sets what hears of each client that goes (the session host parks its sessions).
    pub fn on_detach(&self, left: Box<dyn Fn(u64) + Send + Sync>) {
        let _ = self.left.set(left);
    }

    /// Sends a frame to one client.
    pub(crate) fn send_to(&self, id: u64, frame: &Value) {
        let clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = clients.iter().find(|slot| slot.id == id) {
            push(slot, line_of(frame));
        }
    }

    /// A written line (ending in a newline): a response goes to the client whose command it
    /// answers, with its id restored; everything else to every client.
    fn dispatch(&self, line: &[u8]) {
        // Routed (and re-encoded) before the lock: attaching clients never wait for it.
        let routed = route(line);
        let clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if clients.is_empty() {
            return;
        }
        match routed {
            Some((client, restored)) => {
                if let Some(slot) = clients.iter().find(|slot| slot.id == client) {
                    push(slot, restored);
                }
            }
            None => {
                let shared: Arc<[u8]> = Arc::from(line);
                for slot in clients.iter() {
                    push(slot, shared.clone());
                }
            }
        }
    }

    /// Waits (at most `limit`) until every client has been sent what is queued for it: the
    /// answer to `shutdown` reaches its client before the process ends.
    pub async fn drain(&self, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let waiting = self
                .clients
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|slot| {
                    slot.queued.load(Ordering::SeqCst) > 0 && !slot.lagged.load(Ordering::SeqCst)
                });
            if !waiting || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // The last frame taken from a queue may still be on its way into the socket.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }

    /// The writer end the frame writer writes into.
    pub fn output(self: &Arc<Self>) -> HubOutput {
        HubOutput {
            hub: self.clone(),
            partial: Vec::new(),
        }
    }
}

/// Queues `line` for `slot`, or marks the client lagging when too much already waits.
fn push(slot: &Slot, line: Arc<[u8]>) {
    if slot.lagged.load(Ordering::SeqCst) {
        return;
    }
    let queued = slot.queued.fetch_add(line.len(), Ordering::SeqCst) + line.len();
    if queued > QUEUE_LIMIT {
        slot.lagged.store(true, Ordering::SeqCst);
        slot.wake.notify_one();
        return;
    }
    let _ = slot.queue.send(line);
}

fn line_of(frame: &Value) -> Arc<[u8]> {
    let mut line = serde_json::to_vec(frame).unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    Arc::from(line)
}

/// The frames a client gets first: `attached`, then the open dialogs and waiting host-tool
/// calls as they were sent; then those of the sessions a multi-session host opened (`opened`),
/// tagged with their ids, after an `openSessions` list in `attached`.
fn snapshot(session: &Session, client: u64, opened: &[(String, Session)]) -> Vec<Value> {
    let waiting = |session: &Session| {
        let dialogs = crate::rpc::events::open_dialog_frames(session);
        let calls: Vec<Value> = session
            .host_tools()
            .pending_calls()
            .iter()
            .map(|call| serde_json::to_value(call).unwrap_or(Value::Null))
            .collect();
        (dialogs, calls)
    };
    let (dialogs, calls) = waiting(session);
    let mut attached = json!({
        "type": "attached",
        "clientId": client,
        "state": session.state(),
        "pendingUiRequests": dialogs,
        "pendingHostToolCalls": calls,
    });
    if !opened.is_empty() {
        let ids: Vec<&str> = opened.iter().map(|(id, _)| id.as_str()).collect();
        attached["openSessions"] = json!(ids);
    }
    let mut frames = vec![attached];
    frames.extend(dialogs);
    frames.extend(calls);
    for (id, session) in opened {
        let (dialogs, calls) = waiting(session);
        frames.extend(
            dialogs
                .into_iter()
                .chain(calls)
                .map(|frame| tagged(id, frame)),
        );
    }
    frames
}

/// `frame` with `"sessionId"` first (a multi-session host's session's frame).
fn tagged(id: &str, frame: Value) -> Value {
    let mut tagged = serde_json::Map::new();
    tagged.insert("sessionId".into(), json!(id));
    if let Value::Object(fields) = frame {
        tagged.extend(fields);
    }
    Value::Object(tagged)
}

/// The client a written line answers and the line with its id restored; `None` for a line
/// that is not the answer to a tagged command (an event: for everyone).
fn route(line: &[u8]) -> Option<(u64, Arc<[u8]>)> {
    // Only the head is searched: a tagged id is the first key of a response and the second
    // of a command's progress frame, after a multi-session host's `sessionId` when it has one.
    let head = &line[..line
        .len()
        .min(96 + 2 * crate::rpc::host::lookup::MAX_ID_LEN)];
    let marker = br#""id":"\u0001"#;
    head.windows(marker.len()).position(|w| w == marker)?;
    let mut frame: serde_json::Map<String, Value> = serde_json::from_slice(line).ok()?;
    let (client, original) = untag(frame.get("id")?)?;
    match original {
        Some(id) => frame.insert("id".into(), id),
        None => frame.remove("id"),
    };
    Some((client, line_of(&Value::Object(frame))))
}

/// The frame writer's output: whole lines go to [`Hub::dispatch`].
pub struct HubOutput {
    hub: Arc<Hub>,
    partial: Vec<u8>,
}

impl Write for HubOutput {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.hub.dispatch(&line);
        }
        Ok(bytes.len())
    }

    fn write_vectored(&mut self, slices: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        let mut total = 0;
        for slice in slices {
            // A whole frame (the usual case) goes out without being copied into `partial`.
            if self.partial.is_empty()
                && slice.last() == Some(&b'\n')
                && !slice[..slice.len() - 1].contains(&b'\n')
            {
                self.hub.dispatch(slice);
            } else {
                self.write(slice)?;
            }
            total += slice.len();
        }
        Ok(total)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Accepts clients until the process ends; each is served by [`client::serve`], its commands
/// fed into `feed` (the input the RPC loop reads).
pub async fn accept(
    listener: Listener,
    hub: Arc<Hub>,
    sessions: Arc<SessionHost>,
    feed: tokio::io::DuplexStream,
) {
    sessions.announce_dialog_answers();
    // Held weakly from here on (the RPC loop's flush waits for every holder to let go).
    let sessions = {
        let weak = Arc::downgrade(&sessions);
        drop(sessions);
        weak
    };
    let feed = Arc::new(tokio::sync::Mutex::new(feed));
    let token = listener.token.clone();
    // The clients are this task's: when it is stopped, they go with it.
    let mut clients = tokio::task::JoinSet::new();
    // At most this many connections may be waiting for their hello at once.
    let greeting = Arc::new(tokio::sync::Semaphore::new(MAX_GREETING));
    loop {
        while clients.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok(stream) => stream,
            Err(err) => {
                tracing::warn!("accepting a client failed: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let context = client::Context {
            hub: hub.clone(),
            sessions: sessions.clone(),
            feed: feed.clone(),
            token: token.clone(),
            greeting: greeting.clone(),
        };
        clients.spawn(client::serve(context, stream));
    }
}

/// Connections that may wait for their hello at once (each holds a small buffer).
const MAX_GREETING: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_response_goes_back_to_its_client_with_its_id() {
        let tagged = tag_id(7, Some(&json!(42)));
        let line = format!(
            "{}\n",
            json!({"id": tagged, "type": "response", "command": "get_state", "success": true})
        );
        let (client, restored) = route(line.as_bytes()).unwrap();
        assert_eq!(client, 7);
        assert_eq!(
            std::str::from_utf8(&restored).unwrap(),
            "{\"id\":42,\"type\":\"response\",\"command\":\"get_state\",\"success\":true}\n"
        );
        let progress = format!(
            "{}\n",
            json!({"type": "bash_execution_update", "id": tag_id(3, Some(&json!("b"))), "delta": "x"})
        );
        assert_eq!(route(progress.as_bytes()).unwrap().0, 3);
        let event = b"{\"type\":\"agent_start\"}\n";
        assert!(route(event).is_none());
        let text = format!(
            "{}\n",
            json!({"type": "message_update", "delta": "\u{1}1\u{1}x"})
        );
        assert!(route(text.as_bytes()).is_none(), "only the id field routes");
    }
}
