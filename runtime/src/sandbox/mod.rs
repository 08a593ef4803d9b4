//! The sandbox of everything the model drives: the first-party tools (through their WASI view)
//! and the shell (the `bash` tool's and the `bash` command's processes, through the kernel, see
//! [`kernel`]). Three modes, after Codex's: `read-only`, `workspace-write` (the default) and
//! `full-access`; reads anywhere but a deny list, writes only in the workspace and the writable
//! roots. Third-party plugins keep their own rule (the workspace access they declare and are
//! granted): a mode never widens it.

pub mod caches;
pub mod confinement;
pub mod git;
pub mod kernel;
#[cfg(target_os = "linux")]
pub mod landlock;
#[cfg(target_os = "linux")]
pub mod namespace;
pub mod paths;
pub mod seatbelt;
pub mod shell;
pub mod shell_program;
pub mod tree;

use std::path::{Path, PathBuf};

pub use pith_sdk::sandbox::clean;

use serde_json::{Value, json};

use crate::agent_dir::{expand_tilde, home_dir};
use crate::settings::Settings;

/// How much the model's tools and shell may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// Reads anywhere not denied; no writes.
    ReadOnly,
    /// Reads anywhere not denied; writes in the workspace and the writable roots.
    WorkspaceWrite,
    /// No restriction.
    FullAccess,
}

/// The modes a user may name, the default second.
pub const MODES: &[&str] = &["read-only", "workspace-write", "full-access"];

impl SandboxMode {
    /// Parses a mode's name; the error lists the modes.
    pub fn parse(name: &str) -> Result<SandboxMode, String> {
        match name {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "full-access" | "danger-full-access" => Ok(SandboxMode::FullAccess),
            other => Err(format!(
                "unknown sandbox mode {other:?}: the modes are {}",
                MODES.join(", ")
            )),
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }
}

/// Whether a call that needs more than the mode allows is put to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Never: the call fails with the reason.
    Never,
    /// A `confirm` dialog asks the host before a file tool's call beyond the mode; yes allows
    /// that one call.
    OnEscalation,
    /// As [`Approval::OnEscalation`], and after a shell command the sandbox denied something:
    /// yes runs that one command again outside the sandbox.
    OnFailure,
}

impl Approval {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Approval::Never => "never",
            Approval::OnEscalation => "on-escalation",
            Approval::OnFailure => "on-failure",
        }
    }

    /// True when a file tool's call beyond the mode is put to the host.
    pub fn asks_before(self) -> bool {
        self != Approval::Never
    }
}

/// The paths denied to reads by default (credentials), relative to the home directory.
pub const DEFAULT_DENY_READ: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".password-store",
    ".pi/agent/auth.json",
];

/// The sandbox as configured for a session.
#[derive(Debug, Clone)]
pub struct SandboxPolicy {
    /// The mode.
    pub mode: SandboxMode,
    /// The workspace (writable in `workspace-write`).
    pub workspace: PathBuf,
    /// Other writable directories (`sandbox.writableRoots`; the temp dir by default).
    pub writable_roots: Vec<PathBuf>,
    /// Paths no read may reach (`sandbox.denyRead`, after the defaults).
    pub deny_read: Vec<PathBuf>,
    /// Whether the shell may open network connections (`sandbox.network`).
    pub network: bool,
    /// Whether the shell refuses to run without the kernel sandbox
    /// (`sandbox.requireKernelSandbox`).
    pub require_kernel: bool,
    /// `sandbox.approval`.
    pub approval: Approval,
    /// The agent directory: never writable in a sandboxed mode (its settings and trust record
    /// would widen the next run), even inside the workspace.
    pub agent_dir: PathBuf,
    /// The toolchains' caches `workspace-write` lets the shell write (`sandbox.cacheDirs`);
    /// those that exist are writable roots.
    pub cache_dirs: Vec<caches::CacheDir>,
    /// What git writes for a workspace whose git directory lives elsewhere (a worktree's).
    pub git_dirs: Vec<PathBuf>,
    /// What no sandboxed mode writes, wherever it lies: shell start files, credentials, the
    /// directories of installed executables, a linked repository's hooks and configuration.
    pub never_writable: Vec<PathBuf>,
    /// The shell commands run in (`shellPath` in the settings, `~` expanded), else pi's
    /// search (see [`shell_program`]).
    pub shell_path: Option<PathBuf>,
    /// Prepended (with a newline) to every command the shell runs (`shellCommandPrefix`, as
    /// pi: e.g. `shopt -s expand_aliases`).
    pub shell_prefix: Option<String>,
}

impl SandboxPolicy {
    /// No restriction (for embedding and tools run by hand).
    pub fn full_access(workspace: &Path) -> SandboxPolicy {
        SandboxPolicy {
            mode: SandboxMode::FullAccess,
            workspace: workspace.to_path_buf(),
            writable_roots: Vec::new(),
            deny_read: Vec::new(),
            network: true,
            require_kernel: false,
            approval: Approval::Never,
            agent_dir: PathBuf::new(),
            cache_dirs: Vec::new(),
            git_dirs: Vec::new(),
            never_writable: Vec::new(),
            shell_path: None,
            shell_prefix: None,
        }
    }

    /// `command` as the shell runs it: after `shellCommandPrefix` and a newline, when set.
    pub fn shell_command(&self, command: &str) -> String {
        match &self.shell_prefix {
            Some(prefix) => format!("{prefix}\n{command}"),
            None => command.to_string(),
        }
    }

    /// The shell to run commands with: `shellPath`, else pi's search; an error names what
    /// to install or set.
    pub fn shell(&self) -> Result<PathBuf, String> {
        shell_program::shell(self.shell_path.as_deref())
    }

    /// The default policy (`workspace-write`, the default roots and deny list) for `workspace`.
    pub fn workspace_write(workspace: &Path) -> SandboxPolicy {
        let agent_dir = crate::agent_dir::AgentDir::resolve(None);
        let mut policy = SandboxPolicy::full_access(workspace);
        if let Ok(default) =
            SandboxPolicy::from_settings(None, &Settings::default(), workspace, agent_dir.root())
        {
            policy = default;
        } else {
            // Never wider than the default when the defaults cannot be read.
            policy.mode = SandboxMode::ReadOnly;
        }
        policy
    }

    /// The policy from `--sandbox` (else `sandbox.mode`) and the `sandbox` settings; `agent_dir`
    /// (whose `auth.json` is denied) and the workspace are absolute.
    pub fn from_settings(
        flag: Option<&str>,
        settings: &Settings,
        workspace: &Path,
        agent_dir: &Path,
    ) -> Result<SandboxPolicy, String> {
        let section = settings.get("sandbox").cloned().unwrap_or(Value::Null);
        let text = |key: &str| section.get(key).and_then(Value::as_str);
        let flag_of = |key: &str, default: bool| -> Result<bool, String> {
            match section.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(format!("settings sandbox.{key} must be true or false")),
            }
        };
        let paths = |key: &str| -> Result<Vec<PathBuf>, String> {
            match section.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(|p| absolute(workspace, &expand_tilde(Path::new(p))))
                            .ok_or_else(|| format!("settings sandbox.{key} must list paths"))
                    })
                    .collect(),
                Some(_) => Err(format!("settings sandbox.{key} must be a list of paths")),
            }
        };
        let mode = SandboxMode::parse(flag.or(text("mode")).unwrap_or("workspace-write"))?;
        let approval = match text("approval").unwrap_or("never") {
            "never" => Approval::Never,
            "on-escalation" => Approval::OnEscalation,
            "on-failure" => Approval::OnFailure,
            other => {
                return Err(format!(
                    "settings sandbox.approval {other:?}: it is \"never\", \"on-escalation\" or \"on-failure\""
                ));
            }
        };
        let mut writable_roots = match section.get("writableRoots") {
            None | Some(Value::Null) => vec![std::env::temp_dir()],
            _ => paths("writableRoots")?,
        };
        writable_roots.retain(|root| !root.as_os_str().is_empty());
        // Compared with canonical paths (the tools' and the kernel's views resolve links).
        let canonical = |path: PathBuf| path.canonicalize().unwrap_or(path);
        let writable_roots: Vec<PathBuf> = writable_roots.into_iter().map(canonical).collect();
        let workspace = canonical(workspace.to_path_buf());
        let home = home_dir();
        let mut listed: Vec<PathBuf> = DEFAULT_DENY_READ.iter().map(|p| home.join(p)).collect();
        listed.push(agent_dir.join("auth.json"));
        listed.extend(paths("denyRead")?);
        // Each as written (cleaned) and as the filesystem resolves it (through links on the way).
        let mut deny_read: Vec<PathBuf> = Vec::new();
        for path in listed {
            let clean = clean(&path);
            deny_read.push(resolved(&clean));
            deny_read.push(clean);
        }
        deny_read.sort();
        deny_read.dedup();
        let lookup = |name: &str| std::env::var_os(name);
        let mut cache_dirs = match section.get("cacheDirs") {
            None | Some(Value::Null) | Some(Value::Bool(true)) => {
                caches::default_cache_dirs(&home, &lookup)
            }
            Some(Value::Bool(false)) => Vec::new(),
            Some(Value::Array(_)) => caches::default_cache_dirs(&home, &lookup),
            Some(_) => {
                return Err(
                    "settings sandbox.cacheDirs must be true, false or a list of paths (added to the toolchain caches)".into(),
                );
            }
        };
        if matches!(section.get("cacheDirs"), Some(Value::Array(_))) {
            cache_dirs.extend(
                paths("cacheDirs")?
                    .into_iter()
                    .map(|path| caches::CacheDir {
                        path,
                        creation: caches::Creation::Always,
                    }),
            );
        }
        let linked = git::linked_git(&workspace);
        let never_writable = caches::never_writable(&home, &lookup, &linked.refused)
            .iter()
            .flat_map(|path| {
                let clean = clean(path);
                [resolved(&clean), clean]
            })
            .collect();
        Ok(SandboxPolicy {
            mode,
            workspace,
            writable_roots,
            deny_read,
            network: flag_of("network", true)?,
            require_kernel: flag_of("requireKernelSandbox", true)?,
            approval,
            agent_dir: resolved(&clean(agent_dir)),
            cache_dirs,
            git_dirs: linked.writable,
            never_writable,
            shell_path: match settings.get("shellPath") {
                None | Some(Value::Null) => None,
                Some(Value::String(path)) => Some(expand_tilde(Path::new(path))),
                Some(_) => return Err("settings shellPath must be a path".into()),
            },
            shell_prefix: match settings.get("shellCommandPrefix") {
                None | Some(Value::Null) => None,
                Some(Value::String(prefix)) if prefix.is_empty() => None,
                Some(Value::String(prefix)) => Some(prefix.clone()),
                Some(_) => return Err("settings shellCommandPrefix must be a string".into()),
            },
        })
    }

    /// True when reads of `path` (absolute) are denied.
    pub fn read_denied(&self, path: &Path) -> bool {
        self.mode != SandboxMode::FullAccess && self.deny_read.iter().any(|d| path.starts_with(d))
    }

    /// The directories writes may reach (none in `read-only`; `/` in `full-access`).
    pub fn writable(&self) -> Vec<PathBuf> {
        match self.mode {
            SandboxMode::ReadOnly => Vec::new(),
            SandboxMode::WorkspaceWrite => std::iter::once(self.workspace.clone())
                .chain(self.writable_roots.iter().cloned())
                .chain(
                    self.cache_dirs
                        .iter()
                        .filter(|dir| dir.path.is_dir())
                        .map(|dir| dir.path.clone()),
                )
                .chain(self.git_dirs.iter().cloned())
                .collect(),
            SandboxMode::FullAccess => vec![PathBuf::from("/")],
        }
    }

    /// What writes may never reach in a sandboxed mode: the deny list, the agent directory and
    /// the never-writable paths.
    pub fn protected(&self) -> Vec<PathBuf> {
        self.deny_read
            .iter()
            .cloned()
            .chain((!self.agent_dir.as_os_str().is_empty()).then(|| self.agent_dir.clone()))
            .chain(self.never_writable.iter().cloned())
            .collect()
    }

    /// Creates the missing toolchain caches whose toolchain is installed, so the shell's
    /// kernel rules can grant them (a no-op outside `workspace-write`).
    pub fn prepare_caches(&self) {
        if self.mode == SandboxMode::WorkspaceWrite {
            caches::create_missing(&self.cache_dirs, std::env::var_os("PATH").as_ref());
        }
    }

    /// True when `dir` is, or holds, a path writes may never reach (the deny list, the agent
    /// directory): such a directory is never opened whole for a call.
    pub fn holds_protected(&self, dir: &Path) -> bool {
        self.protected()
            .iter()
            .any(|p| p.starts_with(dir) || dir.starts_with(p))
    }

    /// The writable area as roots: the mode's directories without the protected paths in them
    /// (directories only, or with `files` the files beside them too).
    pub fn writable_area(&self, files: bool) -> Vec<PathBuf> {
        if self.mode == SandboxMode::FullAccess {
            return vec![PathBuf::from("/")];
        }
        let protected = self.protected();
        // Only what exists: a rule or a view needs a directory to hold.
        self.writable()
            .iter()
            .filter(|dir| dir.exists())
            .flat_map(|dir| tree::roots_under(dir, &protected, files))
            .collect()
    }

    /// True when writes to `path` (absolute) are allowed.
    pub fn may_write(&self, path: &Path) -> bool {
        if self.mode == SandboxMode::FullAccess {
            return true;
        }
        self.writable().iter().any(|root| path.starts_with(root))
            && !self.protected().iter().any(|p| path.starts_with(p))
    }

    /// Why a write to `path` is denied, with the setting or flag that would allow it.
    pub fn write_denial(&self, path: &Path) -> String {
        pith_sdk::sandbox::write_denied(path, self.mode.as_str())
    }

    /// The environment that tells a first-party tool its sandbox (so its errors can say why an
    /// access failed): `PITH_SANDBOX_MODE`, `PITH_SANDBOX_WRITABLE` and
    /// `PITH_SANDBOX_DENY_READ` and `PITH_SANDBOX_PROTECTED` (paths separated by newlines), `PITH_SANDBOX_NETWORK`, and
    /// `HOME` (the tools expand `~` to it; the sandbox then rules on the real path).
    pub fn guest_env(&self) -> Vec<(String, String)> {
        let join = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        };
        vec![
            ("PITH_SANDBOX_MODE".into(), self.mode.as_str().into()),
            ("PITH_SANDBOX_WRITABLE".into(), join(&self.writable())),
            ("PITH_SANDBOX_DENY_READ".into(), join(&self.deny_read)),
            ("PITH_SANDBOX_PROTECTED".into(), join(&self.protected())),
            ("PITH_SANDBOX_NETWORK".into(), self.network.to_string()),
            ("HOME".into(), home_dir().display().to_string()),
        ]
    }

    /// The sandbox as `get_state` shows it.
    pub fn describe(&self) -> Value {
        json!({
            "mode": self.mode.as_str(),
            "writableRoots": self.writable_roots,
            "network": self.network,
            "kernel": match self.mode {
                SandboxMode::FullAccess => Value::Null,
                _ => json!(kernel::kernel_facility().unwrap_or_else(|| "unavailable".into())),
            },
            "mechanism": match self.mode {
                SandboxMode::FullAccess => Value::Null,
                _ => json!(kernel::mechanism()),
            },
            "cacheDirs": self.cache_dirs.iter().filter(|d| d.path.is_dir()).map(|d| &d.path).collect::<Vec<_>>(),
            "approval": self.approval.as_str(),
        })
    }
}

/// Says on stderr, once at startup, what the user should know of the sandbox: that
/// `full-access` lifts it, when the kernel cannot hold the shell, and when the shell runs
/// under the fallback mechanism.
pub fn announce(policy: &SandboxPolicy) {
    if policy.mode == SandboxMode::FullAccess {
        eprintln!(
            "pith: warning: sandbox mode full-access: the model's tools and shell run with your full rights"
        );
    } else if kernel::mechanism() == "unavailable" {
        if policy.require_kernel {
            eprintln!("pith: warning: {}", kernel::unavailable_message());
        } else {
            eprintln!(
                "pith: warning: no kernel sandbox here: the shell runs unsandboxed (sandbox.requireKernelSandbox is false)"
            );
        }
    } else if kernel::mechanism() == "landlock" {
        eprintln!(
            "pith: note: no user namespaces here: the shell's sandbox is Landlock alone, which cannot let the shell create files directly in a directory that holds a denied or never-writable path (the file tools can)"
        );
    }
}

/// `path` as the filesystem resolves it (see [`paths::real_path`]).
fn resolved(path: &Path) -> PathBuf {
    paths::real_path(path, true)
}

/// `path` made absolute against `base`.
fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(settings: Value) -> SandboxPolicy {
        SandboxPolicy::from_settings(
            None,
            &Settings::from_value(json!({ "sandbox": settings })),
            Path::new("/work/project"),
            Path::new("/home/u/.pith/agent"),
        )
        .unwrap()
    }

    #[test]
    fn workspace_write_is_the_default() {
        let policy = policy(json!({}));
        assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
        assert!(policy.may_write(Path::new("/work/project/src/a.rs")));
        assert!(policy.may_write(&std::env::temp_dir().join("x")));
        assert!(!policy.may_write(Path::new("/etc/hosts")));
        assert!(policy.read_denied(Path::new("/home/u/.pith/agent/auth.json")));
        assert!(!policy.read_denied(Path::new("/etc/hosts")));
        assert_eq!(
            policy.write_denial(Path::new("/etc/hosts")),
            "write to /etc/hosts denied: outside the workspace in sandbox mode workspace-write (add it to sandbox.writableRoots or run with --sandbox full-access)"
        );
    }

    #[test]
    fn settings_and_flags() {
        let read_only = policy(json!({"mode": "read-only", "network": false}));
        assert!(!read_only.may_write(Path::new("/work/project/a")));
        assert!(!read_only.network);
        let roots =
            policy(json!({"writableRoots": ["out", "/var/cache/x"], "denyRead": ["secrets"]}));
        assert!(roots.may_write(Path::new("/work/project/out/b")));
        assert!(roots.may_write(Path::new("/var/cache/x/y")));
        assert!(
            !roots.may_write(&std::env::temp_dir().join("x"))
                || std::env::temp_dir().starts_with("/work/project")
        );
        assert!(roots.read_denied(Path::new("/work/project/secrets/key")));
        let full = SandboxPolicy::from_settings(
            Some("full-access"),
            &Settings::default(),
            Path::new("/w"),
            Path::new("/a"),
        )
        .unwrap();
        assert!(full.may_write(Path::new("/etc/hosts")));
        assert!(!full.read_denied(Path::new("/a/auth.json")));
        assert_eq!(
            SandboxMode::parse("open").unwrap_err(),
            "unknown sandbox mode \"open\": the modes are read-only, workspace-write, full-access"
        );
    }
}
