//! The single writer that owns stdout: every frame (response, event, UI request) is sent here
//! and written whole, followed by LF, in the order received.
//!
//! Streaming frames are sent with [`FrameSink::send_streaming`], which waits while more than
//! [`STREAMING_BUDGET`] bytes are queued: a slow reader slows the stream down instead of growing
//! pith's memory. Other frames never wait.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Bytes of streaming frames that may wait in the queue.
pub const STREAMING_BUDGET: usize = 4 << 20;

type Frame = (Vec<u8>, Option<OwnedSemaphorePermit>);

/// A handle for sending frames to the writer.
#[derive(Clone)]
pub struct FrameSink {
    tx: mpsc::UnboundedSender<Frame>,
    budget: Arc<Semaphore>,
}

impl FrameSink {
    /// Queues a frame; frames sent after the writer stopped are dropped.
    pub fn send(&self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        let _ = self.tx.send((line, None));
    }

    /// Queues a rendered frame (ending in a newline), waiting while the streaming budget is
    /// used up.
    pub async fn send_streaming(&self, line: Vec<u8>) {
        let units = line.len().div_ceil(1024).clamp(1, STREAMING_BUDGET / 1024) as u32;
        let permit = self.budget.clone().acquire_many_owned(units).await.ok();
        let _ = self.tx.send((line, permit));
    }
}

/// Starts the writer task on `out`; it ends when every sink is dropped, after flushing.
pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(
    mut out: W,
) -> (FrameSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
    let handle = tokio::spawn(async move {
        while let Some((line, permit)) = rx.recv().await {
            if out.write_all(&line).await.is_err() {
                return;
            }
            drop(permit);
            // Write whatever else is queued before flushing, so bursts cost one flush.
            while let Ok((more, permit)) = rx.try_recv() {
                if out.write_all(&more).await.is_err() {
                    return;
                }
                drop(permit);
            }
            if out.flush().await.is_err() {
                return;
            }
        }
    });
    let budget = Arc::new(Semaphore::new(STREAMING_BUDGET / 1024));
    (FrameSink { tx, budget }, handle)
}
