//! The parallel walk: `ignore`'s walker configured as the SDK's sequential `walk` (dotfiles
//! included, `.git` skipped, `.gitignore` / `.ignore` / `.fdignore` inside the root respected,
//! symbolic links listed but never followed), its entries sorted into depth-first name order.

use std::path::Path;
use std::sync::Mutex;

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};

use super::SearchError;

/// An entry found by [`walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// The path relative to the root, with `/` separators.
    pub relative: String,
    /// True for a directory (a link to one is not: links are not followed).
    pub is_dir: bool,
    /// True for a symbolic link (listed, never followed or read).
    pub is_link: bool,
}

/// Every entry under the directory `root` that no ignore file excludes, in depth-first name
/// order; `cancelled` is polled while walking.
pub fn walk(
    root: &Path,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<WalkEntry>, SearchError> {
    let found = Mutex::new(Vec::new());
    let mut builder = Collector {
        root,
        found: &found,
        cancelled,
    };
    WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .add_custom_ignore_filename(".fdignore")
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .threads(super::threads())
        .build_parallel()
        .visit(&mut builder);
    if cancelled() {
        return Err(SearchError::Cancelled);
    }
    let mut entries = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // Depth-first name order is the order of the paths compared part by part, which is their
    // byte order with `/` counted below every other byte.
    entries.sort_by_cached_key(|entry| {
        entry
            .relative
            .bytes()
            .map(|b| if b == b'/' { 0 } else { b })
            .collect::<Vec<u8>>()
    });
    Ok(entries)
}

/// Makes one [`Visitor`] per walker thread.
struct Collector<'a> {
    root: &'a Path,
    found: &'a Mutex<Vec<WalkEntry>>,
    cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl<'s> ParallelVisitorBuilder<'s> for Collector<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            found: self.found,
            cancelled: self.cancelled,
            local: Vec::new(),
        })
    }
}

/// One walker thread's entries, handed over when the thread is done.
struct Visitor<'a> {
    root: &'a Path,
    found: &'a Mutex<Vec<WalkEntry>>,
    cancelled: &'a (dyn Fn() -> bool + Sync),
    local: Vec<WalkEntry>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.local.len() % 256 == 255 && (self.cancelled)() {
            return WalkState::Quit;
        }
        // An unreadable directory or a broken entry is skipped, as `find` and `rg` do.
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.depth() == 0 {
            return WalkState::Continue;
        }
        // The walker's paths are the root joined with names: the rest after it is relative.
        let (path, root) = (
            entry.path().as_os_str().as_encoded_bytes(),
            self.root.as_os_str().as_encoded_bytes(),
        );
        let Some(relative) = path.strip_prefix(root) else {
            return WalkState::Continue;
        };
        let relative = relative.strip_prefix(b"/").unwrap_or(relative);
        let kind = entry.file_type();
        self.local.push(WalkEntry {
            relative: String::from_utf8_lossy(relative).into_owned(),
            is_dir: kind.is_some_and(|t| t.is_dir()),
            is_link: kind.is_some_and(|t| t.is_symlink()),
        });
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        if let Ok(mut found) = self.found.lock() {
            found.append(&mut self.local);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_in_depth_first_name_order_with_ignore_rules() {
        let dir = std::env::temp_dir().join(format!("pith-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for file in [
            "a-b",
            "a/c",
            "a/b/z",
            "b.log",
            "keep.log",
            ".hidden",
            "t/out",
            ".git/HEAD",
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(dir.join(".gitignore"), "*.log\n!keep.log\nt/\n").unwrap();
        let found: Vec<String> = walk(&dir, &|| false)
            .unwrap()
            .into_iter()
            .map(|e| format!("{}{}", e.relative, if e.is_dir { "/" } else { "" }))
            .collect();
        assert_eq!(
            found,
            [
                ".gitignore",
                ".hidden",
                "a/",
                "a/b/",
                "a/b/z",
                "a/c",
                "a-b",
                "keep.log"
            ]
        );
        assert_eq!(walk(&dir, &|| true), Err(SearchError::Cancelled));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
