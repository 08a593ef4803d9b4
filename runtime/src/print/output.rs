//! What a one-shot run prints: the choice `-p`, `--mode text` and `--mode json` make, read by
//! the command line and by the run itself.

/// What a one-shot run prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The last answer's text (`-p`, `--mode text`).
    Text,
    /// The session header and every event as JSON lines (`--mode json`).
    Json,
}
