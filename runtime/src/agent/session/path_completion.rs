//! Completing a file path in a command's argument (`get_argument_completions` for prompt
//! templates and skills): the last word typed is a path relative to the working directory (or
//! absolute, or under `~/`), completed from its directory's entries — directories with a
//! trailing `/`, dotfiles only when the word starts with a dot.

use std::path::{Path, PathBuf};

/// Completions offered at most.
pub const MAX_COMPLETIONS: usize = 100;

/// Matching entries looked at, at most (a huge directory costs no more than this).
const MAX_SCANNED: usize = 10_000;

/// One completion of a command's argument.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Completion {
    /// The whole argument, completed.
    pub value: String,
    /// What a menu shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A line about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The completions of the last word of `prefix` as a path from `cwd`: each `value` is the
/// whole argument with that word completed.
pub fn complete(cwd: &Path, prefix: &str) -> Vec<Completion> {
    let start = prefix.rfind(char::is_whitespace).map_or(0, |i| {
        i + prefix[i..].chars().next().map_or(1, char::len_utf8)
    });
    let (before, word) = prefix.split_at(start);
    let (mention, word) = match word.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", word),
    };
    let (dir_part, name_part) = match word.rfind('/') {
        Some(slash) => word.split_at(slash + 1),
        None => ("", word),
    };
    let Some(dir) = directory(cwd, dir_part) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    // Names first: only the entries that match are looked at further (a link is followed to see
    // whether it is a directory; nothing else costs a `stat`).
    let mut names: Vec<(String, bool)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e)))
        .filter(|(name, _)| name.starts_with(name_part))
        .filter(|(name, _)| !name.starts_with('.') || name_part.starts_with('.'))
        .take(MAX_SCANNED)
        .map(|(name, e)| {
            let is_dir = match e.file_type() {
                Ok(kind) if kind.is_symlink() => {
                    std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir())
                }
                Ok(kind) => kind.is_dir(),
                Err(_) => false,
            };
            (name, is_dir)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .take(MAX_COMPLETIONS)
        .map(|(name, is_dir)| {
            let shown = if is_dir { format!("{name}/") } else { name };
            Completion {
                value: format!("{before}{mention}{dir_part}{shown}"),
                label: Some(shown),
                description: None,
            }
        })
        .collect()
}

/// The directory `dir_part` names: from `cwd`, absolute, or under the home directory.
fn directory(cwd: &Path, dir_part: &str) -> Option<PathBuf> {
    if let Some(rest) = dir_part.strip_prefix("~/") {
        return std::env::var_os("HOME").map(|home| PathBuf::from(home).join(rest));
    }
    if dir_part.is_empty() {
        return Some(cwd.to_path_buf());
    }
    Some(cwd.join(dir_part))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word_completes_from_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("notes.md"), "").unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        let values = |prefix: &str| -> Vec<String> {
            complete(dir.path(), prefix)
                .iter()
                .map(|c| c.value.clone())
                .collect()
        };
        assert_eq!(values("review n"), ["review notes.md"]);
        assert_eq!(values(""), ["notes.md", "src/"]);
        assert_eq!(values("@src/m"), ["@src/main.rs"]);
        assert_eq!(values("."), [".env"]);
        assert!(values("missing/x").is_empty());
    }
}
