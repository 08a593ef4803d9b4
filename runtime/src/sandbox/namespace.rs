//! The shell's view of the filesystem in its own mount namespace (Linux, as bubblewrap builds
//! one): in the child, before `exec`, a new user and mount namespace is made, each denied
//! directory is covered by an empty, read-only tmpfs no one may open (mode 000), each denied
//! file by an empty mode-000 file, and each protected path that exists is bound read-only over
//! itself. The Landlock ruleset applied after it then grants whole trees (everything readable,
//! the writable roots writable): nothing is split around a denied path, so a workspace or a
//! writable root that holds one stays whole, and files made after start are reached like any
//! other. Landlock also forbids the command to unmount what covers a denied path.
//!
//! Where unprivileged user namespaces are unavailable (some containers, AppArmor-restricted
//! hosts), [`usable`] is false and the shell falls back to Landlock alone, split around the
//! denied paths (see [`super::kernel`]). `PITH_SANDBOX_NAMESPACES=0` forces that fallback.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::SandboxPolicy;

/// One mount the child makes, its strings ready before `fork` (nothing is allocated after).
#[derive(Debug)]
enum Cover {
    /// An empty read-only tmpfs of mode 000 over a denied directory.
    Directory(CString),
    /// The empty mode-000 file bound read-only over a denied file (`flags`: those of the
    /// mount holding the source, which a read-only remount must keep).
    File {
        source: CString,
        target: CString,
        flags: libc::c_ulong,
    },
    /// A protected path bound read-only over itself.
    ReadOnly { path: CString, flags: libc::c_ulong },
}

/// The namespace a command's child sets up: its user mapping and its mounts.
#[derive(Debug)]
pub struct MountPlan {
    uid_map: CString,
    gid_map: CString,
    covers: Vec<Cover>,
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// True unless `PITH_SANDBOX_NAMESPACES=0` forces the fallback.
fn wanted() -> bool {
    std::env::var("PITH_SANDBOX_NAMESPACES").as_deref() != Ok("0")
}

/// True when this process may give a command its own user and mount namespace (probed once,
/// by starting `true` in one).
pub fn usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    wanted()
        && *USABLE.get_or_init(|| {
            // A tmpfs over the cache directory, in the probe's own namespace only.
            let cache = crate::agent_dir::cache_dir();
            if std::fs::create_dir_all(&cache).is_err() {
                return false;
            }
            let Some(plan) = MountPlan::new(&[cache], &[]) else {
                return false;
            };
            let mut command = std::process::Command::new("true");
            command
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            use std::os::unix::process::CommandExt;
            // SAFETY: the closure makes only system calls on strings built before the fork.
            unsafe {
                command.pre_exec(move || plan.enter());
            }
            command.status().is_ok_and(|status| status.success())
        })
}

/// The empty mode-000 file bound over denied files (made once, in the cache directory).
fn denied_file() -> Option<&'static Path> {
    static FILE: OnceLock<Option<PathBuf>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = crate::agent_dir::cache_dir().join("sandbox-denied-file");
        std::fs::create_dir_all(path.parent()?).ok()?;
        std::fs::write(&path, b"").ok()?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).ok()?;
        Some(path)
    })
    .as_deref()
}

/// The flags of the mount holding `path` that a remount in a user namespace must keep (the
/// kernel locks them).
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Some(c) = c_path(path) else {
        return 0;
    };
    // SAFETY: a valid string and a zeroed struct the kernel fills.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st, _)| stat.f_flag & st != 0)
        .fold(0, |flags, (_, ms)| flags | ms)
}

impl MountPlan {
    /// The plan that hides `hidden` and makes `protected` read-only (what exists of them; a
    /// protected path inside a hidden one is covered already). `None` when a path cannot be
    /// passed to the kernel.
    pub fn new(hidden: &[PathBuf], protected: &[PathBuf]) -> Option<MountPlan> {
        // SAFETY: geteuid and getegid cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut covers = Vec::new();
        let mut file_flags = None;
        for path in hidden {
            match std::fs::symlink_metadata(path) {
                Ok(meta) if meta.is_dir() => covers.push(Cover::Directory(c_path(path)?)),
                Ok(meta) if meta.is_file() => {
                    let source = denied_file()?;
                    let flags = *file_flags.get_or_insert_with(|| locked_flags(source));
                    covers.push(Cover::File {
                        source: c_path(source)?,
                        target: c_path(path)?,
                        flags,
                    });
                }
                _ => {}
            }
        }
        for path in protected {
            let inside_hidden = hidden.iter().any(|h| path.starts_with(h));
            // A link is left alone: binding it would bind where it points.
            let exists = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink());
            if exists && !inside_hidden {
                covers.push(Cover::ReadOnly {
                    path: c_path(path)?,
                    flags: locked_flags(path),
                });
            }
        }
        Some(MountPlan {
            uid_map: CString::new(format!("{uid} {uid} 1")).ok()?,
            gid_map: CString::new(format!("{gid} {gid} 1")).ok()?,
            covers,
        })
    }

    /// The plan of `policy`: its deny list hidden, its protected paths read-only.
    pub fn of(policy: &SandboxPolicy) -> Option<MountPlan> {
        MountPlan::new(&policy.deny_read, &policy.protected())
    }

    /// In the child, before `exec`: enters the new namespaces and makes the mounts. Only
    /// system calls on the strings made before the fork.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls with valid NUL-terminated strings and null pointers
        // where the kernel takes none.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
            write_file(c"/proc/self/setgroups", c"deny")?;
            write_file(c"/proc/self/uid_map", &self.uid_map)?;
            write_file(c"/proc/self/gid_map", &self.gid_map)?;
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for cover in &self.covers {
                match cover {
                    Cover::Directory(target) => check(libc::mount(
                        c"pith-denied".as_ptr(),
                        target.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        c"size=4k,nr_inodes=1,mode=000".as_ptr().cast(),
                    ))?,
                    Cover::File {
                        source,
                        target,
                        flags,
                    } => bind_read_only(source, target, *flags)?,
                    Cover::ReadOnly { path, flags } => bind_read_only(path, path, *flags)?,
                }
            }
        }
        Ok(())
    }
}

fn check(result: libc::c_int) -> std::io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Binds `source` over `target`, then makes that mount read-only, keeping the locked `flags`.
///
/// # Safety
/// A system call; safe after `fork`.
unsafe fn bind_read_only(
    source: &CString,
    target: &CString,
    flags: libc::c_ulong,
) -> std::io::Result<()> {
    // SAFETY: valid strings, null where the kernel takes none.
    unsafe {
        check(libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ))?;
        check(libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags,
            std::ptr::null(),
        ))
    }
}

/// Writes `text` to the file `path` (a `/proc` control file).
///
/// # Safety
/// System calls; safe after `fork`.
unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: valid strings; the descriptor is closed on every path.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = std::io::Error::last_os_error();
        libc::close(fd);
        if written == bytes.len() as isize {
            Ok(())
        } else {
            Err(error)
        }
    }
}
