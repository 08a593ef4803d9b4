//! Opening files and directories beneath a directory handle, as the kernel resolves them:
//! `openat2` with `RESOLVE_BENEATH` (nothing outside the handle's directory, whatever the
//! links say) and, for what a walk found, `RESOLVE_NO_SYMLINKS` as well (no link anywhere in
//! the path, so a directory swapped for a link during a search leads nowhere). On kernels
//! without `openat2` (before Linux 5.6) each part of the path is opened in turn with
//! `O_NOFOLLOW`: links are then refused everywhere. Other systems (macOS) have no `openat2`
//! and always take that way.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{Mode, OFlags, openat};
#[cfg(target_os = "linux")]
use rustix::fs::{ResolveFlags, openat2};
use rustix::io::Errno;

/// The flags every read opens with: never a controlling terminal, never blocking on a FIFO.
pub const READ: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

/// Whether the kernel said it has no `openat2`.
#[cfg(target_os = "linux")]
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// How links in the path are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed while they stay beneath the directory (as the plugin's WASI view does).
    Beneath,
    /// Refused anywhere in the path.
    Refused,
}

/// Opens `relative` (no `..`, not absolute) beneath the directory `dir` with `flags`.
pub fn open(
    dir: impl AsFd,
    relative: &Path,
    flags: OFlags,
    links: Links,
) -> Result<OwnedFd, Errno> {
    if relative.as_os_str().is_empty() {
        return openat(&dir, ".", flags, Mode::empty());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = links;
    #[cfg(target_os = "linux")]
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve = match links {
            Links::Beneath => ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            Links::Refused => ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        };
        // A rename elsewhere during the lookup makes the kernel ask for a retry.
        for _ in 0..8 {
            match openat2(&dir, relative, flags, Mode::empty(), resolve) {
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                other => return other,
            }
        }
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            return Err(Errno::AGAIN);
        }
    }
    open_part_by_part(dir, relative, flags)
}

/// How a directory on the way is opened: for its path only where the system has `O_PATH`.
#[cfg(target_os = "linux")]
const INTERMEDIATE: OFlags = OFlags::PATH;
#[cfg(not(target_os = "linux"))]
const INTERMEDIATE: OFlags = OFlags::RDONLY;

/// Opens each part of `relative` with `O_NOFOLLOW` from `dir`.
fn open_part_by_part(dir: impl AsFd, relative: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let parts: Vec<_> = relative.components().collect();
    let mut current: Option<OwnedFd> = None;
    for (i, part) in parts.iter().enumerate() {
        let Component::Normal(name) = part else {
            return Err(Errno::XDEV);
        };
        let last = i + 1 == parts.len();
        let part_flags = if last {
            flags | OFlags::NOFOLLOW
        } else {
            INTERMEDIATE | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        let next = match &current {
            Some(fd) => openat(fd, *name, part_flags, Mode::empty())?,
            None => openat(&dir, *name, part_flags, Mode::empty())?,
        };
        current = Some(next);
    }
    current.ok_or(Errno::NOENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_followed_beneath_only_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink("real", dir.path().join("inner")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let root = openat(
            rustix::fs::CWD,
            dir.path(),
            READ | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        assert!(open(&root, Path::new("inner/f"), READ, Links::Beneath).is_ok());
        assert!(open(&root, Path::new("inner/f"), READ, Links::Refused).is_err());
        assert!(open(&root, Path::new("real/f"), READ, Links::Refused).is_ok());
        assert_eq!(
            open(&root, Path::new("out"), READ, Links::Beneath).err(),
            Some(Errno::XDEV)
        );
        assert!(open_part_by_part(&root, Path::new("inner/f"), READ).is_err());
        assert!(open_part_by_part(&root, Path::new("real/f"), READ).is_ok());
    }
}
