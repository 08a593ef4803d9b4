//! `pith:plugin/search`: the host's walk and search ([`crate::file_search`]) for plugins,
//! confined to what the plugin may read.
//!
//! The root is matched lexically against the directories preopened for the guest (the
//! longest one holding it) and judged by the sandbox's path rules (as named, as its links
//! resolve, and again where the opened root really is; a walk skips the hidden paths under
//! it). The rest of the path is opened beneath that directory
//! ([`crate::file_search::handle::open_beneath`]: links are followed only while they stay
//! inside, as the guest's own WASI view follows them). Below the root the walk opens every
//! directory and file beneath the root's handle with no link in the path, so nothing swapped
//! in during a search leads out of it (on unix the kernel holds that; see the handle module
//! for Windows).

use std::path::{Path, PathBuf};

use crate::file_search::handle::{self, DirHandle, OpenError};
use crate::file_search::{self, EntryGlob, GrepQuery, GrepRoot, SearchError as FileSearchError};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::search::{
    GrepFile, GrepLine, GrepOptions, Host, SearchError, WalkEntry, WalkOptions,
};
use crate::plugin_host::sandbox::StoreState;
use crate::sandbox::paths::{PathRules, normalize};

/// A search root, opened.
enum Opened {
    /// A directory, and the hidden paths under it (relative to it).
    Dir(DirHandle, Vec<PathBuf>),
    /// A regular file.
    File(std::fs::File),
}

impl StoreState {
    /// Opens the guest path `guest` (absolute, or relative to the workspace) if the plugin may
    /// read it (guest paths are host paths here).
    fn open_readable(&self, guest: &str) -> Result<Opened, SearchError> {
        let joined = match &self.workspace_guest {
            _ if Path::new(guest).is_absolute() => PathBuf::from(guest),
            Some(workspace) => Path::new(workspace).join(guest),
            None => return Err(SearchError::Denied(self.read_refusal(Path::new(guest)))),
        };
        let path = normalize(&joined);
        let Some(root) = self
            .readable
            .iter()
            .filter(|root| path.starts_with(root))
            .max_by_key(|root| root.as_os_str().len())
        else {
            return Err(SearchError::Denied(self.read_refusal(&path)));
        };
        let rules = self.path_guard.rules();
        if let Some(rules) = rules
            && !rules.allows(&path, true, false)
        {
            return Err(SearchError::Denied(denied_through(rules, &path)));
        }
        let rest = path.strip_prefix(root).unwrap_or(Path::new(""));
        let (opened, real) = handle::open_beneath(root, rest).map_err(|err| match err {
            OpenError::NotFound => SearchError::NotFound(guest.to_string()),
            OpenError::Outside => SearchError::Denied(format!(
                "read of {} denied: it leads outside the directories this plugin may read (a link is followed only while it stays inside them)",
                path.display()
            )),
            OpenError::NotFileOrDir => {
                SearchError::Invalid(format!("{guest} is not a regular file or a directory"))
            }
        })?;
        // Judged again where it really is, and what a walk of it skips.
        let hidden = match rules {
            None => Vec::new(),
            Some(rules) => {
                let real = real
                    .filter(|real| !rules.hides(real))
                    .ok_or_else(|| SearchError::Denied(denied_through(rules, &path)))?;
                rules.hidden_under(&real)
            }
        };
        Ok(match opened {
            handle::Opened::Dir(dir) => Opened::Dir(dir, hidden),
            handle::Opened::File(file) => Opened::File(file),
        })
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
            Ok(Err(FileSearchError::Cancelled)) => Err(SearchError::Cancelled),
            Err(err) => Err(SearchError::Failed(format!("the search stopped: {err}"))),
        }
    }
}

/// Why a root the rules refuse is refused: on the deny list, or leading there.
fn denied_through(rules: &PathRules, path: &Path) -> String {
    if rules.hides(path) {
        pith_sdk::sandbox::read_denied(path)
    } else {
        pith_sdk::sandbox::read_denied_through(path)
    }
}

fn glob(glob: Option<&str>) -> Result<Option<EntryGlob>, SearchError> {
    glob.map(EntryGlob::new)
        .transpose()
        .map_err(|err| SearchError::Invalid(err.to_string()))
}

impl Host for StoreState {
    async fn walk(&mut self, options: WalkOptions) -> Result<Vec<WalkEntry>, SearchError> {
        let Opened::Dir(root, hidden) = self.open_readable(&options.root)? else {
            return Err(SearchError::NotFound(options.root));
        };
        let glob = glob(options.glob.as_deref())?;
        let limit = options.limit.map_or(usize::MAX, |l| l as usize);
        self.run_search(move |cancelled| {
            Ok(file_search::walk(&root, &hidden, cancelled)?
                .into_iter()
                .filter(|e| options.directories || !e.is_dir())
                .filter(|e| glob.as_ref().is_none_or(|g| g.matches(&e.relative)))
                .take(limit)
                .map(|e| WalkEntry {
                    is_dir: e.is_dir(),
                    relative: e.relative,
                })
                .collect())
        })
        .await
    }

    async fn grep(&mut self, options: GrepOptions) -> Result<Vec<GrepFile>, SearchError> {
        let root = match self.open_readable(&options.root)? {
            Opened::Dir(fd, hidden) => GrepRoot::Dir(fd, hidden),
            Opened::File(file) => {
                let name = Path::new(&options.root)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                GrepRoot::File(file, name)
            }
        };
        let query = GrepQuery {
            pattern: options.pattern,
            literal: options.literal,
            ignore_case: options.ignore_case,
            glob: glob(options.glob.as_deref())?,
            context: options.context as usize,
            limit: options.limit as usize,
        };
        self.run_search(move |cancelled| {
            Ok(file_search::grep(root, &query, cancelled)?
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
