//! The handles a walk and a search open things by: the one place this module meets the
//! system.
//!
//! - On unix a directory is an open descriptor, and everything under it is opened beneath it
//!   by the kernel ([`super::beneath`]), with no link anywhere in the path.
//! - Elsewhere (Windows) a directory is its path. Each part of a path under it is checked not
//!   to be a link (a symbolic link or a junction) before the path is opened. The rule is the
//!   same, but a part swapped for a link between the check and the open is not caught, as the
//!   kernel catches it on unix. That way is built for the tests on unix too, and tested there.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// What an entry is (links are not followed, so a link to a directory is a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (or, on Windows, a junction).
    Link,
    /// A device, socket or FIFO.
    Other,
}

/// An open directory to walk or search beneath.
#[derive(Debug)]
pub struct DirHandle(imp::Inner);

#[cfg(unix)]
use by_descriptor as imp;
#[cfg(not(unix))]
use by_path as imp;

/// What a root was, opened: a directory as the platform holds one, or a file.
enum Found<D> {
    Dir(D),
    File(File),
}

/// What a search root named, opened.
#[derive(Debug)]
pub enum Opened {
    /// A directory.
    Dir(DirHandle),
    /// A regular file.
    File(File),
}

/// Why a search root could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenError {
    /// It does not exist (or a part of its path is not a directory).
    NotFound,
    /// A link on its way leads out of the directory it was opened beneath.
    Outside,
    /// It is neither a regular file nor a directory.
    NotFileOrDir,
}

impl DirHandle {
    /// Opens the directory at `path` (its links followed: the caller chose it).
    pub fn open(path: &Path) -> io::Result<DirHandle> {
        imp::open(path).map(DirHandle)
    }

    /// The directory at `relative` (no `..`) beneath this one, with no link in its path;
    /// `None` when it is gone, is not a directory or is reached through a link.
    pub fn dir(&self, relative: &Path) -> Option<DirHandle> {
        imp::dir(&self.0, relative).map(DirHandle)
    }

    /// The file at `relative` (no `..`) beneath this one, opened for reading with no link in
    /// its path (never blocking on a FIFO).
    pub fn file(&self, relative: &Path) -> Option<File> {
        imp::file(&self.0, relative)
    }

    /// The entries' names and kinds (links not followed), without `.` and `..`; empty when the
    /// directory cannot be read.
    pub fn entries(&self) -> Vec<(OsString, EntryKind)> {
        imp::entries(&self.0)
    }
}

/// Opens `rest` (no `..`) beneath the directory `root`, following links only while they stay
/// beneath it, and says where it really is when the system can tell.
pub fn open_beneath(root: &Path, rest: &Path) -> Result<(Opened, Option<PathBuf>), OpenError> {
    let (found, real) = imp::open_beneath(root, rest)?;
    let opened = match found {
        Found::Dir(dir) => Opened::Dir(DirHandle(dir)),
        Found::File(file) => Opened::File(file),
    };
    Ok((opened, real))
}

#[cfg(unix)]
mod by_descriptor {
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, fstat, statat};
    use rustix::io::Errno;

    use crate::file_search::beneath::{self, Links};
    use crate::file_search::handle::{EntryKind, Found, OpenError};
    use crate::sandbox::paths::descriptor_path;

    pub type Inner = OwnedFd;

    pub fn open(path: &Path) -> io::Result<OwnedFd> {
        rustix::fs::open(path, beneath::READ | OFlags::DIRECTORY, Mode::empty())
            .map_err(io::Error::from)
    }

    pub fn dir(fd: &OwnedFd, relative: &Path) -> Option<OwnedFd> {
        beneath::open(
            fd,
            relative,
            beneath::READ | OFlags::DIRECTORY,
            Links::Refused,
        )
        .ok()
    }

    pub fn file(fd: &OwnedFd, relative: &Path) -> Option<File> {
        beneath::open(fd, relative, beneath::READ, Links::Refused)
            .ok()
            .map(File::from)
    }

    pub fn entries(fd: &OwnedFd) -> Vec<(OsString, EntryKind)> {
        let Ok(dir) = Dir::read_from(fd) else {
            return Vec::new();
        };
        let mut names = Vec::new();
        for entry in dir.flatten() {
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = kind_of(entry.file_type()).unwrap_or_else(|| {
                statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .and_then(|stat| kind_of(FileType::from_raw_mode(stat.st_mode)))
                    .unwrap_or(EntryKind::Other)
            });
            names.push((OsStr::from_bytes(name).to_os_string(), kind));
        }
        names
    }

    /// The kind a directory listing or a `stat` names; `None` when it does not say.
    fn kind_of(kind: FileType) -> Option<EntryKind> {
        match kind {
            FileType::Directory => Some(EntryKind::Dir),
            FileType::RegularFile => Some(EntryKind::File),
            FileType::Symlink => Some(EntryKind::Link),
            FileType::Unknown => None,
            _ => Some(EntryKind::Other),
        }
    }

    pub fn open_beneath(
        root: &Path,
        rest: &Path,
    ) -> Result<(Found<OwnedFd>, Option<PathBuf>), OpenError> {
        let root_dir = open(root).map_err(|_| OpenError::NotFound)?;
        let opened =
            beneath::open(&root_dir, rest, beneath::READ, Links::Beneath).map_err(|errno| {
                match errno {
                    Errno::NOENT | Errno::NOTDIR => OpenError::NotFound,
                    _ => OpenError::Outside,
                }
            })?;
        let real = descriptor_path(opened.as_fd());
        let kind = fstat(&opened)
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
            .map_err(|_| OpenError::NotFound)?;
        match kind {
            // Reopened for listing (the first open did not ask for a directory).
            FileType::Directory => dir(&opened, Path::new(""))
                .map(|dir| (Found::Dir(dir), real))
                .ok_or(OpenError::NotFound),
            FileType::RegularFile => Ok((Found::File(File::from(opened)), real)),
            _ => Err(OpenError::NotFileOrDir),
        }
    }
}

#[cfg(any(test, not(unix)))]
mod by_path {
    use std::ffi::OsString;
    use std::fs::File;
    use std::io;
    use std::path::{Component, Path, PathBuf};

    use crate::file_search::handle::{EntryKind, Found, OpenError};

    #[allow(dead_code)] // the handle's type where this way is the platform's
    pub type Inner = PathBuf;

    #[allow(dead_code)] // (the tests open roots with `open_beneath`)
    pub fn open(path: &Path) -> io::Result<PathBuf> {
        if std::fs::metadata(path)?.is_dir() {
            Ok(path.to_path_buf())
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", path.display()),
            ))
        }
    }

    /// `relative` under `base`, each part checked not to be a link.
    fn beneath_no_links(base: &Path, relative: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
        let mut path = base.to_path_buf();
        let mut meta = std::fs::metadata(base).ok()?;
        for part in relative.components() {
            let Component::Normal(name) = part else {
                return None;
            };
            path.push(name);
            meta = std::fs::symlink_metadata(&path).ok()?;
            if meta.file_type().is_symlink() {
                return None;
            }
        }
        Some((path, meta))
    }

    pub fn dir(base: &Path, relative: &Path) -> Option<PathBuf> {
        let (path, meta) = beneath_no_links(base, relative)?;
        meta.is_dir().then_some(path)
    }

    pub fn file(base: &Path, relative: &Path) -> Option<File> {
        let (path, meta) = beneath_no_links(base, relative)?;
        if !meta.is_file() {
            return None;
        }
        File::open(path).ok()
    }

    pub fn entries(base: &Path) -> Vec<(OsString, EntryKind)> {
        let Ok(listing) = std::fs::read_dir(base) else {
            return Vec::new();
        };
        listing
            .flatten()
            .map(|entry| {
                let kind = match entry.file_type() {
                    Ok(kind) if kind.is_symlink() => EntryKind::Link,
                    Ok(kind) if kind.is_dir() => EntryKind::Dir,
                    Ok(kind) if kind.is_file() => EntryKind::File,
                    _ => EntryKind::Other,
                };
                (entry.file_name(), kind)
            })
            .collect()
    }

    /// A path as people write it: without the `\\?\` that `canonicalize` puts before a drive.
    fn plain(path: PathBuf) -> PathBuf {
        let text = path.to_string_lossy();
        match text.strip_prefix(r"\\?\") {
            Some(rest) if rest.as_bytes().get(1) == Some(&b':') => PathBuf::from(rest),
            _ => path,
        }
    }

    pub fn open_beneath(
        root: &Path,
        rest: &Path,
    ) -> Result<(Found<PathBuf>, Option<PathBuf>), OpenError> {
        let root = root.canonicalize().map_err(|_| OpenError::NotFound)?;
        let target = root
            .join(rest)
            .canonicalize()
            .map_err(|_| OpenError::NotFound)?;
        if !target.starts_with(&root) {
            return Err(OpenError::Outside);
        }
        let meta = std::fs::metadata(&target).map_err(|_| OpenError::NotFound)?;
        let real = Some(plain(target.clone()));
        if meta.is_dir() {
            Ok((Found::Dir(target), real))
        } else if meta.is_file() {
            let file = File::open(&target).map_err(|_| OpenError::NotFound)?;
            Ok((Found::File(file), real))
        } else {
            Err(OpenError::NotFileOrDir)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree with a file, a directory, a link inside and a link out.
    fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), "x").unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("inner")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        (dir, outside)
    }

    fn sorted(mut entries: Vec<(OsString, EntryKind)>) -> Vec<(String, EntryKind)> {
        entries.sort();
        entries
            .into_iter()
            .map(|(name, kind)| (name.to_string_lossy().into_owned(), kind))
            .collect()
    }

    impl PartialOrd for EntryKind {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for EntryKind {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            (*self as u8).cmp(&(*other as u8))
        }
    }

    /// Both ways (the descriptors of unix, the paths of Windows) keep the same rules.
    #[test]
    fn descriptors_and_paths_refuse_links_below_and_follow_them_only_inside_at_the_root() {
        let (dir, outside) = tree();
        let root = dir.path().to_path_buf();
        let expected = vec![
            ("inner".to_string(), EntryKind::Link),
            ("out".to_string(), EntryKind::Link),
            ("real".to_string(), EntryKind::Dir),
        ];

        // By path, as on Windows.
        assert_eq!(sorted(by_path::entries(&root)), expected);
        assert!(by_path::dir(&root, Path::new("real")).is_some());
        assert!(by_path::dir(&root, Path::new("inner")).is_none());
        assert!(by_path::dir(&root, Path::new("real/f")).is_none());
        assert!(by_path::file(&root, Path::new("real/f")).is_some());
        assert!(by_path::file(&root, Path::new("inner/f")).is_none());
        assert!(by_path::file(&root, Path::new("out/secret")).is_none());
        assert!(matches!(
            by_path::open_beneath(&root, Path::new("inner/f")),
            Ok((Found::File(_), Some(real))) if real == root.canonicalize().unwrap().join("real/f")
        ));
        assert!(matches!(
            by_path::open_beneath(&root, Path::new("inner")),
            Ok((Found::Dir(_), _))
        ));
        assert!(matches!(
            by_path::open_beneath(&root, Path::new("out/secret")),
            Err(OpenError::Outside)
        ));
        assert!(matches!(
            by_path::open_beneath(&root, Path::new("missing")),
            Err(OpenError::NotFound)
        ));

        // By descriptor, through the handle.
        let handle = DirHandle::open(&root).unwrap();
        assert_eq!(sorted(handle.entries()), expected);
        assert!(handle.dir(Path::new("real")).is_some());
        assert!(handle.dir(Path::new("inner")).is_none());
        assert!(handle.file(Path::new("real/f")).is_some());
        assert!(handle.file(Path::new("inner/f")).is_none());
        assert!(handle.file(Path::new("out/secret")).is_none());
        assert!(matches!(
            open_beneath(&root, Path::new("inner/f")),
            Ok((Opened::File(_), Some(real))) if real == root.canonicalize().unwrap().join("real/f")
        ));
        assert!(matches!(
            open_beneath(&root, Path::new("out/secret")),
            Err(OpenError::Outside)
        ));
        assert!(matches!(
            open_beneath(&root, Path::new("missing")),
            Err(OpenError::NotFound)
        ));
        drop(outside);
    }
}
