//! The platform seam of the shell's sandbox: every process pith starts for the model (the
//! `bash` tool's and the `bash` command's shells, third-party plugins' processes, MCP servers)
//! is made here, held by the platform's mechanism with the same promises and messages:
//!
//! - Linux: a mount namespace covering the deny list and a Landlock ruleset
//!   ([`super::landlock`], [`super::namespace`]), or Landlock alone where namespaces are
//!   refused.
//! - macOS: a Seatbelt profile applied by `sandbox-exec` ([`super::seatbelt`]).
//! - Elsewhere (Windows): no mechanism; the shell refuses to run unless the user chose
//!   `--sandbox full-access` or `sandbox.requireKernelSandbox: false`.

use std::ffi::OsStr;

use super::{SandboxMode, SandboxPolicy};

/// Environment variables a sandboxed shell does not get (besides every `*_API_KEY`).
const WITHHELD: &[&str] = &[
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "TMUX",
    "TMUX_PANE",
    "STY",
];

#[cfg(target_os = "linux")]
pub use super::landlock::landlock_abi;

/// What a command runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Linux: a mount namespace hiding the deny list and the Landlock ruleset of the mode over
    /// whole trees.
    Namespace,
    /// Linux: the Landlock ruleset of the mode alone, split around the denied and protected
    /// paths (the fallback without user namespaces).
    Landlock,
    /// macOS: the Seatbelt profile of the mode.
    Seatbelt,
    /// Nothing: `full-access`, or no mechanism and `requireKernelSandbox` off.
    None,
}

/// Why the shell may not run: the platform cannot hold it and the settings require it.
pub fn unavailable_message() -> String {
    let what = if cfg!(target_os = "linux") {
        "this kernel has no Landlock"
    } else if cfg!(target_os = "macos") {
        "sandbox-exec is missing"
    } else {
        "pith has no kernel sandbox on this platform yet"
    };
    format!(
        "the shell cannot run sandboxed: {what} (set sandbox.requireKernelSandbox to false to run it unsandboxed, or run with --sandbox full-access)"
    )
}

/// The mechanism that holds commands in a sandboxed mode, as `get_state` and the start-up
/// notice name it: `namespace+landlock`, `landlock`, `seatbelt` or `unavailable`.
pub fn mechanism() -> &'static str {
    #[cfg(target_os = "linux")]
    {
        match (landlock_abi(), super::namespace::usable()) {
            (None, _) => "unavailable",
            (Some(_), true) => "namespace+landlock",
            (Some(_), false) => "landlock",
        }
    }
    #[cfg(target_os = "macos")]
    {
        if std::path::Path::new(super::seatbelt::SANDBOX_EXEC).exists() {
            "seatbelt"
        } else {
            "unavailable"
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        "unavailable"
    }
}

/// The kernel facility in force, as `get_state.sandbox.kernel` shows it (`landlock v6`,
/// `seatbelt`), or `None` without one.
pub fn kernel_facility() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        landlock_abi().map(|abi| format!("landlock v{abi}"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        (mechanism() != "unavailable").then(|| mechanism().to_string())
    }
}

/// Drops what lets a command act outside the sandbox through others: pith's own API keys,
/// and the sockets of agents and multiplexers that run commands or sign for the user.
pub fn withhold_environment(command: &mut tokio::process::Command) {
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.ends_with("_API_KEY") || WITHHELD.contains(&text.as_ref()) {
            command.env_remove(&name);
        }
    }
}

/// A command running `program` under `policy`, and what holds it; its arguments, directory
/// and environment are added by the caller. An error when the platform cannot hold it and
/// the policy requires it (with no requirement, it runs unconfined and says so by
/// [`Confinement::None`]).
pub fn command(
    program: impl AsRef<OsStr>,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    let program = program.as_ref();
    if policy.mode == SandboxMode::FullAccess {
        return Ok((tokio::process::Command::new(program), Confinement::None));
    }
    policy.prepare_caches();
    platform_command(program, policy)
}

#[cfg(target_os = "linux")]
fn platform_command(
    program: &OsStr,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    let mut command = tokio::process::Command::new(program);
    let confinement = super::landlock::confine(&mut command, policy)?;
    Ok((command, confinement))
}

#[cfg(target_os = "macos")]
fn platform_command(
    program: &OsStr,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    if mechanism() == "unavailable" {
        return unconfined(program, policy);
    }
    let mut command = tokio::process::Command::new(super::seatbelt::SANDBOX_EXEC);
    command
        .arg("-p")
        .arg(super::seatbelt::profile(policy))
        .arg(program);
    withhold_environment(&mut command);
    Ok((command, Confinement::Seatbelt))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn platform_command(
    program: &OsStr,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    unconfined(program, policy)
}

/// `program` with no mechanism: refused when the policy requires one.
#[cfg(not(target_os = "linux"))]
fn unconfined(
    program: &OsStr,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    if policy.require_kernel {
        return Err(unavailable_message());
    }
    Ok((tokio::process::Command::new(program), Confinement::None))
}
