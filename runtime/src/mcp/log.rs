//! `<agent dir>/mcp.log`: what the MCP servers say, as pi 1.5.2 writes it — each logging
//! notification as `<ISO time> [<server>] <level>[ <logger>:] <data>` (data that is not a
//! string as JSON, continuation lines indented) — and, beyond pi, each line a server writes to
//! its standard error (level `stderr`). Past [`ROTATE_AT`] the file is renamed `mcp.log.1`
//! first, so it never grows without bound. Failures to write are ignored: the log never stops
//! a server.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

/// The size past which the log is rotated (pi's 5 MiB).
pub const ROTATE_AT: u64 = 5 << 20;

/// The MCP log of one agent directory.
#[derive(Debug)]
pub struct McpLog {
    path: Option<PathBuf>,
    lock: Mutex<()>,
}

impl McpLog {
    /// The log at `path`.
    pub fn at(path: impl Into<PathBuf>) -> McpLog {
        McpLog {
            path: Some(path.into()),
            lock: Mutex::new(()),
        }
    }

    /// A log that writes nothing.
    pub fn none() -> McpLog {
        McpLog {
            path: None,
            lock: Mutex::new(()),
        }
    }

    /// Where it is written.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one entry.
    pub fn write(&self, server: &str, level: &str, logger: Option<&str>, data: &Value) {
        let Some(path) = &self.path else { return };
        let text = match data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let logger = logger.map(|l| format!(" {l}:")).unwrap_or_default();
        let line = format!(
            "{} [{server}] {level}{logger} {}\n",
            crate::time::iso(crate::time::now_millis()),
            text.trim_end_matches('\n').replace('\n', "\n    ")
        );
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if std::fs::metadata(path).is_ok_and(|m| m.len() > ROTATE_AT) {
            let _ = std::fs::rename(path, path.with_extension("log.1"));
        }
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = file.write_all(line.as_bytes());
        }
    }
}
