//! Where a multi-session host finds a session by its id: the route record written when it was
//! parked or closed (the file it had reached: `new_session`, `fork` or `switch_session` inside a
//! session move it to another file), else the file named `<time>_<id>.jsonl`. Both live in the
//! sessions directory, so another pith process that sees the same directory (another machine
//! on a shared volume) resumes the session exactly.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The folder of route records inside the sessions root (pi lists only `.jsonl` files, so it
/// reads nothing here).
const ROUTES: &str = ".pith-routes";

/// The longest session id a host may choose.
pub const MAX_ID_LEN: usize = 128;

/// Checks a caller-chosen session id: it names files, so it is 1 to [`MAX_ID_LEN`] letters,
/// digits, `-`, `_` and `.`, starting with a letter or digit.
pub fn check_id(id: &str) -> Result<(), String> {
    let starts_well = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let well_formed = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if starts_well && well_formed && id.len() <= MAX_ID_LEN {
        Ok(())
    } else {
        Err(format!(
            "Invalid sessionId {id:?}: use 1 to {MAX_ID_LEN} letters, digits, '-', '_' or '.', \
             starting with a letter or digit (it names the session's file)"
        ))
    }
}

/// Where sessions are looked for: the sessions root (`--session-dir` and the like, or the agent
/// directory's `sessions/`, whose folders are each a working directory's) and its folders.
#[derive(Debug, Clone)]
pub struct SessionsRoot {
    root: PathBuf,
    /// True when the root holds the session files itself (a sessions directory set by the
    /// user), false when each folder in it holds a working directory's.
    flat: bool,
}

impl SessionsRoot {
    /// A root holding session files itself (`--session-dir`, `sessionDir`).
    pub fn flat(root: PathBuf) -> SessionsRoot {
        SessionsRoot { root, flat: true }
    }

    /// The agent directory's `sessions/`: one folder per working directory.
    pub fn per_folder(root: PathBuf) -> SessionsRoot {
        SessionsRoot { root, flat: false }
    }

    /// The root, for messages.
    pub fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn route_file(&self, id: &str) -> PathBuf {
        self.root.join(ROUTES).join(format!("{id}.json"))
    }

    /// The file of session `id`: its route record's when that file still exists, else the
    /// file named for the id.
    pub fn find(&self, id: &str) -> Option<PathBuf> {
        self.routed(id).or_else(|| self.named(id))
    }

    fn routed(&self, id: &str) -> Option<PathBuf> {
        let text = std::fs::read_to_string(self.route_file(id)).ok()?;
        let record: Value = serde_json::from_str(&text).ok()?;
        let file = PathBuf::from(record.get("file")?.as_str()?);
        file.is_file().then_some(file)
    }

    fn named(&self, id: &str) -> Option<PathBuf> {
        let wanted = format!("_{id}.jsonl");
        let in_folder = |folder: &Path| {
            std::fs::read_dir(folder)
                .ok()?
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .find(|path| {
                    path.file_name()
                        .and_then(|name| name.to_str())
                        .and_then(|name| name.split_once('_'))
                        .is_some_and(|(_, rest)| format!("_{rest}") == wanted)
                })
        };
        if self.flat {
            return in_folder(&self.root);
        }
        std::fs::read_dir(&self.root)
            .ok()?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.is_dir())
            .find_map(|folder| in_folder(&folder))
    }

    /// Records that session `id` is now held in `file` (when it was parked or closed), so the
    /// next process resumes that file.
    pub fn record(&self, id: &str, file: &Path) -> std::io::Result<()> {
        let path = self.route_file(id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let record = json!({"sessionId": id, "file": file.display().to_string()});
        let temporary = path.with_extension("json.tmp");
        std::fs::write(&temporary, record.to_string())?;
        std::fs::rename(&temporary, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_cannot_name_a_file_are_refused() {
        assert!(check_id("a-1_b.c").is_ok());
        assert!(check_id(&"x".repeat(MAX_ID_LEN)).is_ok());
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-x",
            "a b",
            &"x".repeat(MAX_ID_LEN + 1),
        ] {
            let error = check_id(bad).unwrap_err();
            assert!(error.contains("Invalid sessionId"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_session_is_found_by_its_route_record_then_by_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("--work--");
        std::fs::create_dir_all(&folder).unwrap();
        let named = folder.join("2026-11-29T10-00-00-000Z_abc.jsonl");
        std::fs::write(&named, "{}\n").unwrap();
        std::fs::write(folder.join("2026-11-29T10-00-00-000Z_abcd.jsonl"), "{}\n").unwrap();
        let root = SessionsRoot::per_folder(dir.path().to_path_buf());
        assert_eq!(root.find("abc"), Some(named.clone()), "the exact id");
        assert_eq!(root.find("ab"), None, "not a prefix");
        let moved = folder.join("2026-11-29T11-00-00-000Z_other.jsonl");
        std::fs::write(&moved, "{}\n").unwrap();
        root.record("abc", &moved).unwrap();
        assert_eq!(root.find("abc"), Some(moved.clone()), "the route record");
        std::fs::remove_file(&moved).unwrap();
        assert_eq!(root.find("abc"), Some(named), "a record of a file gone");
        let flat = SessionsRoot::flat(folder.clone());
        assert!(flat.find("abcd").is_some());
    }
}
