//! Fast walks and searches of the files the plugin may read, done by the host with ripgrep's
//! walker and searcher on every core (the `pith:plugin/search` import): the way to list or
//! search a large tree.
//!
//! ```no_run
//! use pith_sdk::search::{self, GrepOptions};
//!
//! # fn main() -> Result<(), String> {
//! let files = search::grep(&GrepOptions {
//!     root: ".".into(),
//!     pattern: "TODO".into(),
//!     literal: true,
//!     ignore_case: false,
//!     glob: Some("*.rs".into()),
//!     context: 0,
//!     limit: 100,
//! })
//! .map_err(|err| search::message(&err))?;
//! for file in files {
//!     for line in file.lines {
//!         println!("{}:{}: {}", file.relative, line.number, line.text);
//!     }
//! }
//! # Ok(())
//! # }
//! ```

use crate::bindings::imports::pith::plugin0_1_0::search as wit;

pub use wit::{GrepFile, GrepLine, GrepOptions, SearchError, WalkEntry, WalkOptions};

/// The entries under a directory, in depth-first name order (see [`WalkOptions`]).
pub fn walk(options: &WalkOptions) -> Result<Vec<WalkEntry>, SearchError> {
    wit::walk(options)
}

/// The lines matching a pattern in a file or in the files under a directory, in walk order
/// (see [`GrepOptions`]).
pub fn grep(options: &GrepOptions) -> Result<Vec<GrepFile>, SearchError> {
    wit::grep(options)
}

/// A sentence for a [`SearchError`].
pub fn message(error: &SearchError) -> String {
    match error {
        SearchError::Denied(reason) => reason.clone(),
        SearchError::NotFound(path) => format!("Path not found: {path}"),
        SearchError::Invalid(reason) => reason.clone(),
        SearchError::Cancelled => "The search was cancelled".to_string(),
        SearchError::Failed(reason) => format!("The search failed: {reason}"),
    }
}
