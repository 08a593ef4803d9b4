//! Walking and searching a directory tree on every core, with ripgrep's own crates (`ignore`'s
//! gitignore matcher, `globset`, `grep-searcher` and `grep-regex`), everything opened beneath
//! a directory handle without following links ([`handle`]). Plugins reach it through the `pith:plugin/search` import, confined to what they
//! may read (`plugin_host::imports::search`); this module knows nothing of plugins.
//!
//! Results are in depth-first name order (as a sequential walk that lists each directory
//! sorted), whatever order the threads found them in.

#[cfg(unix)]
pub mod beneath;
mod grep;
pub mod handle;
mod ignore_files;
mod walk;

pub use grep::{GrepHit, GrepLine, GrepQuery, GrepRoot, grep};
pub use handle::{DirHandle, EntryKind};
pub use walk::{WalkEntry, open_dir, walk};

/// Why a walk or a search could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The glob or the pattern is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The caller cancelled it.
    #[error("cancelled")]
    Cancelled,
}

/// A glob filter on walk entries: matched against the entry's name, or against its path
/// relative to the root when the glob has a `/` (`*` and `?` never cross a `/`; `**` does).
#[derive(Debug, Clone)]
pub struct EntryGlob {
    matcher: globset::GlobMatcher,
    by_path: bool,
}

impl EntryGlob {
    /// Compiles a glob (`*`, `?`, `**`, `[...]`, `{a,b}`).
    pub fn new(glob: &str) -> Result<EntryGlob, SearchError> {
        let matcher = globset::GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .allow_unclosed_class(true)
            .build()
            .map_err(|err| SearchError::Invalid(format!("Invalid glob {glob:?}: {err}")))?
            .compile_matcher();
        Ok(EntryGlob {
            matcher,
            by_path: glob.contains('/'),
        })
    }

    /// Whether the entry at `relative` (to the walk's root, `/`-separated) matches.
    pub fn matches(&self, relative: &str) -> bool {
        if self.by_path {
            self.matcher.is_match(relative)
        } else {
            self.matcher
                .is_match(relative.rsplit('/').next().unwrap_or(relative))
        }
    }
}

/// The number of threads a walk or a search uses: the machine's cores, at most 8.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}
