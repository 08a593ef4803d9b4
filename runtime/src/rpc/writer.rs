//! The single writer that owns stdout: every frame (response, event, UI request) is sent here
//! and written whole, followed by LF, in the order received.

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// A handle for sending frames to the writer.
#[derive(Clone)]
pub struct FrameSink {
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl FrameSink {
    /// Queues a frame; frames sent after the writer stopped are dropped.
    pub fn send(&self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap_or_else(|_| b"{}".to_vec());
        line.push(b'\n');
        let _ = self.tx.send(line);
    }
}

/// Starts the writer task on `out`; it ends when every sink is dropped, after flushing.
pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(
    mut out: W,
) -> (FrameSink, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let handle = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if out.write_all(&line).await.is_err() {
                return;
            }
            // Write whatever else is queued before flushing, so bursts cost one flush.
            while let Ok(more) = rx.try_recv() {
                if out.write_all(&more).await.is_err() {
                    return;
                }
            }
            if out.flush().await.is_err() {
                return;
            }
        }
    });
    (FrameSink { tx }, handle)
}
