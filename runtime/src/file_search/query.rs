//! What a walk or a search is asked for and why it may not run: the glob filter on entries and
//! the errors.

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
