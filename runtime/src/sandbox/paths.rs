//! The sandbox's rules on one path, decided when the path is used: hidden (the deny list and
//! pith's own `/proc`), or protected from writes (the deny list, the agent directory and the
//! never-writable paths). The first-party tools' filesystem and the search import ask here at
//! every call, on the path as named and on the path its links lead to, so a file created after
//! start is judged like any other and a directory that holds a denied path stays whole.

use std::path::{Component, Path, PathBuf};

use super::{SandboxMode, SandboxPolicy};

/// The rules a call's filesystem is held to (none in `full-access`).
#[derive(Debug, Clone, Default)]
pub struct PathRules {
    /// No access at all: the deny list and `/proc`.
    hidden: Vec<PathBuf>,
    /// No writes.
    protected: Vec<PathBuf>,
}

impl PathRules {
    /// The rules of `policy`; `None` in `full-access`.
    pub fn of(policy: &SandboxPolicy) -> Option<PathRules> {
        if policy.mode == SandboxMode::FullAccess {
            return None;
        }
        let mut hidden = policy.deny_read.clone();
        hidden.push(PathBuf::from("/proc"));
        Some(PathRules {
            hidden,
            protected: policy.protected(),
        })
    }

    /// True when `path` (absolute, lexically normal) may not be reached at all.
    pub fn hides(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| path.starts_with(h))
    }

    /// The hidden paths under `dir` (absolute), relative to it: what a walk of `dir` skips.
    pub fn hidden_under(&self, dir: &Path) -> Vec<PathBuf> {
        self.hidden
            .iter()
            .filter_map(|h| h.strip_prefix(dir).ok())
            .filter(|rest| !rest.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect()
    }

    /// Whether `path` (absolute) may be reached — and, with `write`, changed: it is judged as
    /// named and as its links resolve (the last one only with `follow`).
    pub fn allows(&self, path: &Path, follow: bool, write: bool) -> bool {
        let named = normalize(path);
        let real = real_path(&named, follow);
        [named, real]
            .iter()
            .all(|p| !(self.hides(p) || write && self.protected.iter().any(|w| p.starts_with(w))))
    }
}

/// `path` with `.` dropped and `..` applied, without touching the filesystem.
pub fn normalize(path: &Path) -> PathBuf {
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

/// The path `path` (absolute, normal) names on disk: its longest existing prefix with every
/// link resolved, and the rest as written. The last component is resolved only with `follow`,
/// and then even when its link leads to a path that does not exist yet (a write through it
/// creates the target).
pub fn real_path(path: &Path, follow: bool) -> PathBuf {
    resolve(path, follow, 0)
}

/// Links followed before a path is taken as it is (the system's own limit is 40).
const MAX_LINKS: usize = 40;

fn resolve(path: &Path, follow: bool, links: usize) -> PathBuf {
    let (base, last) = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => (parent, Some(name)),
        _ => (path, None),
    };
    let mut out = base
        .ancestors()
        .find_map(|ancestor| {
            let rest = base.strip_prefix(ancestor).unwrap_or(Path::new(""));
            ancestor.canonicalize().ok().map(|real| real.join(rest))
        })
        .unwrap_or_else(|| base.to_path_buf());
    out.extend(last);
    if follow
        && links < MAX_LINKS
        && let Ok(target) = std::fs::read_link(&out)
    {
        let from = out.parent().unwrap_or(Path::new("/"));
        return resolve(&normalize(&from.join(target)), true, links + 1);
    }
    out
}

/// The path an open file or directory names now (`None` where the system cannot say: then
/// nothing through it is allowed).
pub fn file_path(file: &std::fs::File) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        descriptor_path(file.as_fd())
    }
    #[cfg(windows)]
    {
        use std::os::windows::ffi::OsStringExt;
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::GetFinalPathNameByHandleW;
        let mut buffer = vec![0u16; 32 * 1024];
        // SAFETY: the handle is open for the call; the buffer's length is passed.
        let length = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle(),
                buffer.as_mut_ptr(),
                buffer.len() as u32,
                0,
            )
        } as usize;
        if length == 0 || length >= buffer.len() {
            return None;
        }
        let path = PathBuf::from(std::ffi::OsString::from_wide(&buffer[..length]));
        // `\\?\C:\…` as the system names it; `C:\…` as the guest does.
        let text = path.to_string_lossy();
        Some(match text.strip_prefix(r"\\?\") {
            Some(rest) if !rest.starts_with("UNC") => PathBuf::from(rest),
            _ => path,
        })
    }
}

/// The path an open descriptor names now (`None` where the system cannot say).
#[cfg(unix)]
pub fn descriptor_path(fd: std::os::fd::BorrowedFd<'_>) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    #[cfg(target_os = "linux")]
    {
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut buffer = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: F_GETPATH writes at most PATH_MAX bytes, NUL-terminated, into the buffer.
        let done = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPATH, buffer.as_mut_ptr()) };
        if done == -1 {
            return None;
        }
        let end = buffer.iter().position(|b| *b == 0)?;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(&buffer[..end])))
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = fd.as_raw_fd();
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_judged_as_named_and_as_resolved() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join(".ssh")).unwrap();
        std::fs::create_dir_all(h.join("agent")).unwrap();
        std::os::unix::fs::symlink(h.join(".ssh"), h.join("keys")).unwrap();
        let rules = PathRules {
            hidden: vec![h.join(".ssh")],
            protected: vec![h.join(".ssh"), h.join("agent")],
        };
        assert!(rules.allows(&h.join("notes.txt"), true, true));
        assert!(rules.allows(&h.join("new/dir/file"), true, true));
        assert!(!rules.allows(&h.join(".ssh/id_rsa"), true, false));
        assert!(!rules.allows(&h.join("keys/id_rsa"), true, false));
        assert!(!rules.allows(&h.join("src/../.ssh"), false, false));
        assert!(rules.allows(&h.join("agent/models.json"), true, false));
        assert!(!rules.allows(&h.join("agent/models.json"), true, true));
        // The link itself, not followed, is a name in the home directory.
        assert!(rules.allows(&h.join("keys"), false, false));
        assert!(!rules.allows(&h.join("keys"), true, false));
        // A link to a file not made yet resolves to where the file would be.
        std::os::unix::fs::symlink(h.join(".ssh/new"), h.join("later")).unwrap();
        assert_eq!(real_path(&h.join("later"), true), h.join(".ssh/new"));
        assert!(!rules.allows(&h.join("later"), true, true));
        std::os::unix::fs::symlink("later", h.join("chain")).unwrap();
        assert_eq!(real_path(&h.join("chain"), true), h.join(".ssh/new"));
        assert_eq!(rules.hidden_under(&h), [PathBuf::from(".ssh")]);
        assert!(rules.hidden_under(&h.join("src")).is_empty());
    }
}
