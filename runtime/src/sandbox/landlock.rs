//! The shell's sandbox on Linux: a Landlock ruleset built from the mode (reads anywhere but
//! the deny list, writes only where the mode allows, and with `network: false` no TCP connect
//! or bind), after the mount namespace of [`super::namespace`] where the kernel allows one (the
//! deny list covered, the protected paths read-only: the ruleset then grants whole trees). Both
//! are built in pith and applied in the child between `fork` and `exec`, so pith itself keeps
//! its rights and the whole process tree of the command inherits the restriction. Every right
//! the ruleset handles is required of the kernel: one that cannot enforce them all counts as
//! one without Landlock.

use std::path::PathBuf;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::confinement::Confinement;
use super::{SandboxPolicy, tree};

/// The Landlock ABI the file rules need: v3, for truncation (older ABIs cannot deny it).
const FS_ABI: ABI = ABI::V3;
/// The ABI of TCP connect and bind rules (`network: false`).
const NET_ABI: ABI = ABI::V4;

/// The device files a shell may write; nothing else under /dev (no shared-memory or
/// message-queue files outside the roots, no new device nodes, no device ioctls).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The running kernel's Landlock ABI version, or `None` when it has no Landlock.
pub fn landlock_abi() -> Option<i32> {
    static ABI_VERSION: OnceLock<Option<i32>> = OnceLock::new();
    *ABI_VERSION.get_or_init(|| {
        // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute only queries the version.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                1u32,
            )
        };
        (version > 0).then_some(version as i32)
    })
}

/// Puts `command` under `policy` (not `full-access`): the mount namespace where it can be
/// made, then the Landlock ruleset, both applied in the child. An error when the kernel cannot
/// enforce it ([`super::kernel`] decides whether the policy requires it).
pub fn confine(
    command: &mut tokio::process::Command,
    policy: &SandboxPolicy,
) -> Result<Confinement, String> {
    let plan = if super::namespace::usable() {
        super::namespace::MountPlan::of(policy)
    } else {
        None
    };
    let ruleset = ruleset(policy, plan.is_some()).map_err(|err| {
        format!(
            "the shell cannot run sandboxed: this kernel's Landlock cannot hold it ({err}); set sandbox.requireKernelSandbox to false to run it unsandboxed, or run with --sandbox full-access"
        )
    })?;
    let confinement = if plan.is_some() {
        Confinement::Namespace
    } else {
        Confinement::Landlock
    };
    let mut ruleset = Some(ruleset);
    // SAFETY: the closure runs in the forked child before exec: it enters the namespace of the
    // plan (system calls on strings made here) and takes the ruleset built here and makes the
    // system calls of `restrict_self` (no_new_privs, then landlock_restrict_self); nothing is
    // allocated unless the kernel refuses.
    unsafe {
        command.pre_exec(move || {
            if let Some(plan) = &plan {
                plan.enter()?;
            }
            match ruleset.take() {
                Some(ruleset) => ruleset
                    .restrict_self()
                    .map(|_| ())
                    .map_err(|_| std::io::Error::last_os_error()),
                // Spawned again with the same command: never run unconfined.
                None => Err(std::io::Error::from_raw_os_error(libc::EPERM)),
            }
        });
    }
    Ok(confinement)
}

/// The ruleset of `policy` (not `full-access`), every handled right required of the kernel:
/// over `whole` trees (everything readable, the writable roots writable) when a mount
/// namespace covers the denied and protected paths, else split around them.
fn ruleset(policy: &SandboxPolicy, whole: bool) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(FS_ABI))?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    // Where the kernel has them (v6): no abstract unix sockets or signals out of the sandbox.
    ruleset = ruleset
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI::V6))?
        .set_compatibility(CompatLevel::HardRequirement);
    let (readable, writable, holders) = if whole {
        let writable: Vec<PathBuf> = policy
            .writable()
            .into_iter()
            .filter(|dir| dir.exists())
            .collect();
        (
            std::sync::Arc::new(vec![PathBuf::from("/")]),
            writable,
            Vec::new(),
        )
    } else {
        (
            tree::cached_roots(&policy.deny_read, true),
            policy.writable_area(true),
            // Listed, names only (a denied directory's names too: the fallback's weakening).
            tree::holders(&policy.deny_read),
        )
    };
    let devices: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    let device_rights = AccessFs::from_read(FS_ABI) | AccessFs::WriteFile | AccessFs::Truncate;
    // The rules themselves adapt to what each path is (a file takes no directory rights).
    ruleset
        .create()?
        .set_compatibility(CompatLevel::BestEffort)
        .add_rules(path_beneath_rules(
            readable.iter(),
            AccessFs::from_read(FS_ABI),
        ))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(FS_ABI)))?
        .add_rules(path_beneath_rules(holders, AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(devices, device_rights))
}
