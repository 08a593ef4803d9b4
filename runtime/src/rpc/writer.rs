//! The single writer that owns stdout: every frame (response, event, UI request) is sent here
//! and written whole, followed by LF, in the order received.
//!
//! Streaming frames are sent with [`FrameSink::send_streaming`], which waits while more than
//! [`STREAMING_BUDGET`] bytes are queued: a slow reader slows the stream down instead of growing
//! pith's memory. Other frames never wait.

use std::sync::Arc;

use serde_json::Value;
use std::io::Write;

use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Bytes of streaming frames that may wait in the queue.
pub const STREAMING_BUDGET: usize = 4 << 20;

/// Where a streaming frame was queued: its sink's discard counter and its value then (the frame
/// is dropped unwritten once the counter has moved on).
type Epoch = (Arc<AtomicU64>, u64);

/// A line, the streaming budget it holds until written, and for a streaming frame the discard
/// epoch it was queued in.
type Frame = (Vec<u8>, Option<OwnedSemaphorePermit>, Option<Epoch>);

/// A handle for sending frames to the writer.
#[derive(Clone)]
pub struct FrameSink {
    tx: mpsc::UnboundedSender<Frame>,
    budget: Arc<Semaphore>,
    discard: Arc<AtomicU64>,
    /// `"sessionId":"…"`, put first in every frame of a multi-session host's session.
    tag: Option<Arc<[u8]>>,
}

impl FrameSink {
    /// A handle on the same writer whose frames carry `"sessionId": session_id` as their first
    /// key (a multi-session host's session); its streaming frames are discarded apart from the
    /// other sessions'.
    pub fn tagged(&self, session_id: &str) -> FrameSink {
        let mut tag = b"\"sessionId\":".to_vec();
        // A string always serializes.
        let _ = serde_json::to_writer(&mut tag, session_id);
        FrameSink {
            tx: self.tx.clone(),
            budget: self.budget.clone(),
            discard: Arc::new(AtomicU64::new(0)),
            tag: Some(tag.into()),
        }
    }

    /// True for a session's handle of a multi-session host ([`FrameSink::tagged`]).
    pub fn is_tagged(&self) -> bool {
        self.tag.is_some()
    }

    /// The frame's line as sent: `line` with the session's tag first when this sink has one.
    fn tagged_line(&self, line: Vec<u8>) -> Vec<u8> {
        let Some(tag) = &self.tag else { return line };
        if line.first() != Some(&b'{') {
            return line;
        }
        let mut tagged = Vec::with_capacity(line.len() + tag.len() + 1);
        tagged.push(b'{');
        tagged.extend_from_slice(tag);
        if line.get(1) != Some(&b'}') {
            tagged.push(b',');
        }
        tagged.extend_from_slice(&line[1..]);
        tagged
    }

    /// Queues a frame; frames sent after the writer stopped are dropped.
    pub fn send(&self, frame: &Value) {
        self.send_line(frame, None);
    }

    /// Queues a frame that holds `permit` until it is written (a command's response holds its
    /// place among the commands in flight).
    pub fn send_holding(&self, frame: &Value, permit: OwnedSemaphorePermit) {
        self.send_line(frame, Some(permit));
    }

    fn send_line(&self, frame: &Value, permit: Option<OwnedSemaphorePermit>) {
        let line = serde_json::to_vec(frame).unwrap_or_else(|_| b"{}".to_vec());
        self.send_rendered(line, permit);
    }

    /// Queues a frame rendered already (without its newline), holding `permit` until it is
    /// written when one is given.
    pub fn send_rendered(&self, line: Vec<u8>, permit: Option<OwnedSemaphorePermit>) {
        let mut line = self.tagged_line(line);
        line.push(b'\n');
        let _ = self.tx.send((line, permit, None));
    }

    /// Queues a rendered frame (ending in a newline), waiting while the streaming budget is
    /// used up.
    pub async fn send_streaming(&self, line: Vec<u8>) {
        let line = self.tagged_line(line);
        let units = line.len().div_ceil(1024).clamp(1, STREAMING_BUDGET / 1024) as u32;
        let permit = self.budget.clone().acquire_many_owned(units).await.ok();
        let epoch = self.discard.load(Ordering::SeqCst);
        let _ = self
            .tx
            .send((line, permit, Some((self.discard.clone(), epoch))));
    }

    /// Drops the streaming frames this sink queued so far and not yet written (an aborted
    /// answer's updates); frames sent with [`FrameSink::send`] are kept.
    pub fn discard_streaming(&self) {
        self.discard.fetch_add(1, Ordering::SeqCst);
    }
}

/// Bursts (counted in flushes) after which the writer gives freed memory back to the system.
const TRIM_AFTER_FRAMES: usize = 10_000;

/// The writer thread; [`WriterHandle::finished`] resolves once everything queued is written.
pub struct WriterHandle {
    done: tokio::sync::oneshot::Receiver<()>,
}

impl WriterHandle {
    /// Waits until the writer has written and flushed every frame (all sinks dropped).
    pub async fn finished(self) {
        let _ = self.done.await;
    }
}

/// Frames written with one system call at most (the `writev` limit on Linux).
const BATCH_FRAMES: usize = 1024;
/// Bytes gathered into one batch at most.
const BATCH_BYTES: usize = 1 << 20;

/// Writes every line, gathered (`writev`): the frames are not copied into a buffer first.
fn write_lines(out: &mut impl Write, lines: &[&[u8]]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> = lines
        .iter()
        .map(|line| std::io::IoSlice::new(line))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match out.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => std::io::IoSlice::advance_slices(&mut rest, written),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Starts the writer on `out` in its own thread: the frames queued at that moment are written
/// as one gathered write (no copy into a buffer; a burst costs few system calls and no async
/// machinery per frame), then flushed. It ends when every sink is dropped, after flushing.
pub fn spawn<W: Write + Send + 'static>(out: W) -> (FrameSink, WriterHandle) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
    let (done_tx, done) = tokio::sync::oneshot::channel();
    let stale = |epoch: &Option<Epoch>| {
        epoch
            .as_ref()
            .is_some_and(|(counter, at)| *at < counter.load(Ordering::SeqCst))
    };
    let spawned = std::thread::Builder::new()
        .name("pith-stdout".into())
        .spawn(move || {
            let mut out = out;
            let mut written = 0usize;
            let mut batch: Vec<Frame> = Vec::new();
            while let Some(first) = rx.blocking_recv() {
                let mut bytes = first.0.len();
                batch.push(first);
                while bytes < BATCH_BYTES && batch.len() < BATCH_FRAMES {
                    let Ok(more) = rx.try_recv() else { break };
                    bytes += more.0.len();
                    batch.push(more);
                }
                let lines: Vec<&[u8]> = batch
                    .iter()
                    .filter(|(_, _, epoch)| !stale(epoch))
                    .map(|(line, _, _)| line.as_slice())
                    .collect();
                let result = write_lines(&mut out, &lines).and_then(|()| out.flush());
                // Written: the budget the frames held is free again.
                batch.clear();
                if result.is_err() {
                    break;
                }
                written += 1;
                if written >= TRIM_AFTER_FRAMES {
                    // The queue ran empty after a burst: give its memory back.
                    written = 0;
                    crate::memory::return_freed();
                }
            }
            let _ = out.flush();
            let _ = done_tx.send(());
        });
    if let Err(err) = spawned {
        tracing::error!("cannot start the stdout writer: {err}");
    }
    let budget = Arc::new(Semaphore::new(STREAMING_BUDGET / 1024));
    (
        FrameSink {
            tx,
            budget,
            discard: Arc::new(AtomicU64::new(0)),
            tag: None,
        },
        WriterHandle { done },
    )
}
