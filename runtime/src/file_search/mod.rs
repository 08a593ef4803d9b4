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
mod query;
mod walk;

pub use grep::{GrepHit, GrepLine, GrepQuery, GrepRoot, grep};
pub use handle::{DirHandle, EntryKind};
pub use query::{EntryGlob, SearchError};
pub use walk::{WalkEntry, open_dir, walk};
