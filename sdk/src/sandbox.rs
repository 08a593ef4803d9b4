//! Why a sandboxed access failed, in words a user can act on. pith tells its first-party tools
//! their sandbox in the environment (`PITH_SANDBOX_MODE`, and the newline-separated
//! `PITH_SANDBOX_WRITABLE` and `PITH_SANDBOX_DENY_READ`); a tool whose read or write failed asks
//! here whether the sandbox is why, and reports that instead of a bare "not found". The host
//! enforces the sandbox; this only explains it, and the host's own messages come from here too.

use std::path::{Path, PathBuf};

/// The message for a write the sandbox does not allow in `mode`.
pub fn write_denied(path: &Path, mode: &str) -> String {
    let path = path.display();
    if mode == "read-only" {
        format!(
            "write to {path} denied: sandbox mode read-only allows no writes (run with --sandbox workspace-write or --sandbox full-access)"
        )
    } else {
        format!(
            "write to {path} denied: outside the workspace in sandbox mode {mode} (add it to sandbox.writableRoots or run with --sandbox full-access)"
        )
    }
}

/// The message for a write to a path no sandboxed command writes (see [`View::protected`]).
pub fn protected_write(path: &Path) -> String {
    format!(
        "write to {} denied: the sandbox never lets the model's tools and commands write there (shell start files, credentials, installed executables, the agent directory and a repository's hooks run code or widen access later; run it yourself, or with --sandbox full-access)",
        path.display()
    )
}

/// The message for a read of a path on the deny list.
pub fn read_denied(path: &Path) -> String {
    format!(
        "read of {} denied: it is on the sandbox's deny list (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
        path.display()
    )
}

fn paths(key: &str) -> Vec<PathBuf> {
    std::env::var(key)
        .map(|value| {
            value
                .lines()
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The sandbox mode this tool runs under, when pith said (`None`: no sandbox to explain).
pub fn mode() -> Option<String> {
    std::env::var("PITH_SANDBOX_MODE")
        .ok()
        .filter(|mode| mode != "full-access")
}

/// Why reading `path` (absolute) failed, when the sandbox's deny list is the reason (the path
/// is on it, wherever it lies).
pub fn explain_read(path: &Path) -> Option<String> {
    mode()?;
    paths("PITH_SANDBOX_DENY_READ")
        .iter()
        .any(|d| path.starts_with(d))
        .then(|| read_denied(path))
}

/// WASI's `EPERM`: what pith's filesystem answers when the sandbox refuses a call.
const REFUSED: i32 = 63;

/// True when `err` is the sandbox's refusal (in a sandboxed tool).
pub fn refused(err: &std::io::Error) -> bool {
    mode().is_some() && err.raw_os_error() == Some(REFUSED)
}

/// Why reading `path` failed with `err`, when the sandbox is the reason: the path is on the
/// deny list, or it leads there (through a link).
pub fn explain_read_error(path: &Path, err: &std::io::Error) -> Option<String> {
    explain_read(path).or_else(|| refused(err).then(|| read_denied_through(path)))
}

/// The message for a read of a path that leads (through a link) to one on the deny list.
pub fn read_denied_through(path: &Path) -> String {
    format!(
        "read of {} denied: it leads to a path on the sandbox's deny list (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
        path.display()
    )
}

/// Why writing `path` failed with `err`, when the sandbox is the reason: the mode, a protected
/// path, or a link that leads to one.
pub fn explain_write_error(path: &Path, err: &std::io::Error) -> Option<String> {
    explain_write(path)
        .or_else(|| explain_read(path))
        .or_else(|| {
            // A link is written where it leads: the sandbox judged the target.
            let target = link_target(path)?;
            let why = explain_write(&target).or_else(|| explain_read(&target))?;
            Some(format!("{why} ({} is a link to it)", path.display()))
        })
        .or_else(|| refused(err).then(|| protected_write(path)))
}

/// Where `path` leads when it is a link (its links followed, 40 at most); `None` when it is
/// not one.
pub fn link_target(path: &Path) -> Option<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&at) {
            Ok(target) => at = at.parent().unwrap_or(Path::new("/")).join(target),
            Err(_) => break,
        }
    }
    (at != path).then(|| lexical(&at))
}

/// `path` with `.` dropped and `..` applied, without touching the filesystem.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Why writing `path` (absolute) failed, when the sandbox mode is the reason.
pub fn explain_write(path: &Path) -> Option<String> {
    let mode = mode()?;
    if paths("PITH_SANDBOX_PROTECTED")
        .iter()
        .any(|p| path.starts_with(p))
    {
        return Some(protected_write(path));
    }
    let writable = paths("PITH_SANDBOX_WRITABLE");
    (!writable.iter().any(|w| path.starts_with(w))).then(|| write_denied(path, &mode))
}

/// The sandbox a command ran under, as pith describes it (to the bash tool in the environment,
/// and to its own approvals directly).
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The mode's name (`read-only`, `workspace-write`).
    pub mode: String,
    /// Where writes are allowed.
    pub writable: Vec<PathBuf>,
    /// Where no read may reach.
    pub deny_read: Vec<PathBuf>,
    /// Where no write may reach, even inside a writable root: the deny list, the agent
    /// directory, shell start files, installed executables, a linked repository's hooks.
    pub protected: Vec<PathBuf>,
    /// Whether network connections are allowed.
    pub network: bool,
    /// The home directory (`~` in a command's output).
    pub home: Option<PathBuf>,
}

/// How a denial reads in the output of the commands a shell runs: the kernel's own words
/// (`EACCES`, `EPERM`, `EROFS` as libc, Python, Rust and Node print them) and npm's, pip's and
/// cargo's wording around them. Matched without regard to case.
const DENIAL_SIGNS: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "eacces",
    "eperm",
    "erofs",
    "access is denied",
    "root-owned files",
    "errno 13",
    "os error 13",
    "os error 1)",
    "os error 30",
];

/// How a path the sandbox hides reads to a command run as root: the mount namespace covers a
/// denied directory with an empty one (root passes its mode 000), so its files are "missing".
/// Counted only on a line that names a path on the deny list.
const HIDDEN_SIGNS: &[&str] = &["no such file or directory", "enoent"];

/// Lines that name the path of a denial stated on another line (npm prints the path on its own
/// line, cargo names it before the cause).
const PATH_LINES: &[&str] = &[
    "npm error path ",
    "npm err! path ",
    "npm error dest ",
    "npm err! dest ",
    "failed to create",
    "failed to open",
    "failed to write",
    "could not create",
    "unable to create",
    "cannot create",
];

/// At most this many paths are named in a hint.
const MAX_NAMED: usize = 3;

impl View {
    /// The sandbox pith told this tool in the environment; `None` without one.
    pub fn from_env() -> Option<View> {
        Some(View {
            mode: mode()?,
            writable: paths("PITH_SANDBOX_WRITABLE"),
            deny_read: paths("PITH_SANDBOX_DENY_READ"),
            protected: paths("PITH_SANDBOX_PROTECTED"),
            network: std::env::var("PITH_SANDBOX_NETWORK").as_deref() != Ok("false"),
            home: std::env::var_os("HOME").map(PathBuf::from),
        })
    }

    /// The `[sandbox]` lines for a failed command's output that reads like a denial: one per
    /// path it names that the sandbox refuses (up to three), else one saying what the mode
    /// allows; and that the file's owner is not the cause. `None` when nothing reads like a
    /// denial, or every path it names is one the sandbox allows (a real permission problem).
    pub fn shell_hint(&self, output: &str) -> Option<String> {
        let lower = output.to_ascii_lowercase();
        let hidden_named = |line: &str| {
            let lower = line.to_ascii_lowercase();
            HIDDEN_SIGNS.iter().any(|sign| lower.contains(sign))
                && paths_in(line, self.home.as_deref())
                    .iter()
                    .any(|path| self.deny_read.iter().any(|d| path.starts_with(d)))
        };
        if !DENIAL_SIGNS.iter().any(|sign| lower.contains(sign))
            && !output.lines().any(hidden_named)
        {
            return None;
        }
        let mut named: Vec<PathBuf> = Vec::new();
        for line in output.lines() {
            let lower = line.to_ascii_lowercase();
            let relevant = DENIAL_SIGNS.iter().any(|sign| lower.contains(sign))
                || PATH_LINES.iter().any(|phrase| lower.contains(phrase))
                || hidden_named(line);
            if !relevant {
                continue;
            }
            for path in paths_in(line, self.home.as_deref()) {
                if !named.contains(&path) {
                    named.push(path);
                }
            }
        }
        let mut lines: Vec<String> = named
            .iter()
            .filter_map(|path| self.refusal(path))
            .take(MAX_NAMED)
            .collect();
        if lines.is_empty() {
            if !named.is_empty() {
                return None;
            }
            lines.push(self.allowance());
        }
        let ownership = "This is the sandbox, not the files' owner or permissions: chown, chmod and sudo will not help.";
        Some(format!("{}\n[sandbox] {ownership}", lines.join("\n")))
    }

    /// Why the sandbox refuses `path`, if it does: a read of the deny list, or a write outside
    /// the writable roots.
    fn refusal(&self, path: &Path) -> Option<String> {
        if self.deny_read.iter().any(|d| path.starts_with(d)) {
            return Some(format!(
                "[sandbox] {} is on the sandbox's deny list: no command reads or writes it (sandbox.denyRead and its defaults; run with --sandbox full-access to lift it)",
                path.display()
            ));
        }
        if self.protected.iter().any(|p| path.starts_with(p)) {
            return Some(format!("[sandbox] {}", protected_write(path)));
        }
        if self.writable.iter().any(|w| path.starts_with(w)) {
            return None;
        }
        Some(format!("[sandbox] {}", write_denied(path, &self.mode)))
    }

    /// What the mode allows, for a denial that names no path.
    fn allowance(&self) -> String {
        let writable: Vec<String> = self
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let writes = if writable.is_empty() {
            "no writes".to_string()
        } else {
            format!("writes only in {}", writable.join(", "))
        };
        let network = if self.network { "" } else { ", no network" };
        format!(
            "[sandbox] this may be the sandbox: mode {} allows {writes}{network}, and no reads of the deny list (sandbox.writableRoots, sandbox.cacheDirs, sandbox.network, sandbox.denyRead; --sandbox full-access lifts it)",
            self.mode
        )
    }
}

/// The absolute paths a line of output names (`/…`, or `~/…` against `home`), without the
/// quotes and punctuation around them.
fn paths_in(line: &str, home: Option<&Path>) -> Vec<PathBuf> {
    let quotes: &[char] = &[
        '\'', '"', '`', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}', '(', ')', '[', ']', '<',
        '>', ',',
    ];
    line.split(|c: char| c.is_whitespace() || quotes.contains(&c))
        .map(|token| token.trim_end_matches([':', ';', '.', ',']))
        .filter_map(|token| {
            if token.len() > 1 && token.starts_with('/') {
                Some(clean(Path::new(token)))
            } else {
                let rest = token.strip_prefix("~/")?;
                Some(home?.join(rest))
            }
        })
        .collect()
}

/// `path` without `.` and `..` components (lexically).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The `[sandbox]` lines for a failed shell command under the sandbox pith told this tool
/// (see [`View::shell_hint`]); `None` when no sandbox applies or nothing reads like a denial.
pub fn shell_hint(output: &str) -> Option<String> {
    View::from_env()?.shell_hint(output)
}

/// A hint for a tool error that reads like a filesystem denial (a WASI error number such as
/// `os error 44`, 63 or 76) when pith said the plugin has no workspace grant or a read-only one
/// (`PITH_WORKSPACE_ACCESS`): what to add to the manifest. `None` otherwise.
pub fn grant_hint(message: &str) -> Option<String> {
    let access = std::env::var("PITH_WORKSPACE_ACCESS").ok()?;
    let denial = [
        "os error 2)",
        "os error 44)",
        "os error 63)",
        "os error 76)",
        "os error 69)",
        // The same errors without their numbers (`ToolError::from(io::Error)` drops them).
        "No such file or directory",
        "Operation not permitted",
        "Permission denied",
        "Read-only file system",
    ]
    .iter()
    .any(|code| message.contains(code));
    if !denial {
        return None;
    }
    match access.as_str() {
        "none" => Some(
            " (this plugin has no workspace grant: add `workspace = \"read\"` or `\"write\"` under [capabilities] in its pith.toml)"
                .into(),
        ),
        // A read-only grant refuses writes only: a failed read is not about the grant.
        "read" if message.contains("os error 69)") || message.to_ascii_lowercase().contains("writ") => Some(
            " (this plugin's workspace grant is read-only: `workspace = \"write\"` under [capabilities] in its pith.toml lets it write)"
                .into(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> View {
        View {
            mode: "workspace-write".into(),
            writable: vec!["/w".into(), "/tmp".into()],
            deny_read: vec!["/h/.ssh".into()],
            protected: vec!["/h/.ssh".into(), "/h/.bashrc".into()],
            network: true,
            home: Some("/h".into()),
        }
    }

    #[test]
    fn a_denial_names_its_path_in_each_toolchains_words() {
        let npm = "npm error code EACCES\nnpm error syscall mkdir\nnpm error path /h/.npm/_cacache\nnpm error errno -13\nnpm error Your cache folder contains root-owned files, due to a bug in\nnpm error previous versions of npm which has since been addressed.\nnpm error\nnpm error To permanently fix this problem, please run:\nnpm error   sudo chown -R 0:0 \"/h/.npm\"";
        let hint = view().shell_hint(npm).unwrap();
        assert!(
            hint.starts_with("[sandbox] write to /h/.npm/_cacache denied: outside the workspace"),
            "{hint}"
        );
        assert!(
            hint.ends_with("chown, chmod and sudo will not help."),
            "{hint}"
        );
        let pip = "ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: '/usr/lib/python3/dist-packages/x'";
        assert!(
            view()
                .shell_hint(pip)
                .unwrap()
                .contains("write to /usr/lib/python3/dist-packages/x denied")
        );
        let cargo = "error: failed to create directory `/h/.cargo/bin`\n\nCaused by:\n  Permission denied (os error 13)";
        assert!(
            view()
                .shell_hint(cargo)
                .unwrap()
                .contains("write to /h/.cargo/bin denied")
        );
        let no_path = "Error: EACCES";
        assert!(view().shell_hint(no_path).unwrap().contains(
            "this may be the sandbox: mode workspace-write allows writes only in /w, /tmp"
        ));
        let rc = "bash: line 1: ~/.bashrc: Permission denied";
        assert!(
            view()
                .shell_hint(rc)
                .unwrap()
                .contains("write to /h/.bashrc denied: the sandbox never lets")
        );
        let ssh = "cat: /h/.ssh/id_rsa: Permission denied";
        assert!(
            view()
                .shell_hint(ssh)
                .unwrap()
                .contains("/h/.ssh/id_rsa is on the sandbox's deny list")
        );
    }

    #[test]
    fn no_hint_for_what_the_sandbox_allows() {
        assert_eq!(view().shell_hint("all good"), None);
        // A denial in a writable place is the files' own permissions.
        assert_eq!(
            view().shell_hint("touch: cannot touch '/w/locked': Permission denied"),
            None
        );
    }
}
