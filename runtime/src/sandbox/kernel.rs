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

use std::ffi::{OsStr, OsString};

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

pub use super::confinement::Confinement;

/// A platform's mechanism for holding commands: the seam. [`ThisPlatform`] is the real one,
/// chosen when pith is built; the rules every platform shares (full access bypasses it, the
/// caches are made first, a missing mechanism refuses or runs unconfined as the settings say,
/// the environment is withheld) live in [`command_with`], and the tests hold them with a fake.
pub trait Mechanism {
    /// Its name when it can hold commands here (`namespace+landlock`, `landlock`,
    /// `seatbelt`), or `None` when it cannot.
    fn available(&self) -> Option<&'static str>;
    /// What is missing when it cannot ("this kernel has no Landlock").
    fn missing(&self) -> &'static str;
    /// `program` held under `policy` (not `full-access`); an error names why it cannot be.
    fn confine(
        &self,
        program: &OsStr,
        policy: &SandboxPolicy,
    ) -> Result<(tokio::process::Command, Confinement), String>;
}

/// The mechanism of the platform pith was built for.
pub struct ThisPlatform;

impl Mechanism for ThisPlatform {
    fn available(&self) -> Option<&'static str> {
        #[cfg(target_os = "linux")]
        {
            match (landlock_abi(), super::namespace::usable()) {
                (None, _) => None,
                (Some(_), true) => Some("namespace+landlock"),
                (Some(_), false) => Some("landlock"),
            }
        }
        #[cfg(target_os = "macos")]
        {
            std::path::Path::new(super::seatbelt::SANDBOX_EXEC)
                .exists()
                .then_some("seatbelt")
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            None
        }
    }

    fn missing(&self) -> &'static str {
        if cfg!(target_os = "linux") {
            "this kernel has no Landlock"
        } else if cfg!(target_os = "macos") {
            "sandbox-exec is missing"
        } else {
            "pith has no kernel sandbox on this platform yet"
        }
    }

    #[allow(unused_variables)] // (no mechanism to give them to on other platforms)
    fn confine(
        &self,
        program: &OsStr,
        policy: &SandboxPolicy,
    ) -> Result<(tokio::process::Command, Confinement), String> {
        #[cfg(target_os = "linux")]
        {
            let mut command = tokio::process::Command::new(program);
            let confinement = super::landlock::confine(&mut command, policy)?;
            Ok((command, confinement))
        }
        #[cfg(target_os = "macos")]
        {
            let mut command = tokio::process::Command::new(super::seatbelt::SANDBOX_EXEC);
            command
                .arg("-p")
                .arg(super::seatbelt::profile(policy))
                .arg(program);
            Ok((command, Confinement::Seatbelt))
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            Err(unavailable_message())
        }
    }
}

/// Why the shell may not run, `missing` being what the platform lacks.
fn unavailable_because(missing: &str) -> String {
    format!(
        "the shell cannot run sandboxed: {missing} (set sandbox.requireKernelSandbox to false to run it unsandboxed, or run with --sandbox full-access)"
    )
}

/// Why the shell may not run: this platform cannot hold it and the settings require it.
pub fn unavailable_message() -> String {
    unavailable_because(ThisPlatform.missing())
}

/// The mechanism that holds commands in a sandboxed mode, as `get_state` and the start-up
/// notice name it: `namespace+landlock`, `landlock`, `seatbelt` or `unavailable`.
pub fn mechanism() -> &'static str {
    ThisPlatform.available().unwrap_or("unavailable")
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
        ThisPlatform.available().map(str::to_string)
    }
}

/// Drops what lets a command act outside the sandbox through others: pith's own API keys,
/// and the sockets of agents and multiplexers that run commands or sign for the user.
pub fn withhold_environment(command: &mut tokio::process::Command) {
    withhold(command, std::env::vars_os().map(|(name, _)| name));
}

/// Drops the withheld ones of the variables `names` from `command`'s environment.
fn withhold(command: &mut tokio::process::Command, names: impl Iterator<Item = OsString>) {
    for name in names {
        let text = name.to_string_lossy();
        if text.ends_with("_API_KEY") || WITHHELD.contains(&text.as_ref()) {
            command.env_remove(&name);
        }
    }
}

/// A command running `program` under `policy` on this platform, and what holds it; its
/// arguments, directory and environment are added by the caller. An error when the platform
/// cannot hold it and the policy requires it (with no requirement, it runs unconfined and says
/// so by [`Confinement::None`]).
pub fn command(
    program: impl AsRef<OsStr>,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    command_with(&ThisPlatform, program.as_ref(), policy)
}

/// [`command`] with the given mechanism.
pub fn command_with(
    mechanism: &dyn Mechanism,
    program: &OsStr,
    policy: &SandboxPolicy,
) -> Result<(tokio::process::Command, Confinement), String> {
    if policy.mode == SandboxMode::FullAccess {
        return Ok((tokio::process::Command::new(program), Confinement::None));
    }
    policy.prepare_caches();
    let held = match mechanism.available() {
        None => Err(unavailable_because(mechanism.missing())),
        Some(_) => mechanism.confine(program, policy),
    };
    match held {
        Ok((mut command, confinement)) => {
            withhold_environment(&mut command);
            Ok((command, confinement))
        }
        Err(message) if policy.require_kernel => Err(message),
        Err(_) => Ok((tokio::process::Command::new(program), Confinement::None)),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Mutex;

    use super::*;

    /// A platform of the test's making: a mechanism or none, and one that can refuse a policy.
    struct Fake {
        name: Option<&'static str>,
        refuses: Option<&'static str>,
        /// What each confined command was given: its writable directories and deny list.
        seen: Mutex<Vec<(Vec<PathBuf>, Vec<PathBuf>)>>,
    }

    impl Fake {
        fn new(name: Option<&'static str>, refuses: Option<&'static str>) -> Fake {
            Fake {
                name,
                refuses,
                seen: Mutex::new(Vec::new()),
            }
        }
    }

    impl Mechanism for Fake {
        fn available(&self) -> Option<&'static str> {
            self.name
        }

        fn missing(&self) -> &'static str {
            "the fake platform has no mechanism"
        }

        fn confine(
            &self,
            program: &OsStr,
            policy: &SandboxPolicy,
        ) -> Result<(tokio::process::Command, Confinement), String> {
            self.seen
                .lock()
                .unwrap()
                .push((policy.writable(), policy.deny_read.clone()));
            match self.refuses {
                Some(reason) => Err(reason.to_string()),
                None => Ok((tokio::process::Command::new(program), Confinement::Seatbelt)),
            }
        }
    }

    /// The default mode's policy for a workspace, with no caches to make in the real home.
    fn policy(workspace: &std::path::Path, require_kernel: bool) -> SandboxPolicy {
        let mut policy = SandboxPolicy::workspace_write(workspace);
        policy.cache_dirs.clear();
        policy.require_kernel = require_kernel;
        policy
    }

    fn confinement(
        held: Result<(tokio::process::Command, Confinement), String>,
    ) -> Result<Confinement, String> {
        held.map(|(_, confinement)| confinement)
    }

    #[test]
    fn full_access_never_reaches_the_platform() {
        let dir = tempfile::tempdir().unwrap();
        let fake = Fake::new(Some("fake"), None);
        let open = SandboxPolicy::full_access(dir.path());
        let held = command_with(&fake, OsStr::new("sh"), &open);
        assert_eq!(confinement(held), Ok(Confinement::None));
        assert!(fake.seen.lock().unwrap().is_empty());
    }

    #[test]
    fn without_a_mechanism_the_shell_is_refused_or_runs_unconfined_as_the_settings_say() {
        let dir = tempfile::tempdir().unwrap();
        let none = Fake::new(None, None);
        assert_eq!(
            confinement(command_with(&none, OsStr::new("sh"), &policy(dir.path(), true))),
            Err("the shell cannot run sandboxed: the fake platform has no mechanism (set sandbox.requireKernelSandbox to false to run it unsandboxed, or run with --sandbox full-access)".into())
        );
        assert_eq!(
            confinement(command_with(
                &none,
                OsStr::new("sh"),
                &policy(dir.path(), false)
            )),
            Ok(Confinement::None)
        );
        assert!(none.seen.lock().unwrap().is_empty());
    }

    #[test]
    fn a_mechanism_gets_the_shared_rules_and_its_refusal_follows_the_settings() {
        let dir = tempfile::tempdir().unwrap();
        let fake = Fake::new(Some("fake"), None);
        let required = policy(dir.path(), true);
        assert_eq!(
            confinement(command_with(&fake, OsStr::new("sh"), &required)),
            Ok(Confinement::Seatbelt)
        );
        let seen = fake.seen.lock().unwrap().clone();
        let (writable, deny) = &seen[0];
        assert!(writable.contains(&dir.path().to_path_buf()), "{writable:?}");
        let home = crate::agent_dir::home_dir();
        assert!(deny.contains(&home.join(".ssh")), "{deny:?}");
        assert_eq!(deny, &required.deny_read);

        let refusing = Fake::new(Some("fake"), Some("this policy cannot be held"));
        assert_eq!(
            confinement(command_with(&refusing, OsStr::new("sh"), &required)),
            Err("this policy cannot be held".into())
        );
        assert_eq!(
            confinement(command_with(
                &refusing,
                OsStr::new("sh"),
                &policy(dir.path(), false)
            )),
            Ok(Confinement::None)
        );
    }

    #[test]
    fn keys_and_agent_sockets_are_withheld_and_the_rest_kept() {
        let mut command = tokio::process::Command::new("sh");
        let names = ["OPENAI_API_KEY", "SSH_AUTH_SOCK", "TMUX", "PATH", "HOME"];
        withhold(&mut command, names.iter().map(OsString::from));
        let removed: Vec<String> = command
            .as_std()
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        assert_eq!(removed, ["OPENAI_API_KEY", "SSH_AUTH_SOCK", "TMUX"]);
    }
}
