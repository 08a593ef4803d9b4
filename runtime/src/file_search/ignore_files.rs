//! The ignore rules of a walk: each directory's `.gitignore`, `.ignore` and `.fdignore` (in that
//! order of precedence, last wins), read by the walk itself beneath the root — a regular file
//! of at most 1 MB, never through a link — and matched with ripgrep's gitignore matcher.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::handle::DirHandle;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore files read in each directory, the later ones winning.
pub const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The largest ignore file read.
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// The rules in force in a directory: its own and its ancestors'.
pub struct Rules {
    /// The directory the rules come from, relative to the root.
    base: PathBuf,
    matcher: Gitignore,
    parent: Option<Arc<Rules>>,
}

impl Rules {
    /// The rules of the directory `dir` (at `base`, relative to the root), whose listing holds
    /// the regular files `present`, on top of `parent`.
    pub fn load(
        dir: &DirHandle,
        base: &Path,
        present: &[&str],
        parent: Option<Arc<Rules>>,
    ) -> Option<Arc<Rules>> {
        let mut builder = GitignoreBuilder::new(".");
        let mut any = false;
        for name in IGNORE_FILES.iter().filter(|n| present.contains(n)) {
            if let Some(text) = read_small(dir, name) {
                for line in text.lines() {
                    // A malformed line is skipped, as git does.
                    any |= builder.add_line(None, line).is_ok();
                }
            }
        }
        let matcher = any.then(|| builder.build().ok()).flatten();
        match matcher {
            Some(matcher) if !matcher.is_empty() => Some(Arc::new(Rules {
                base: base.to_path_buf(),
                matcher,
                parent,
            })),
            _ => parent,
        }
    }

    /// Whether the entry at `relative` (to the root) is ignored: the nearest rules that speak
    /// of it decide.
    pub fn ignores(self: &Arc<Rules>, relative: &Path, is_dir: bool) -> bool {
        let mut level = Some(self);
        while let Some(rules) = level {
            if let Ok(local) = relative.strip_prefix(&rules.base) {
                match rules.matcher.matched(local, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            level = rules.parent.as_ref();
        }
        false
    }
}

/// The text of the regular file `name` in `dir`, if it is one and small.
fn read_small(dir: &DirHandle, name: &str) -> Option<String> {
    let mut file = dir.file(Path::new(name))?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_FILE {
        return None;
    }
    let mut text = String::new();
    (&mut file)
        .take(MAX_IGNORE_FILE)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}
