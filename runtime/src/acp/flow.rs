//! Flow control of the streamed chunks: the sinks count the bytes of the chunks they queue, the
//! transport counts the bytes it writes, and a sink waits while more than the streaming budget
//! (RPC mode's) is queued and unwritten. A slow client slows the stream down instead of growing
//! pith's memory (the crate's outgoing queue has no bound of its own).

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

use crate::rpc::writer::STREAMING_BUDGET;

/// What a notification carries besides its text (the session id, the update's keys).
const FRAME_OVERHEAD: u64 = 160;

/// Queued and written bytes, shared by the sinks and the transport.
#[derive(Default)]
pub(super) struct Flow {
    queued: AtomicU64,
    written: AtomicU64,
    drained: Notify,
}

impl Flow {
    /// A chunk of `text` was queued.
    pub fn queued(&self, text: &str) {
        self.queued
            .fetch_add(text.len() as u64 + FRAME_OVERHEAD, Ordering::SeqCst);
    }

    /// The transport is writing a line of `bytes`.
    pub fn written(&self, bytes: usize) {
        self.written.fetch_add(bytes as u64, Ordering::SeqCst);
        self.drained.notify_waiters();
    }

    fn backlog(&self) -> u64 {
        self.queued
            .load(Ordering::SeqCst)
            .saturating_sub(self.written.load(Ordering::SeqCst))
    }

    /// Waits until the backlog is within the budget.
    pub async fn ready(&self) {
        loop {
            let drained = self.drained.notified();
            if self.backlog() <= STREAMING_BUDGET as u64 {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_backlog_over_the_budget_waits_for_the_writer() {
        let flow = std::sync::Arc::new(Flow::default());
        let big = "x".repeat(STREAMING_BUDGET + 1);
        flow.queued(&big);
        let waiting = tokio::spawn({
            let flow = flow.clone();
            async move { flow.ready().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        flow.written(big.len() + 1000);
        tokio::time::timeout(std::time::Duration::from_secs(1), waiting)
            .await
            .expect("drained")
            .unwrap();
    }
}
