//! One attached client: its authentication (TCP), its snapshot, its commands (ids tagged and
//! fed to the RPC loop) and its outgoing queue (dropped with a `lagged` frame when it stops
//! reading).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{Hub, Outbox, QUEUE_LIMIT, looks_tagged, tag_id};
use crate::rpc::envelope::{parse_error_frame, parse_frame, response};
use crate::rpc::framing::{Line, LineReader};

/// How long a lagging client has to take its `lagged` notice.
const LAGGED_GRACE: Duration = Duration::from_secs(10);

/// The longest `hello` line read.
const HELLO_MAX_BYTES: usize = 4096;

/// How long a TCP client has to say `hello`.
const HELLO_WITHIN: Duration = Duration::from_secs(10);

/// What every client shares.
pub(crate) struct Context {
    pub hub: Arc<Hub>,
    /// The sessions, held weakly: the clients never keep them (and their output) alive.
    pub sessions: std::sync::Weak<crate::rpc::host::SessionHost>,
    pub feed: Arc<tokio::sync::Mutex<tokio::io::DuplexStream>>,
    pub token: Option<String>,
    /// Places for connections waiting for their hello.
    pub greeting: Arc<tokio::sync::Semaphore>,
}

/// Serves one client until it disconnects (or lags).
pub(crate) async fn serve(context: Context, (read, mut write): super::endpoint::Halves) {
    let mut lines = LineReader::new(read);
    if let Some(token) = &context.token {
        // Before the hello: a small line, and a bounded number of such connections.
        let Ok(_place) = context.greeting.clone().try_acquire_owned() else {
            let busy = response(
                None,
                "hello",
                Err("Too many connections waiting for hello; try again".into()),
            );
            return refuse(&mut write, &busy).await;
        };
        lines.set_limit(HELLO_MAX_BYTES);
        if let Err(refusal) = authenticate(&mut lines, token).await {
            return refuse(&mut write, &refusal).await;
        }
        lines.set_limit(crate::rpc::framing::MAX_LINE);
    }
    let Some(sessions) = context.sessions.upgrade() else {
        return;
    };
    let opened: Vec<_> = sessions
        .open()
        .into_iter()
        .map(|(id, open)| (id, open.routed.slot.current()))
        .collect();
    let outbox = context
        .hub
        .attach(&sessions.default_session().slot.current(), &opened);
    drop((sessions, opened));
    let id = outbox.id;
    // Aborted with this task (a stopped listener stops its clients' writers too).
    let writer = AbortOnDrop(tokio::spawn(deliver(outbox, write)));
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            // The writer ended: the client lagged or went away.
            _ = wait_finished(&writer.0) => break,
        };
        match line {
            Ok(Some(line)) => forward(&context, id, line).await,
            Ok(None) | Err(_) => break,
        }
    }
    context.hub.detach(id);
}

/// A task aborted when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Sends a refusal and closes.
async fn refuse(write: &mut Box<dyn AsyncWrite + Unpin + Send>, refusal: &Value) {
    let mut line = serde_json::to_vec(refusal).unwrap_or_default();
    line.push(b'\n');
    let _ = tokio::time::timeout(Duration::from_secs(1), write.write_all(&line)).await;
    let _ = write.shutdown().await;
}

/// Resolves once the task is done (polled, so the handle stays usable).
async fn wait_finished(task: &tokio::task::JoinHandle<()>) {
    while !task.is_finished() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads the first frame: a `hello` with the right token, or the refusal to send.
async fn authenticate<R: tokio::io::AsyncRead + Unpin>(
    lines: &mut LineReader<R>,
    token: &str,
) -> Result<(), Value> {
    let refuse = |error: &str| response(None, "hello", Err(error.to_string()));
    let first = tokio::time::timeout(HELLO_WITHIN, lines.next_line())
        .await
        .map_err(|_| {
            refuse("No hello within 10 s: send {\"type\":\"hello\",\"token\":\"…\"} first")
        })?;
    let Ok(Some(line)) = first else {
        return Err(refuse("The connection closed before hello"));
    };
    let frame = parse_frame(line).map_err(|(_, message)| {
        refuse(&format!(
            "Failed to parse hello: {message}; send {{\"type\":\"hello\",\"token\":\"…\"}} first"
        ))
    })?;
    if frame.get("type").and_then(Value::as_str) != Some("hello") {
        return Err(refuse(
            "The first frame must be {\"type\":\"hello\",\"token\":\"…\"}: nothing is processed before it",
        ));
    }
    let given = frame.get("token").and_then(Value::as_str).unwrap_or("");
    if !same(given.as_bytes(), token.as_bytes()) {
        return Err(refuse("Wrong token (see --rpc-token-file)"));
    }
    Ok(())
}

/// Compares in time that depends on the lengths only.
fn same(given: &[u8], expected: &[u8]) -> bool {
    let mut difference = given.len() ^ expected.len();
    for (i, byte) in expected.iter().enumerate() {
        difference |= usize::from(given.get(i).copied().unwrap_or(0) ^ byte);
    }
    difference == 0
}

/// Passes a client's line to the RPC loop, its command id tagged with the client; a line that
/// is not a command is answered to this client alone.
async fn forward(context: &Context, client: u64, line: Line) {
    let mut frame = match parse_frame(line) {
        Ok(frame) => frame,
        Err((id, message)) => {
            return context
                .hub
                .send_to(client, &parse_error_frame(id.as_ref(), &message));
        }
    };
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    if kind == "hello" {
        // Already attached: the answer says so (a unix client may send one, it is not needed).
        let answer = response(
            frame.get("id"),
            "hello",
            Ok(Some(json!({"clientId": client}))),
        );
        return context.hub.send_to(client, &answer);
    }
    if let Some(id) = frame.get("id").filter(|id| looks_tagged(id)) {
        let refusal = response(
            Some(id),
            kind,
            Err("An id may not start with U+0001 (pith routes answers with it)".into()),
        );
        return context.hub.send_to(client, &refusal);
    }
    // Every frame's answer comes back here: commands by their id, and the answers to dialogs
    // and host-tool calls (whose id names what they answer) by the same tag, taken off again
    // before the dialog or call is looked up.
    let tagged = tag_id(client, frame.get("id"));
    frame.insert("id".into(), tagged);
    let mut bytes = serde_json::to_vec(&frame).unwrap_or_default();
    bytes.push(b'\n');
    let mut feed = context.feed.lock().await;
    let _ = feed.write_all(&bytes).await;
}

/// Writes the client's queue to it; when it lags, tells it and disconnects. A frame cut short
/// by the lag is finished first, so the notice is a line of its own.
async fn deliver(mut outbox: Outbox, mut write: Box<dyn AsyncWrite + Unpin + Send>) {
    let mut unfinished: Option<(Arc<[u8]>, usize)> = None;
    loop {
        if outbox.lagged.load(Ordering::SeqCst) {
            break;
        }
        let next = tokio::select! {
            next = outbox.frames.recv() => next,
            _ = outbox.wake.notified() => continue,
        };
        let Some(line) = next else {
            return;
        };
        outbox.queued.fetch_sub(line.len(), Ordering::SeqCst);
        let mut done = 0;
        let mut failed = false;
        while done < line.len() {
            tokio::select! {
                written = write.write(&line[done..]) => match written {
                    Ok(0) | Err(_) => {
                        failed = true;
                        break;
                    }
                    Ok(n) => done += n,
                },
                _ = outbox.wake.notified() => break,
            }
        }
        if failed {
            return;
        }
        if done < line.len() {
            unfinished = Some((line, done));
            break;
        }
    }
    if outbox.lagged.load(Ordering::SeqCst) {
        let notice = json!({
            "type": "lagged",
            "limitBytes": QUEUE_LIMIT,
            "message": "This client fell too far behind the event stream and is disconnected; attach again and resync with get_state and get_entries {since}",
        });
        let mut tail = unfinished
            .map(|(line, done)| line[done..].to_vec())
            .unwrap_or_default();
        tail.extend(serde_json::to_vec(&notice).unwrap_or_default());
        tail.push(b'\n');
        // The socket is full (that is why it lagged): the rest of the frame being written and
        // the notice wait for the client to read a little longer; nothing more is queued.
        let _ = tokio::time::timeout(LAGGED_GRACE, write.write_all(&tail)).await;
    }
    let _ = tokio::time::timeout(Duration::from_millis(200), write.shutdown()).await;
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"secret", b"secret"));
        assert!(!same(b"secre", b"secret"));
        assert!(!same(b"secretx", b"secret"));
        assert!(!same(b"", b"secret"));
        assert!(!same(b"Secret", b"secret"));
    }
}
