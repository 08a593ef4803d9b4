//! The shell under the sandbox, enforced by the kernel: the `bash` processes pith starts run
//! under a Landlock ruleset built from the mode (reads anywhere but the deny list, writes only
//! where the mode allows, and with `network: false` no TCP connect or bind). The ruleset is
//! built in pith and applied in the child between `fork` and `exec`, so pith itself keeps its
//! rights and the whole process tree of the command inherits the restriction.

use std::path::PathBuf;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    path_beneath_rules,
};

use super::{SandboxMode, SandboxPolicy, tree};

/// The Landlock ABI the ruleset is written against (the crate enforces what the running kernel
/// has of it: TCP rules need v4).
const TARGET_ABI: ABI = ABI::V5;

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

/// What the shell runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// The Landlock ruleset of the mode.
    Landlock,
    /// Nothing: `full-access`, or no Landlock in the kernel and `requireKernelSandbox` off.
    None,
}

/// Why the shell may not run: the kernel cannot hold it and the settings require it.
pub fn unavailable_message() -> String {
    "the shell cannot run sandboxed: this kernel has no Landlock (set sandbox.requireKernelSandbox to false to run it unsandboxed, or run with --sandbox full-access)".into()
}

/// Puts `command` under `policy`: installs the Landlock ruleset to apply in the child. An
/// error when the kernel cannot enforce it and the policy requires it.
pub fn confine(
    command: &mut tokio::process::Command,
    policy: &SandboxPolicy,
) -> Result<Confinement, String> {
    if policy.mode == SandboxMode::FullAccess {
        return Ok(Confinement::None);
    }
    if landlock_abi().is_none() {
        return if policy.require_kernel {
            Err(unavailable_message())
        } else {
            Ok(Confinement::None)
        };
    }
    let ruleset =
        ruleset(policy).map_err(|err| format!("cannot build the shell's sandbox: {err}"))?;
    let slot = std::sync::Mutex::new(Some(ruleset));
    // SAFETY: the closure runs in the forked child before exec; it takes the ruleset built
    // here (its own mutex, uncontended) and makes two system calls (no_new_privs and
    // landlock_restrict_self).
    unsafe {
        command.pre_exec(move || {
            let ruleset = slot.lock().ok().and_then(|mut slot| slot.take());
            if let Some(ruleset) = ruleset {
                ruleset
                    .restrict_self()
                    .map_err(|err| std::io::Error::other(err.to_string()))?;
            }
            Ok(())
        });
    }
    Ok(Confinement::Landlock)
}

/// The ruleset of `policy` (not `full-access`).
fn ruleset(policy: &SandboxPolicy) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(TARGET_ABI))?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let readable = tree::readable_roots(&policy.deny_read, true);
    // Writes: the mode's directories, and /dev (/dev/null, the terminal; device files keep
    // their own permissions).
    let writable: Vec<PathBuf> = policy
        .writable()
        .into_iter()
        .chain(std::iter::once(PathBuf::from("/dev")))
        .collect();
    ruleset
        .create()?
        .add_rules(path_beneath_rules(
            readable,
            AccessFs::from_read(TARGET_ABI),
        ))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(TARGET_ABI)))
}
