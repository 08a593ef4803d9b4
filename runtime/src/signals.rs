//! Signals a front-end ends on (RPC's SIGTERM/SIGINT, print mode's SIGTERM/SIGHUP), listened
//! to for the whole run: a signal that arrives while other work is done is kept, not lost. On
//! Windows, an interruption is Ctrl+C and a termination the console's close; there is no hangup.

/// A signal that ends a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// SIGTERM (Windows: the console closed).
    Terminate,
    /// SIGINT (Windows: Ctrl+C).
    Interrupt,
    /// SIGHUP (none on Windows).
    Hangup,
}

/// A listener for one signal: its receipts, forwarded by a task; `None` where it cannot be
/// listened to.
struct Listener(Option<tokio::sync::mpsc::UnboundedReceiver<()>>);

/// Forwards each receipt of a signal listener (anything with `recv() -> Option<()>`).
macro_rules! forward {
    ($listening:expr) => {
        match $listening {
            Ok(mut signal) => {
                let (sender, receipts) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(async move {
                    while signal.recv().await.is_some() {
                        if sender.send(()).is_err() {
                            break;
                        }
                    }
                });
                Listener(Some(receipts))
            }
            Err(_) => Listener(None),
        }
    };
}

impl Listener {
    #[cfg(unix)]
    fn new(ending: Ending) -> Listener {
        use tokio::signal::unix::{SignalKind, signal};
        forward!(signal(match ending {
            Ending::Terminate => SignalKind::terminate(),
            Ending::Interrupt => SignalKind::interrupt(),
            Ending::Hangup => SignalKind::hangup(),
        }))
    }

    #[cfg(windows)]
    fn new(ending: Ending) -> Listener {
        use tokio::signal::windows;
        match ending {
            Ending::Interrupt => forward!(windows::ctrl_c()),
            Ending::Terminate => forward!(windows::ctrl_close()),
            Ending::Hangup => Listener(None),
        }
    }

    async fn next(&mut self) {
        let received = match &mut self.0 {
            Some(receipts) => receipts.recv().await.is_some(),
            None => false,
        };
        if !received {
            std::future::pending::<()>().await;
        }
    }
}

/// Listeners for two signals.
pub struct Signals {
    first: (Listener, u8),
    second: (Listener, u8),
}

impl Signals {
    /// Listens for `first` and `second`, each with the exit code it calls for (128 + the
    /// signal's number).
    pub fn listen(first: (Ending, u8), second: (Ending, u8)) -> Signals {
        Signals {
            first: (Listener::new(first.0), first.1),
            second: (Listener::new(second.0), second.1),
        }
    }

    /// Resolves on the next of the two; its exit code.
    pub async fn next(&mut self) -> u8 {
        tokio::select! {
            _ = self.first.0.next() => self.first.1,
            _ = self.second.0.next() => self.second.1,
        }
    }
}
