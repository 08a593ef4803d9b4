//! The shell's sandbox on macOS: a Seatbelt profile (the language of `sandbox-exec`, as Codex,
//! Claude Code and Gemini CLI generate it) made from the mode. Everything is denied but what
//! the profile allows: processes and the system services a shell needs, reads everywhere but
//! the deny list, writes in the writable directories but the never-writable paths, the few
//! device files a shell writes, and the network only with `sandbox.network`. The command runs
//! as `sandbox-exec -p <profile> <program> <args…>`, so its whole process tree is held.
//!
//! The generator is plain text from paths and is tested on every platform; the profile's
//! behaviour can only be checked on a Mac.

use std::path::{Path, PathBuf};

use super::SandboxPolicy;

/// The program that applies a profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The services a shell and the usual toolchains look up (name resolution, user and group
/// lookups, certificate trust, logging, preferences).
const SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.DirectoryService.libinfo_v1",
    "com.apple.system.notification_center",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.trustd",
    "com.apple.trustd.agent",
    "com.apple.SecurityServer",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.bsd.dirhelper",
    "com.apple.dnssd.service",
    "com.apple.SystemConfiguration.configd",
    "com.apple.SystemConfiguration.DNSConfiguration",
];

/// The device files a shell may write.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"];

/// The profile of `policy` (not `full-access`): its paths as the kernel sees them (macOS
/// resolves `/tmp` to `/private/tmp`, and Seatbelt matches resolved paths).
pub fn profile(policy: &SandboxPolicy) -> String {
    let real = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
        paths
            .iter()
            .map(|p| super::paths::real_path(p, true))
            .collect()
    };
    render(&Rules {
        deny_read: &real(policy.deny_read.clone()),
        writable: &real(policy.writable()),
        protected: &real(policy.protected()),
        network: policy.network,
    })
}

/// What a profile is made of.
pub struct Rules<'a> {
    /// No reads (nor writes) under these.
    pub deny_read: &'a [PathBuf],
    /// Writes under these.
    pub writable: &'a [PathBuf],
    /// No writes under these, even inside a writable one.
    pub protected: &'a [PathBuf],
    /// TCP and UDP allowed.
    pub network: bool,
}

/// A string literal of the profile language.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn subpaths(paths: &[PathBuf], form: &str) -> String {
    paths
        .iter()
        .map(|p| format!(" ({form} (subpath {}))", quoted(p)))
        .collect()
}

/// The profile for `rules`.
pub fn render(rules: &Rules<'_>) -> String {
    let mut out = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec)\n\
         (allow process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow process-info* (target same-sandbox))\n\
         (allow sysctl-read)\n\
         (allow pseudo-tty)\n\
         (allow file-ioctl)\n\
         (allow ipc-posix-sem)\n\
         (allow ipc-posix-shm-read-data)\n",
    );
    out.push_str("(allow mach-lookup");
    for service in SERVICES {
        out.push_str(&format!(" (global-name \"{service}\")"));
    }
    out.push_str(")\n");
    out.push_str(&format!(
        "(allow file-read* (require-all (subpath \"/\"){}))\n",
        subpaths(rules.deny_read, "require-not")
    ));
    if !rules.writable.is_empty() {
        let roots: String = rules
            .writable
            .iter()
            .map(|p| format!(" (subpath {})", quoted(p)))
            .collect();
        out.push_str(&format!(
            "(allow file-write* (require-all (require-any{roots}){}{}))\n",
            subpaths(rules.deny_read, "require-not"),
            subpaths(rules.protected, "require-not")
        ));
    }
    out.push_str("(allow file-write-data");
    for device in DEVICES {
        out.push_str(&format!(" (literal \"{device}\")"));
    }
    out.push_str(" (regex #\"^/dev/ttys[0-9]+$\"))\n");
    if rules.network {
        out.push_str("(allow network*)\n(allow system-socket)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_profile_of_the_default_mode() {
        let profile = render(&Rules {
            deny_read: &paths(&["/Users/ada/.ssh", "/Users/ada/.pi/agent/auth.json"]),
            writable: &paths(&["/Users/ada/project", "/private/tmp"]),
            protected: &paths(&["/Users/ada/.bashrc", "/Users/ada/project/.git/hooks"]),
            network: true,
        });
        let expected = [
            "(version 1)",
            "(deny default)",
            "(allow process-exec)",
            "(allow process-fork)",
            "(allow signal (target same-sandbox))",
            "(allow process-info* (target same-sandbox))",
            "(allow sysctl-read)",
            "(allow pseudo-tty)",
            "(allow file-ioctl)",
            "(allow ipc-posix-sem)",
            "(allow ipc-posix-shm-read-data)",
        ];
        let lines: Vec<&str> = profile.lines().collect();
        assert_eq!(lines[..expected.len()], expected);
        assert!(lines[expected.len()].starts_with(
            "(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\")"
        ));
        assert_eq!(
            lines[expected.len() + 1],
            "(allow file-read* (require-all (subpath \"/\") (require-not (subpath \"/Users/ada/.ssh\")) (require-not (subpath \"/Users/ada/.pi/agent/auth.json\"))))"
        );
        assert_eq!(
            lines[expected.len() + 2],
            "(allow file-write* (require-all (require-any (subpath \"/Users/ada/project\") (subpath \"/private/tmp\")) (require-not (subpath \"/Users/ada/.ssh\")) (require-not (subpath \"/Users/ada/.pi/agent/auth.json\")) (require-not (subpath \"/Users/ada/.bashrc\")) (require-not (subpath \"/Users/ada/project/.git/hooks\"))))"
        );
        assert_eq!(
            lines[expected.len() + 3],
            "(allow file-write-data (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\") (regex #\"^/dev/ttys[0-9]+$\"))"
        );
        assert_eq!(
            lines[expected.len() + 4..],
            ["(allow network*)", "(allow system-socket)"]
        );
    }

    #[test]
    fn read_only_and_no_network_allow_neither_and_quotes_are_escaped() {
        let profile = render(&Rules {
            deny_read: &paths(&["/Users/ada/odd \"dir\\"]),
            writable: &[],
            protected: &[],
            network: false,
        });
        assert!(!profile.contains("file-write*"), "{profile}");
        assert!(!profile.contains("network"), "{profile}");
        assert!(
            profile.contains("(require-not (subpath \"/Users/ada/odd \\\"dir\\\\\"))"),
            "{profile}"
        );
    }
}
