//! Why a sandboxed access failed, in words a user can act on. pith tells its first-party tools
//! their sandbox in the environment (`PITH_SANDBOX_MODE`, and the newline-separated
//! `PITH_SANDBOX_WRITABLE` and `PITH_SANDBOX_DENY_READ`); a tool whose read or write failed asks
//! here whether the sandbox is why, and reports that instead of a bare "not found". The host
//! enforces the sandbox; this only explains it, and the host's own messages come from here too.

use std::path::{Path, PathBuf};

/// The message for a write the sandbox does not allow in `mode`.
pub fn write_denied(path: &Path, mode: &str) -> String {
    let path = path.display();
    if mode == "read-only" {
        format!(
            "write to {path} denied: sandbox mode read-only allows no writes (run with --sandbox workspace-write or --sandbox full-access)"
        )
    } else {
        format!(
            "write to {path} denied: outside the workspace in sandbox mode {mode} (add it to sandbox.writableRoots or run with --sandbox full-access)"
        )
    }
}

/// The message for a read of a path on the deny list.
pub fn read_denied(path: &Path) -> String {
    format!(
        "read of {} denied: it is on the sandbox's deny list (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
        path.display()
    )
}

fn paths(key: &str) -> Vec<PathBuf> {
    std::env::var(key)
        .map(|value| {
            value
                .lines()
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The sandbox mode this tool runs under, when pith said (`None`: no sandbox to explain).
pub fn mode() -> Option<String> {
    std::env::var("PITH_SANDBOX_MODE")
        .ok()
        .filter(|mode| mode != "full-access")
}

/// Why reading `path` (absolute) failed, when the sandbox's deny list is the reason: the path
/// is on it, or it is (or sits directly in) a directory that holds a denied path — the file
/// tools reach the directories there, not the directory itself or its files.
pub fn explain_read(path: &Path) -> Option<String> {
    mode()?;
    if paths("PITH_SANDBOX_WRITABLE")
        .iter()
        .any(|w| path.starts_with(w))
    {
        return None;
    }
    let denied = paths("PITH_SANDBOX_DENY_READ");
    if denied.iter().any(|d| path.starts_with(d)) {
        return Some(read_denied(path));
    }
    let holder = std::iter::once(path)
        .chain(path.parent())
        .find(|dir| denied.iter().any(|d| d.starts_with(dir)))?;
    Some(format!(
        "read of {} denied: {} holds a path on the sandbox's deny list, so the file tools reach only the directories in it, not its files (the shell can read it; --sandbox full-access lifts this)",
        path.display(),
        holder.display()
    ))
}

/// Why writing `path` (absolute) failed, when the sandbox mode is the reason.
pub fn explain_write(path: &Path) -> Option<String> {
    let mode = mode()?;
    let writable = paths("PITH_SANDBOX_WRITABLE");
    (!writable.iter().any(|w| path.starts_with(w))).then(|| write_denied(path, &mode))
}

/// A one-line hint for a shell command that failed with what looks like a sandbox denial
/// (`Permission denied`, `Read-only file system`, `Operation not permitted`), naming what the
/// mode allows and how to change it; `None` when no sandbox applies or nothing looks denied.
pub fn shell_hint(output: &str) -> Option<String> {
    let mode = mode()?;
    let denied = [
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
    ]
    .iter()
    .any(|sign| output.contains(sign));
    if !denied {
        return None;
    }
    let writable: Vec<String> = paths("PITH_SANDBOX_WRITABLE")
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let writes = if writable.is_empty() {
        "no writes".to_string()
    } else {
        format!("writes only in {}", writable.join(", "))
    };
    let network = if std::env::var("PITH_SANDBOX_NETWORK").as_deref() == Ok("false") {
        ", no network"
    } else {
        ""
    };
    Some(format!(
        "[sandbox] this may be the sandbox: mode {mode} allows {writes}{network}, and no reads of the deny list (sandbox.writableRoots, sandbox.network, sandbox.denyRead; --sandbox full-access lifts it)"
    ))
}

/// A hint for a tool error that reads like a filesystem denial (a WASI error number such as
/// `os error 44`, 63 or 76) when pith said the plugin has no workspace grant or a read-only one
/// (`PITH_WORKSPACE_ACCESS`): what to add to the manifest. `None` otherwise.
pub fn grant_hint(message: &str) -> Option<String> {
    let access = std::env::var("PITH_WORKSPACE_ACCESS").ok()?;
    let denial = [
        "os error 2)",
        "os error 44)",
        "os error 63)",
        "os error 76)",
        "os error 69)",
        // The same errors without their numbers (`ToolError::from(io::Error)` drops them).
        "No such file or directory",
        "Operation not permitted",
        "Permission denied",
        "Read-only file system",
    ]
    .iter()
    .any(|code| message.contains(code));
    if !denial {
        return None;
    }
    match access.as_str() {
        "none" => Some(
            " (this plugin has no workspace grant: add `workspace = \"read\"` or `\"write\"` under [capabilities] in its pith.toml)"
                .into(),
        ),
        // A read-only grant refuses writes only: a failed read is not about the grant.
        "read" if message.contains("os error 69)") || message.to_ascii_lowercase().contains("writ") => Some(
            " (this plugin's workspace grant is read-only: `workspace = \"write\"` under [capabilities] in its pith.toml lets it write)"
                .into(),
        ),
        _ => None,
    }
}
