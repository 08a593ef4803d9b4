//! `pith:plugin/search`: the host's walk and search ([`crate::file_search`]) for plugins,
//! confined to what the plugin may read. The root is resolved lexically against the
//! directories preopened for the guest, then again after resolving links: a root that is
//! (or passes through) a link leading outside them is refused. Below the root nothing can
//! leave it: the walk never follows a link.

use std::path::{Component, Path, PathBuf};

use crate::file_search::{self, EntryGlob, GrepQuery, SearchError as FileSearchError};
use crate::plugin_host::bindings::imports::pith::plugin::search::{
    GrepFile, GrepLine, GrepOptions, Host, SearchError, WalkEntry, WalkOptions,
};
use crate::plugin_host::sandbox::StoreState;

impl StoreState {
    /// The host path of a guest path the plugin may read (guest paths are host paths here).
    fn readable_root(&self, guest: &str) -> Result<PathBuf, SearchError> {
        let joined = match &self.workspace_guest {
            _ if Path::new(guest).is_absolute() => PathBuf::from(guest),
            Some(workspace) => Path::new(workspace).join(guest),
            None => return Err(SearchError::Denied(self.read_refusal(Path::new(guest)))),
        };
        let path = normalize(&joined);
        if !self.readable.iter().any(|root| path.starts_with(root)) {
            return Err(SearchError::Denied(self.read_refusal(&path)));
        }
        let real = path
            .canonicalize()
            .map_err(|_| SearchError::NotFound(guest.to_string()))?;
        let inside = |root: &PathBuf| {
            real.starts_with(root) || root.canonicalize().is_ok_and(|r| real.starts_with(r))
        };
        if !self.readable.iter().any(inside) {
            return Err(SearchError::Denied(format!(
                "{} (reached through the link {})",
                self.read_refusal(&real),
                path.display()
            )));
        }
        Ok(real)
    }

    /// Why reading `path` is refused: the sandbox's deny list, or the plugin's grants.
    fn read_refusal(&self, path: &Path) -> String {
        if self
            .spec
            .policy
            .deny_read
            .iter()
            .any(|d| path.starts_with(d))
        {
            pith_sdk::sandbox::read_denied(path)
        } else {
            format!(
                "read of {} denied: outside the directories this plugin may read",
                path.display()
            )
        }
    }

    /// Runs a search on the blocking pool, stopping when the call is cancelled; its time is
    /// host time (not charged to the guest's deadline).
    async fn run_search<T: Send + 'static>(
        &mut self,
        search: impl FnOnce(&(dyn Fn() -> bool + Sync)) -> Result<T, FileSearchError> + Send + 'static,
    ) -> Result<T, SearchError> {
        let _host_time = self.clock.enter_host();
        let cancel = self.cancel.clone();
        let task = tokio::task::spawn_blocking(move || {
            search(&|| cancel.as_ref().is_some_and(|c| c.is_cancelled()))
        });
        match task.await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(FileSearchError::Invalid(reason))) => Err(SearchError::Invalid(reason)),
            Ok(Err(FileSearchError::Cancelled)) | Err(_) => Err(SearchError::Cancelled),
        }
    }
}

/// `path` with `.` dropped and `..` applied, without touching the filesystem.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn glob(glob: Option<&str>) -> Result<Option<EntryGlob>, SearchError> {
    glob.map(EntryGlob::new)
        .transpose()
        .map_err(|err| SearchError::Invalid(err.to_string()))
}

impl Host for StoreState {
    async fn walk(&mut self, options: WalkOptions) -> Result<Vec<WalkEntry>, SearchError> {
        let root = self.readable_root(&options.root)?;
        if !root.is_dir() {
            return Err(SearchError::NotFound(options.root));
        }
        let glob = glob(options.glob.as_deref())?;
        let limit = options.limit.map_or(usize::MAX, |l| l as usize);
        self.run_search(move |cancelled| {
            Ok(file_search::walk(&root, cancelled)?
                .into_iter()
                .filter(|e| options.directories || !e.is_dir)
                .filter(|e| glob.as_ref().is_none_or(|g| g.matches(&e.relative)))
                .take(limit)
                .map(|e| WalkEntry {
                    relative: e.relative,
                    is_dir: e.is_dir,
                })
                .collect())
        })
        .await
    }

    async fn grep(&mut self, options: GrepOptions) -> Result<Vec<GrepFile>, SearchError> {
        let root = self.readable_root(&options.root)?;
        let query = GrepQuery {
            pattern: options.pattern,
            literal: options.literal,
            ignore_case: options.ignore_case,
            glob: glob(options.glob.as_deref())?,
            context: options.context as usize,
            limit: options.limit as usize,
        };
        self.run_search(move |cancelled| {
            Ok(file_search::grep(&root, &query, cancelled)?
                .into_iter()
                .map(|hit| GrepFile {
                    relative: hit.relative,
                    lines: hit
                        .lines
                        .into_iter()
                        .map(|l| GrepLine {
                            number: u32::try_from(l.number).unwrap_or(u32::MAX),
                            text: l.text,
                            is_match: l.is_match,
                        })
                        .collect(),
                })
                .collect())
        })
        .await
    }
}
