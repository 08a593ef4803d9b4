//! The sessions on disk as a host manages them: `list_sessions` pages through summaries (newest
//! first) and `delete_session` removes a file, never the open one nor one outside the sessions
//! directory.

use std::path::{Path, PathBuf};

use super::answers::{Deleted, SessionPage};
use super::{Session, SessionError};
use crate::agent::session::index::{self as session_index, MAX_PAGE};

/// Summaries per page when the host does not say.
const DEFAULT_PAGE: usize = 50;

impl Session {
    /// `list_sessions {scope?, limit?, cursor?}` → `{"sessions": [...], "nextCursor"?}`:
    /// `scope` `cwd` (the default: this working directory's sessions) or `all` (every working
    /// directory's, in pi's layout), newest first.
    pub fn list_sessions(
        &self,
        scope: Option<&str>,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<SessionPage, SessionError> {
        let dirs = self.session_dirs(scope.unwrap_or("cwd"))?;
        let limit = match limit {
            None => DEFAULT_PAGE,
            Some(n) if (1..=MAX_PAGE as u64).contains(&n) => n as usize,
            Some(n) => {
                return Err(SessionError::BadLimit {
                    max: MAX_PAGE,
                    got: n,
                });
            }
        };
        let start = match cursor {
            None => 0,
            Some(text) => text
                .parse::<usize>()
                .map_err(|_| SessionError::BadCursor(text.to_string()))?,
        };
        let files = session_index::session_files(&dirs);
        let mut sessions = Vec::new();
        let mut next = None;
        for (index, (modified, path)) in files.iter().enumerate().skip(start) {
            if sessions.len() == limit {
                next = Some(index);
                break;
            }
            if let Some(summary) = session_index::summarize(path, *modified) {
                sessions.push(summary.to_json());
            }
        }
        Ok(SessionPage {
            sessions,
            next_cursor: next.map(|next| next.to_string()),
        })
    }

    /// `delete_session {path}`: removes a session file of the sessions directory (any working
    /// directory's); refuses the open session, other files, and paths elsewhere.
    pub fn delete_session(&self, path: &str) -> Result<Deleted, SessionError> {
        let file = Path::new(path)
            .canonicalize()
            .map_err(|_| SessionError::NoSessionFile(path.to_string()))?;
        let roots: Vec<PathBuf> = self
            .session_dirs("all")?
            .iter()
            .filter_map(|dir| dir.canonicalize().ok())
            .collect();
        if !file
            .parent()
            .is_some_and(|dir| roots.iter().any(|r| r == dir))
        {
            return Err(SessionError::OutsideSessions(path.to_string()));
        }
        let open = self
            .shared()
            .state()
            .store
            .path()
            .and_then(|p| p.canonicalize().ok());
        if open.as_deref() == Some(file.as_path()) {
            return Err(SessionError::DeleteOpen);
        }
        if session_index::summarize(&file, 0).is_none() {
            return Err(SessionError::NotASessionFile(path.to_string()));
        }
        std::fs::remove_file(&file).map_err(|err| SessionError::DeleteFailed {
            path: path.to_string(),
            reason: err.to_string(),
        })?;
        Ok(Deleted {
            deleted: file.display().to_string(),
        })
    }

    /// The directories `scope` covers: this working directory's sessions directory, or for
    /// `all` every working directory's beside it (pi's `--<cwd>--` layout; a `--session-dir`
    /// is its own only one).
    fn session_dirs(&self, scope: &str) -> Result<Vec<PathBuf>, SessionError> {
        let Some(dir) = self.shared().sessions_dir() else {
            return Err(SessionError::NotSaved);
        };
        match scope {
            "cwd" => Ok(vec![dir]),
            "all" => {
                let per_cwd = dir
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.len() >= 4 && n.starts_with("--") && n.ends_with("--"));
                let Some(root) = dir.parent().filter(|_| per_cwd) else {
                    return Ok(vec![dir]);
                };
                let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
                    .map(|entries| {
                        entries
                            .filter_map(|e| e.ok())
                            .map(|e| e.path())
                            .filter(|p| p.is_dir())
                            .filter(|p| {
                                p.file_name()
                                    .and_then(|n| n.to_str())
                                    .is_some_and(|n| n.starts_with("--") && n.ends_with("--"))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
                Ok(dirs)
            }
            other => Err(SessionError::UnknownScope(other.to_string())),
        }
    }
}
