//! `pith:plugin/search`: the host's walk and search ([`crate::file_search`]) for plugins,
//! confined to what the plugin may read.
//!
//! The root is matched lexically against the directories preopened for the guest (the
//! longest one holding it), that directory is opened — refused when it is a link that now
//! leads into the deny list, as at preopen time — and the rest of the path is opened beneath
//! it by the kernel (`openat2` with `RESOLVE_BENEATH`: links are followed only while they stay
//! inside, as the guest's own WASI view follows them). Below the root the walk opens every
//! directory and file beneath the root's handle with no link in the path, so nothing swapped
//! in during a search leads out of it.

use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, OFlags, fstat};
use rustix::io::Errno;

use crate::file_search::beneath::{self, Links};
use crate::file_search::{self, EntryGlob, GrepQuery, GrepRoot, SearchError as FileSearchError};
use crate::plugin_host::bindings::imports::pith::plugin::search::{
    GrepFile, GrepLine, GrepOptions, Host, SearchError, WalkEntry, WalkOptions,
};
use crate::plugin_host::sandbox::StoreState;

/// A search root, opened.
enum Opened {
    /// A directory.
    Dir(OwnedFd),
    /// A regular file.
    File(OwnedFd),
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
            .filter(|root| path.starts_with(&root.path))
            .max_by_key(|root| root.path.as_os_str().len())
        else {
            return Err(SearchError::Denied(self.read_refusal(&path)));
        };
        if !root.whole {
            let mut hidden = self.spec.policy.deny_read.clone();
            hidden.push(PathBuf::from("/proc"));
            if crate::sandbox::tree::leads_into(&root.path, &hidden) {
                return Err(SearchError::Denied(self.read_refusal(&root.path)));
            }
        }
        let rest = path.strip_prefix(&root.path).unwrap_or(Path::new(""));
        let opened = file_search::open_dir(&root.path)
            .map_err(|_| SearchError::NotFound(guest.to_string()))
            .and_then(|dir| {
                beneath::open(&dir, rest, beneath::READ, Links::Beneath).map_err(|errno| {
                    match errno {
                        Errno::NOENT | Errno::NOTDIR => SearchError::NotFound(guest.to_string()),
                        _ => SearchError::Denied(format!(
                            "read of {} denied: it leads outside the directories this plugin may read (a link is followed only while it stays inside them)",
                            path.display()
                        )),
                    }
                })
            })?;
        let kind = fstat(&opened)
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
            .map_err(|_| SearchError::NotFound(guest.to_string()))?;
        match kind {
            FileType::Directory => {
                // Reopened for listing (the first open did not ask for a directory).
                beneath::open(
                    &opened,
                    Path::new(""),
                    beneath::READ | OFlags::DIRECTORY,
                    Links::Refused,
                )
                .map(Opened::Dir)
                .map_err(|_| SearchError::NotFound(guest.to_string()))
            }
            FileType::RegularFile => Ok(Opened::File(opened)),
            _ => Err(SearchError::Invalid(format!(
                "{guest} is not a regular file or a directory"
            ))),
        }
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
        let Opened::Dir(root) = self.open_readable(&options.root)? else {
            return Err(SearchError::NotFound(options.root));
        };
        let glob = glob(options.glob.as_deref())?;
        let limit = options.limit.map_or(usize::MAX, |l| l as usize);
        self.run_search(move |cancelled| {
            Ok(file_search::walk(&root, cancelled)?
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
            Opened::Dir(fd) => GrepRoot::Dir(fd),
            Opened::File(fd) => {
                let name = Path::new(&options.root)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                GrepRoot::File(fd, name)
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
