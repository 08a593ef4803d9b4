//! Typed errors of the plugin host.

use std::path::PathBuf;

/// Why a plugin was refused at load. Names the file and the reason; other plugins still load.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{path}: {reason}")]
pub struct LoadError {
    /// The manifest or component file (or `<embedded>/<name>`).
    pub path: String,
    /// Why it was refused.
    pub reason: String,
}

impl LoadError {
    /// A load error for a file.
    pub fn new(path: impl Into<PathBuf>, reason: impl Into<String>) -> LoadError {
        LoadError {
            path: path.into().display().to_string(),
            reason: reason.into(),
        }
    }
}

/// Why a call into a plugin failed. The runtime keeps serving after every one of these.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CallError {
    /// No loaded plugin provides this.
    #[error("{0}")]
    NotFound(String),
    /// The plugin could not be compiled or instantiated.
    #[error("plugin {plugin} could not be loaded: {reason}")]
    Load {
        /// The plugin's id.
        plugin: String,
        /// Why.
        reason: String,
    },
    /// The guest ran longer than its deadline (time in host calls excluded).
    #[error("plugin {plugin} exceeded its deadline of {deadline_ms} ms")]
    Deadline {
        /// The plugin's id.
        plugin: String,
        /// The deadline.
        deadline_ms: u64,
    },
    /// The call took longer than its wall-clock timeout and was dropped.
    #[error("plugin {plugin} timed out after {timeout_ms} ms")]
    Timeout {
        /// The plugin's id.
        plugin: String,
        /// The timeout.
        timeout_ms: u64,
    },
    /// The guest tried to grow its memory past the cap.
    #[error("plugin {plugin} exceeded its memory limit of {limit_mb} MiB")]
    MemoryLimit {
        /// The plugin's id.
        plugin: String,
        /// The cap.
        limit_mb: u64,
    },
    /// The guest overflowed its stack.
    #[error("plugin {plugin} overflowed its stack")]
    StackOverflow {
        /// The plugin's id.
        plugin: String,
    },
    /// The guest trapped (a panic, an unreachable, a bad access…).
    #[error("plugin {plugin} crashed: {message}")]
    Trap {
        /// The plugin's id.
        plugin: String,
        /// The trap, with the guest's last stderr line (its panic message) when there is one.
        message: String,
    },
    /// The user aborted the call and it did not wind down in time.
    #[error("plugin {plugin} was cancelled")]
    Cancelled {
        /// The plugin's id.
        plugin: String,
    },
    /// Every instance slot is in use.
    #[error("plugin {plugin} could not start: {reason}")]
    Instantiate {
        /// The plugin's id.
        plugin: String,
        /// Why.
        reason: String,
    },
}
