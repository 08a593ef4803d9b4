//! Which bash the shell runs, as pi resolves it (its `getShellConfig`, `docs/windows.md`):
//! `shellPath` from the settings when set (and then it must exist); else `/bin/bash`, else
//! `bash` on `PATH`, else `sh` on unix; on Windows Git Bash in `%ProgramFiles%` and
//! `%ProgramFiles(x86)%`, then `bash.exe` on `PATH`, else an error that says what to install
//! and where it looked.

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
}
