//! What every plugin can ask of the host: logging, granted config values, the workspace.

use crate::bindings::imports::pith::plugin0_1_0::host as wit;

pub use wit::ConfigError;

/// Writes a line to pith's log (stderr) at `info` level, tagged with the plugin's id.
pub fn info(message: &str) {
    wit::log(wit::LogLevel::Info, message);
}

/// Writes a line to pith's log at `warn` level.
pub fn warn(message: &str) {
    wit::log(wit::LogLevel::Warn, message);
}

/// Writes a line to pith's log at `debug` level.
pub fn debug(message: &str) {
    wit::log(wit::LogLevel::Debug, message);
}

/// Writes a line to pith's log at `error` level.
pub fn error(message: &str) {
    wit::log(wit::LogLevel::Error, message);
}

/// The value of a config key the user granted this plugin; `Ok(None)` when granted but unset,
/// `Err(ConfigError::NotGranted)` when the manifest did not declare it or the user did not grant it.
pub fn config(key: &str) -> Result<Option<String>, ConfigError> {
    wit::get_config(key)
}

/// The workspace as this plugin sees it, or `None` when it was granted no workspace.
pub fn workspace_dir() -> Option<String> {
    wit::workspace_dir()
}

/// Resolves a path the model gave (relative to the workspace, or absolute) to the path the
/// plugin opens. A leading `@` is stripped and `~` is the home directory, as pi does.
pub fn resolve_path(path: &str) -> std::path::PathBuf {
    let path = path.strip_prefix('@').unwrap_or(path);
    // `~` and `~/…` are the home directory, as in pi (and the shell): never a folder named `~`.
    let home = std::env::var("HOME").ok().filter(|home| !home.is_empty());
    let expanded = match (path, &home) {
        ("~", Some(home)) => home.clone(),
        (_, Some(home)) if path.starts_with("~/") => format!("{home}{}", &path[1..]),
        _ => path.to_string(),
    };
    let candidate = std::path::Path::new(&expanded);
    if candidate.is_absolute() {
        return candidate.to_path_buf();
    }
    match workspace_dir() {
        Some(dir) => std::path::Path::new(&dir).join(candidate),
        None => candidate.to_path_buf(),
    }
}

/// The text of a filesystem error on `path` (as the model gave it), as a tool should report
/// it: the path outside the workspace, a plugin without a workspace grant, or the error
/// without its WASI error number ("No such file or directory", not "(os error 44)").
pub fn file_error(path: &str, err: &std::io::Error) -> String {
    let Some(workspace) = workspace_dir() else {
        return format!(
            "Cannot read {path}: this plugin has no workspace grant (add `workspace = \"read\"` \
             under [capabilities] in its pith.toml)"
        );
    };
    let resolved = resolve_model_path(path);
    if !resolved.starts_with(&workspace) {
        return format!(
            "Cannot read {path}: {} is outside the workspace {workspace}",
            resolved.display()
        );
    }
    if err.kind() == std::io::ErrorKind::PermissionDenied {
        return format!(
            "Cannot read {path}: it leads outside the workspace {workspace} (a link), or the \
             sandbox refuses it"
        );
    }
    format!("Cannot read {path}: {}", without_errno(err))
}

/// An I/O error's text without the WASI error number the standard library appends.
pub fn without_errno(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// An I/O error as Node words it (pi's tools run on Node, so the model knows these texts):
/// `EACCES: permission denied, open '/etc/x'`. Kinds Node has no code for keep the standard
/// library's text, without the WASI error number.
pub fn node_error(err: &std::io::Error, syscall: &str, path: &str) -> String {
    use std::io::ErrorKind;
    let code = match err.kind() {
        ErrorKind::NotFound => "ENOENT: no such file or directory",
        ErrorKind::PermissionDenied => "EACCES: permission denied",
        ErrorKind::AlreadyExists => "EEXIST: file already exists",
        ErrorKind::IsADirectory => "EISDIR: illegal operation on a directory",
        ErrorKind::NotADirectory => "ENOTDIR: not a directory",
        ErrorKind::ReadOnlyFilesystem => "EROFS: read-only file system",
        ErrorKind::StorageFull => "ENOSPC: no space left on device",
        ErrorKind::DirectoryNotEmpty => "ENOTEMPTY: directory not empty",
        ErrorKind::InvalidFilename => "ENAMETOOLONG: name too long",
        _ => return format!("{}: '{path}'", without_errno(err)),
    };
    format!("{code}, {syscall} '{path}'")
}

/// Resolves a path the model gave as pi's tools do: a leading `@` is stripped, Unicode spaces
/// become plain spaces, and a relative path is taken from the workspace. The result is the
/// absolute path the plugin opens (inside the sandbox, the workspace's own path).
pub fn resolve_model_path(path: &str) -> std::path::PathBuf {
    let cleaned: String = path
        .strip_prefix('@')
        .unwrap_or(path)
        .chars()
        .map(|c| {
            if matches!(
                c,
                '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
            ) {
                ' '
            } else {
                c
            }
        })
        .collect();
    normalize(&resolve_path(&cleaned))
}

/// Removes `.` and `..` components lexically (so error messages name the path pi would).
fn normalize(path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
