//! Which bash the shell runs, as pi resolves it (its `getShellConfig`, `docs/windows.md`):
//! `shellPath` from the settings when set (and then it must exist); else `/bin/bash`, else
//! `bash` on `PATH`, else `sh` on unix; on Windows Git Bash in `%ProgramFiles%` and
//! `%ProgramFiles(x86)%`, then `bash.exe` on `PATH`, else an error that says what to install
//! and where it looked. PowerShell, for the `powershell` tool, as pi finds it too
//! (`getPowerShellConfig`), and on macOS and Linux `pwsh` on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How the resolution sees the system (the real one, or a test's).
pub struct System<'a> {
    /// Whether a file exists.
    pub exists: &'a dyn Fn(&Path) -> bool,
    /// An environment variable.
    pub var: &'a dyn Fn(&str) -> Option<OsString>,
    /// Windows' rules (else unix's).
    pub windows: bool,
}

impl System<'_> {
    /// The first directory of `PATH` holding `name`.
    fn on_path(&self, name: &str) -> Option<PathBuf> {
        let path = (self.var)("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| (self.exists)(candidate))
    }
}

/// The shell to run commands with, `shell_path` first (`shellPath`, already `~`-expanded).
pub fn resolve(shell_path: Option<&Path>, system: &System<'_>) -> Result<PathBuf, String> {
    if let Some(custom) = shell_path {
        return if (system.exists)(custom) {
            Ok(custom.to_path_buf())
        } else {
            Err(format!(
                "Custom shell path not found: {} (shellPath in settings.json)",
                custom.display()
            ))
        };
    }
    if !system.windows {
        let bin_bash = PathBuf::from("/bin/bash");
        if (system.exists)(&bin_bash) {
            return Ok(bin_bash);
        }
        return Ok(system
            .on_path("bash")
            .unwrap_or_else(|| PathBuf::from("sh")));
    }
    let searched: Vec<PathBuf> = ["ProgramFiles", "ProgramFiles(x86)"]
        .iter()
        .filter_map(|var| (system.var)(var))
        .map(|dir| PathBuf::from(dir).join("Git").join("bin").join("bash.exe"))
        .collect();
    if let Some(found) = searched.iter().find(|p| (system.exists)(p)) {
        return Ok(found.clone());
    }
    if let Some(found) = system.on_path("bash.exe") {
        return Ok(found);
    }
    let places: Vec<String> = searched
        .iter()
        .map(|p| format!("  {}", p.display()))
        .collect();
    Err(format!(
        "No bash shell found. Options:\n  1. Install Git for Windows: https://git-scm.com/download/win\n  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n  3. Set shellPath in settings.json\n\nSearched Git Bash in:\n{}",
        places.join("\n")
    ))
}

/// [`resolve`] on this system.
pub fn shell(shell_path: Option<&Path>) -> Result<PathBuf, String> {
    resolve(
        shell_path,
        &System {
            exists: &|path| path.exists(),
            var: &|name| std::env::var_os(name),
            windows: cfg!(windows),
        },
    )
}

/// pi's arguments to PowerShell, before the command.
pub const POWERSHELL_ARGS: [&str; 5] = [
    "-NoProfile",
    "-NonInteractive",
    "-ExecutionPolicy",
    "Bypass",
    "-Command",
];

/// What pi puts before a PowerShell command: output in UTF-8.
const UTF8_OUTPUT_PREFIX: &str =
    "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}\n";

/// What pi puts after a command for Windows PowerShell 5.1, which turns a native command's
/// redirected stderr into an error record and so fails `git push 2>&1 | Select-Object -Last 3`
/// although git exited 0: exit 0 when the last statement succeeded or only such a record
/// failed; the lone `;` keeps an unfinished last statement a parse error.
const WINDOWS_POWERSHELL_EXIT_SUFFIX: &str = "\n;\nif ($?) { exit 0 }\nif (($LASTEXITCODE -eq 0) -and (\"$($Error[0].FullyQualifiedErrorId)\" -like \"NativeCommandError*\")) { exit 0 }\nexit 1";

/// PowerShell as pi finds it on Windows: `pwsh.exe` on `PATH`, PowerShell 7 in
/// `%ProgramFiles%`, `powershell.exe` on `PATH`, then Windows PowerShell in `%SystemRoot%`;
/// elsewhere `pwsh` on `PATH` (pi offers the tool on Windows only). An error says what to
/// install.
pub fn resolve_powershell(system: &System<'_>) -> Result<PathBuf, String> {
    let found = if system.windows {
        system
            .on_path("pwsh.exe")
            .or_else(|| {
                (system.var)("ProgramFiles")
                    .map(|dir| {
                        PathBuf::from(dir)
                            .join("PowerShell")
                            .join("7")
                            .join("pwsh.exe")
                    })
                    .filter(|p| (system.exists)(p))
            })
            .or_else(|| system.on_path("powershell.exe"))
            .or_else(|| {
                (system.var)("SystemRoot")
                    .map(|dir| {
                        PathBuf::from(dir)
                            .join("System32")
                            .join("WindowsPowerShell")
                            .join("v1.0")
                            .join("powershell.exe")
                    })
                    .filter(|p| (system.exists)(p))
            })
    } else {
        system.on_path("pwsh")
    };
    found.ok_or_else(|| {
        if system.windows {
            "No PowerShell executable found. Install PowerShell or add powershell.exe/pwsh.exe to PATH.".to_string()
        } else {
            "No PowerShell executable found. Install PowerShell 7 (pwsh) or add pwsh to PATH.".to_string()
        }
    })
}

/// [`resolve_powershell`] on this system.
pub fn powershell() -> Result<PathBuf, String> {
    resolve_powershell(&System {
        exists: &|path| path.exists(),
        var: &|name| std::env::var_os(name),
        windows: cfg!(windows),
    })
}

/// The command line pi gives PowerShell `program`: UTF-8 output first, then the command,
/// then for Windows PowerShell (`powershell.exe`) the exit suffix, unless the command ends
/// in a backtick (which would continue its last line into the suffix).
pub fn powershell_command(program: &Path, command: &str) -> String {
    let windows_powershell = program.file_name().is_some_and(|name| {
        name.to_string_lossy()
            .eq_ignore_ascii_case("powershell.exe")
    });
    let suffix = if windows_powershell && !command.ends_with('`') {
        WINDOWS_POWERSHELL_EXIT_SUFFIX
    } else {
        ""
    };
    format!("{UTF8_OUTPUT_PREFIX}{command}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system<'a>(
        files: &'a [&'a str],
        vars: &'a [(&'a str, &'a str)],
        windows: bool,
    ) -> (
        impl Fn(&Path) -> bool + 'a,
        impl Fn(&str) -> Option<OsString> + 'a,
        bool,
    ) {
        (
            move |path: &Path| files.iter().any(|f| Path::new(f) == path),
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            },
            windows,
        )
    }

    fn run(
        custom: Option<&str>,
        files: &[&str],
        vars: &[(&str, &str)],
        windows: bool,
    ) -> Result<PathBuf, String> {
        let (exists, var, windows) = system(files, vars, windows);
        resolve(
            custom.map(Path::new),
            &System {
                exists: &exists,
                var: &var,
                windows,
            },
        )
    }

    #[test]
    fn pis_order_on_unix() {
        assert_eq!(
            run(Some("/opt/zsh"), &["/opt/zsh", "/bin/bash"], &[], false),
            Ok(PathBuf::from("/opt/zsh"))
        );
        assert_eq!(
            run(Some("/opt/none"), &["/bin/bash"], &[], false),
            Err("Custom shell path not found: /opt/none (shellPath in settings.json)".into())
        );
        assert_eq!(
            run(
                None,
                &["/bin/bash", "/usr/local/bin/bash"],
                &[("PATH", "/usr/local/bin")],
                false
            ),
            Ok(PathBuf::from("/bin/bash"))
        );
        assert_eq!(
            run(
                None,
                &["/usr/local/bin/bash"],
                &[("PATH", "/usr/bin:/usr/local/bin")],
                false
            ),
            Ok(PathBuf::from("/usr/local/bin/bash"))
        );
        assert_eq!(
            run(None, &[], &[("PATH", "/usr/bin")], false),
            Ok(PathBuf::from("sh"))
        );
    }

    #[test]
    fn git_bash_then_path_on_windows_else_what_to_install() {
        let git = PathBuf::from("C:/Program Files")
            .join("Git")
            .join("bin")
            .join("bash.exe");
        let git_text = git.display().to_string();
        let vars = [
            ("ProgramFiles", "C:/Program Files"),
            ("ProgramFiles(x86)", "C:/Program Files (x86)"),
            // (A drive letter's colon would split the list on the unix host running the test.)
            ("PATH", "/msys64/usr/bin"),
        ];
        assert_eq!(run(None, &[&git_text], &vars, true), Ok(git.clone()));
        let msys = PathBuf::from("/msys64/usr/bin").join("bash.exe");
        let msys_text = msys.display().to_string();
        assert_eq!(run(None, &[&msys_text], &vars, true), Ok(msys));
        let err = run(None, &[], &vars, true).unwrap_err();
        assert!(
            err.starts_with("No bash shell found. Options:\n  1. Install Git for Windows: https://git-scm.com/download/win\n"),
            "{err}"
        );
        assert!(err.ends_with(&format!(
            "Searched Git Bash in:\n  {}\n  {}",
            git.display(),
            PathBuf::from("C:/Program Files (x86)")
                .join("Git")
                .join("bin")
                .join("bash.exe")
                .display()
        )));
    }

    fn find_powershell(
        files: &[&str],
        vars: &[(&str, &str)],
        windows: bool,
    ) -> Result<PathBuf, String> {
        let (exists, var, windows) = system(files, vars, windows);
        resolve_powershell(&System {
            exists: &exists,
            var: &var,
            windows,
        })
    }

    #[test]
    fn powershell_in_pis_order_on_windows_and_pwsh_elsewhere() {
        let on_path = |dir: &str, name: &str| PathBuf::from(dir).join(name).display().to_string();
        let vars = [
            ("ProgramFiles", "C:/Program Files"),
            ("SystemRoot", "C:/Windows"),
            ("PATH", "/tools:/ps"),
        ];
        let pwsh7 = PathBuf::from("C:/Program Files")
            .join("PowerShell")
            .join("7")
            .join("pwsh.exe");
        let legacy = PathBuf::from("C:/Windows")
            .join("System32")
            .join("WindowsPowerShell")
            .join("v1.0")
            .join("powershell.exe");
        let all = [
            on_path("/ps", "pwsh.exe"),
            pwsh7.display().to_string(),
            on_path("/tools", "powershell.exe"),
            legacy.display().to_string(),
        ];
        for first in 0..all.len() {
            let present: Vec<&str> = all[first..].iter().map(String::as_str).collect();
            assert_eq!(
                find_powershell(&present, &vars, true),
                Ok(PathBuf::from(&all[first])),
                "with {present:?}"
            );
        }
        assert_eq!(
            find_powershell(&[], &vars, true),
            Err("No PowerShell executable found. Install PowerShell or add powershell.exe/pwsh.exe to PATH.".into())
        );
        assert_eq!(
            find_powershell(&["/usr/bin/pwsh"], &[("PATH", "/usr/bin")], false),
            Ok(PathBuf::from("/usr/bin/pwsh"))
        );
        assert!(
            find_powershell(&[], &[("PATH", "/usr/bin")], false)
                .unwrap_err()
                .contains("Install PowerShell 7 (pwsh)")
        );
    }

    #[test]
    fn windows_powershell_gets_pis_exit_suffix_and_pwsh_does_not() {
        let prefix = "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}\n";
        assert_eq!(
            powershell_command(Path::new("/usr/bin/pwsh"), "Get-Date"),
            format!("{prefix}Get-Date")
        );
        let legacy = powershell_command(Path::new("PowerShell.EXE"), "git push 2>&1");
        assert!(legacy.starts_with(&format!("{prefix}git push 2>&1\n;\nif ($?) {{ exit 0 }}")));
        assert!(legacy.ends_with("exit 1"));
        assert_eq!(
            powershell_command(Path::new("powershell.exe"), "dir `"),
            format!("{prefix}dir `")
        );
    }
}
