//! Signals a front-end ends on (RPC's SIGTERM/SIGINT, print mode's SIGTERM/SIGHUP), listened
//! to for the whole run: a signal that arrives while other work is done is kept, not lost.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Listeners for two signals.
pub struct Signals {
    first: (Option<Signal>, u8),
    second: (Option<Signal>, u8),
}

impl Signals {
    /// Listens for `first` and `second`, each with the exit code it calls for (128 + the
    /// signal's number).
    pub fn listen(first: (SignalKind, u8), second: (SignalKind, u8)) -> Signals {
        Signals {
            first: (signal(first.0).ok(), first.1),
            second: (signal(second.0).ok(), second.1),
        }
    }

    /// Resolves on the next of the two; its exit code.
    pub async fn next(&mut self) -> u8 {
        async fn on(signal: &mut Option<Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = on(&mut self.first.0) => self.first.1,
            _ = on(&mut self.second.0) => self.second.1,
        }
    }
}
