//! The parallel walk: every core lists directories from a shared stack, each opened beneath the
//! root with no link anywhere in its path ([`super::beneath`]). Dotfiles are included, `.git`
//! is skipped, the ignore files inside the root are respected ([`super::ignore_files`]), and
//! links are listed but never followed. The entries are sorted into depth-first name order.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use super::handle::{DirHandle, EntryKind};
use super::ignore_files::{IGNORE_FILES, Rules};
use super::query::SearchError;

/// An entry found by [`walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// The path relative to the root, with `/` separators (invalid UTF-8 replaced).
    pub relative: String,
    /// The same path as the filesystem names it.
    pub path: PathBuf,
    /// What it is.
    pub kind: EntryKind,
}

impl WalkEntry {
    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == EntryKind::Dir
    }
}

/// A directory waiting to be listed.
struct Job {
    relative: PathBuf,
    rules: Option<Arc<Rules>>,
}

/// The shared stack of directories and how many are being listed.
struct Work {
    jobs: Vec<Job>,
    active: usize,
    stop: bool,
}

/// Every entry under the directory `root` that no ignore file excludes and that is not one of
/// (or under) the `skipped` paths (relative to `root`: the sandbox's hidden paths), in
/// depth-first name order; `cancelled` is polled between directories.
pub fn walk(
    root: &DirHandle,
    skipped: &[PathBuf],
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<WalkEntry>, SearchError> {
    let work = Mutex::new(Work {
        jobs: vec![Job {
            relative: PathBuf::new(),
            rules: None,
        }],
        active: 0,
        stop: false,
    });
    let wake = Condvar::new();
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads() {
            scope.spawn(|| {
                let mut local = Vec::new();
                while let Some(job) = next_job(&work, &wake, cancelled) {
                    let more = list(root, &job, skipped, &mut local);
                    let mut work = work.lock().unwrap_or_else(|e| e.into_inner());
                    work.jobs.extend(more);
                    work.active -= 1;
                    wake.notify_all();
                }
                found
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .append(&mut local);
            });
        }
    });
    if cancelled() {
        return Err(SearchError::Cancelled);
    }
    let mut entries = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // Depth-first name order is the order of the paths compared part by part, which is their
    // byte order with `/` counted below every other byte.
    entries.sort_by_cached_key(|entry: &WalkEntry| {
        entry
            .path
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .map(|b| {
                if std::path::is_separator(char::from(*b)) {
                    0
                } else {
                    *b
                }
            })
            .collect::<Vec<u8>>()
    });
    Ok(entries)
}

/// The next directory to list; `None` once every directory is listed (or the walk stopped).
fn next_job(
    work: &Mutex<Work>,
    wake: &Condvar,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Option<Job> {
    let mut state = work.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if state.stop || cancelled() {
            state.stop = true;
            wake.notify_all();
            return None;
        }
        if let Some(job) = state.jobs.pop() {
            state.active += 1;
            return Some(job);
        }
        if state.active == 0 {
            return None;
        }
        state = wake.wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

/// Lists one directory into `found`; returns its subdirectories to list. A directory that
/// cannot be opened (gone, unreadable, swapped for a link) is skipped.
fn list(root: &DirHandle, job: &Job, skipped: &[PathBuf], found: &mut Vec<WalkEntry>) -> Vec<Job> {
    let Some(dir) = root.dir(&job.relative) else {
        return Vec::new();
    };
    let names = dir.entries();
    let present: Vec<&str> = IGNORE_FILES
        .iter()
        .copied()
        .filter(|n| {
            names
                .iter()
                .any(|(name, kind)| name == n && *kind == EntryKind::File)
        })
        .collect();
    let rules = if present.is_empty() {
        job.rules.clone()
    } else {
        Rules::load(&dir, &job.relative, &present, job.rules.clone())
    };
    let mut subdirs = Vec::new();
    for (name, kind) in names {
        if name == ".git" {
            continue;
        }
        let path = job.relative.join(&name);
        if skipped.iter().any(|s| path.starts_with(s)) {
            continue;
        }
        if rules
            .as_ref()
            .is_some_and(|r| r.ignores(&path, kind == EntryKind::Dir))
        {
            continue;
        }
        if kind == EntryKind::Dir {
            subdirs.push(Job {
                relative: path.clone(),
                rules: rules.clone(),
            });
        }
        found.push(WalkEntry {
            relative: slash_separated(&path),
            path,
            kind,
        });
    }
    subdirs
}

/// A relative path with `/` between its parts, whatever the system's separator.
fn slash_separated(path: &Path) -> String {
    if std::path::MAIN_SEPARATOR == '/' {
        return path.to_string_lossy().into_owned();
    }
    path.components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Opens the directory at `path` for a walk (tests and tools outside the plugin host).
pub fn open_dir(path: &Path) -> std::io::Result<DirHandle> {
    DirHandle::open(path)
}

/// The number of threads a walk or a search uses: the machine's cores, at most 8.
pub(super) fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_in_depth_first_name_order_with_ignore_rules() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "a-b",
            "a/c",
            "a/b/z",
            "b.log",
            "keep.log",
            ".hidden",
            "t/out",
            ".git/HEAD",
            "s/x.tmp",
            "s/y",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::write(dir.path().join(".gitignore"), "*.log\n!keep.log\nt/\n").unwrap();
        std::fs::write(dir.path().join("s/.ignore"), "*.tmp\n").unwrap();
        // A link is listed, never followed, and an ignore file through a link is not read
        // (this one would ignore everything in `a/`).
        std::os::unix::fs::symlink("/", dir.path().join("root-link")).unwrap();
        std::fs::write(dir.path().join("rules.txt"), "*\n").unwrap();
        std::os::unix::fs::symlink("../rules.txt", dir.path().join("a/.gitignore")).unwrap();
        let root = open_dir(dir.path()).unwrap();
        let found: Vec<String> = walk(&root, &[], &|| false)
            .unwrap()
            .into_iter()
            .map(|e| format!("{}{}", e.relative, if e.is_dir() { "/" } else { "" }))
            .collect();
        assert_eq!(
            found,
            [
                ".gitignore",
                ".hidden",
                "a/",
                "a/.gitignore",
                "a/b/",
                "a/b/z",
                "a/c",
                "a-b",
                "keep.log",
                "root-link",
                "rules.txt",
                "s/",
                "s/.ignore",
                "s/y"
            ]
        );
        assert_eq!(walk(&root, &[], &|| true), Err(SearchError::Cancelled));
    }
}
