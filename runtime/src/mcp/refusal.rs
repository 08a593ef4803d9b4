//! What pith adds to a stdio server's error when its sandbox refused the server something: the
//! server, the path (when the error names one), the mode, and the setting that lifts it (in
//! the user's own `mcp.json`, never a project's).

use std::path::{Path, PathBuf};

use crate::sandbox::{SandboxMode, SandboxPolicy};

/// Texts of a refusal by the kernel, as servers in any language report it.
const MARKERS: &[&str] = &[
    "Permission denied",
    "EACCES",
    "EPERM",
    "Operation not permitted",
    "Read-only file system",
    "EROFS",
];

/// The first absolute path the error names.
fn named_path(text: &str) -> Option<PathBuf> {
    for quote in ['\'', '"'] {
        let mut parts = text.split(quote);
        parts.next();
        for (i, part) in parts.enumerate() {
            if i % 2 == 0 && part.starts_with('/') && !part.contains('\n') {
                return Some(PathBuf::from(part));
            }
        }
    }
    text.split_whitespace()
        .map(|w| w.trim_end_matches([',', '.', ':', ';', ')']))
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(PathBuf::from)
}

/// pith's note for an error of `server` under `policy`, when it reads as a sandbox refusal.
pub fn note(server: &str, policy: &SandboxPolicy, error: &str, user_file: &Path) -> Option<String> {
    if policy.mode == SandboxMode::FullAccess || !MARKERS.iter().any(|m| error.contains(m)) {
        return None;
    }
    let what = match named_path(error) {
        Some(path) if policy.read_denied(&path) => format!(
            "{} is on the sandbox's deny list (sandbox.denyRead)",
            path.display()
        ),
        Some(path) if !policy.may_write(&path) => format!(
            "{} is outside what the {} mode lets it write (the workspace, the writable roots and the toolchain caches)",
            path.display(),
            policy.mode.as_str()
        ),
        Some(path) => format!("{} was refused", path.display()),
        None => "the kernel refused an access".to_string(),
    };
    Some(format!(
        "pith: MCP server \"{server}\" runs in pith's sandbox ({}): {what}. To lift it for this server only, add \"sandbox\": {{\"writableRoots\": [\"<dir>\"]}} or \"sandbox\": \"full-access\" to its entry in {} (a project's mcp.json cannot).",
        policy.mode.as_str(),
        user_file.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_as_servers_print_them() {
        assert_eq!(
            named_path("[Errno 13] Permission denied: '/x/no.txt'"),
            Some(PathBuf::from("/x/no.txt"))
        );
        assert_eq!(
            named_path("EACCES: permission denied, open /y/z.txt"),
            Some(PathBuf::from("/y/z.txt"))
        );
        assert_eq!(named_path("Permission denied"), None);
    }
}
