//! The toolchains' caches and stores that `workspace-write` lets the shell write, and the paths
//! in the home directory that no sandboxed mode ever lets it write.
//!
//! A package cache is rebuilt by its toolchain whenever it is lost; the sandbox's promise is
//! about the user's files and secrets, so `npm install`, `go build`, `mvn`, `uv sync` and the
//! like work in the default mode. Each cache is found the way its toolchain finds it (its own
//! variable first, then its default place). What persists code or widens access — shell start
//! files, autostart entries, `~/.ssh`, git's global configuration, the directories of installed
//! executables, the agent directory, a repository's hooks — is never on the list, and is taken
//! out of every writable root (see [`never_writable`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One cache directory, and when pith creates it if it is missing (the kernel grants only
/// directories that exist; creating `~/.m2` for a user without Maven would only litter the
/// home directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDir {
    /// The directory.
    pub path: PathBuf,
    /// When it is created.
    pub creation: Creation,
}

/// When a missing cache directory is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creation {
    /// Always (`~/.cache`, a directory every toolchain may use).
    Always,
    /// When one of these executables is on `PATH`.
    WithTool(&'static [&'static str]),
    /// Never: used only when it exists.
    Never,
}

/// Paths under the home directory a sandboxed command never writes: shell start files,
/// session and autostart entries, credentials, git's and npm's user configuration (hooks,
/// aliases and script shells run code), and the directories of installed executables.
pub const NEVER_WRITABLE_IN_HOME: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".config/git",
    ".xprofile",
    ".xinitrc",
    ".pam_environment",
    ".ssh",
    ".gnupg",
    ".gitconfig",
    ".npmrc",
    ".local/bin",
    ".cargo/bin",
    ".cargo/config.toml",
    ".cargo/config",
    ".bun/bin",
    "go/bin",
];

/// Where a variable points, when it is set and not empty.
type Lookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// The caches of the common toolchains under `home`, each through its own variable where it
/// has one (`lookup` reads the environment).
pub fn default_cache_dirs(home: &Path, lookup: Lookup<'_>) -> Vec<CacheDir> {
    let var = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let first_var = |names: &[&str]| names.iter().find_map(|name| var(name));
    let mut dirs = Vec::new();
    let mut add = |path: PathBuf, creation: Creation| {
        dirs.push(CacheDir { path, creation });
    };
    // Everything XDG-aware: pip, uv, poetry, pre-commit, yarn 1, pnpm's metadata, deno, the Go
    // build cache, node-gyp, Playwright's browsers, ccache, composer, Hugging Face.
    add(
        var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache")),
        Creation::Always,
    );
    // Caches whose own variable moves them out of `~/.cache`.
    for name in [
        "PIP_CACHE_DIR",
        "UV_CACHE_DIR",
        "POETRY_CACHE_DIR",
        "PRE_COMMIT_HOME",
        "YARN_CACHE_FOLDER",
        "DENO_DIR",
        "GOCACHE",
        "CCACHE_DIR",
        "PLAYWRIGHT_BROWSERS_PATH",
    ] {
        if let Some(path) = var(name) {
            add(path, Creation::Always);
        }
    }
    // npm and npx (`_npx` is inside).
    add(
        first_var(&["npm_config_cache", "NPM_CONFIG_CACHE"]).unwrap_or_else(|| home.join(".npm")),
        Creation::WithTool(&["npm", "npx"]),
    );
    // pnpm's content-addressed store.
    let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    add(
        first_var(&["npm_config_store_dir", "PNPM_STORE_DIR"])
            .unwrap_or_else(|| data.join("pnpm/store")),
        Creation::WithTool(&["pnpm"]),
    );
    // Yarn 2+ (its global cache and metadata).
    add(
        var("YARN_GLOBAL_FOLDER").unwrap_or_else(|| home.join(".yarn/berry")),
        Creation::WithTool(&["yarn"]),
    );
    // bun's install cache (not its bin directory).
    add(
        var("BUN_INSTALL_CACHE_DIR").unwrap_or_else(|| {
            var("BUN_INSTALL")
                .unwrap_or_else(|| home.join(".bun"))
                .join("install/cache")
        }),
        Creation::WithTool(&["bun"]),
    );
    // Maven's local repository and its wrapper's downloads (not `settings.xml`).
    for sub in ["repository", "wrapper"] {
        add(
            home.join(".m2").join(sub),
            Creation::WithTool(&["mvn", "java"]),
        );
    }
    // Gradle's caches, wrapper distributions and daemons (not its init scripts or properties).
    let gradle = var("GRADLE_USER_HOME").unwrap_or_else(|| home.join(".gradle"));
    for sub in [
        "caches",
        "wrapper",
        "daemon",
        "native",
        "jdks",
        ".tmp",
        "notifications",
    ] {
        add(gradle.join(sub), Creation::WithTool(&["gradle", "java"]));
    }
    // Go's module cache and checksum database (not `GOPATH/bin`).
    let gopath = lookup("GOPATH")
        .filter(|v| !v.is_empty())
        .and_then(|v| std::env::split_paths(&v).next())
        .unwrap_or_else(|| home.join("go"));
    add(
        var("GOMODCACHE").unwrap_or_else(|| gopath.join("pkg/mod")),
        Creation::WithTool(&["go"]),
    );
    add(gopath.join("pkg/sumdb"), Creation::WithTool(&["go"]));
    // Cargo's registry and git checkouts (not its bin directory or its configuration).
    let cargo = var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo"));
    for sub in ["registry", "git"] {
        add(cargo.join(sub), Creation::WithTool(&["cargo"]));
    }
    // ccache's old default, used when it exists.
    add(home.join(".ccache"), Creation::Never);
    dirs
}

/// The paths no sandboxed mode lets a command write, absolute: [`NEVER_WRITABLE_IN_HOME`]
/// under `home` and under Cargo's home, and `extra` (the agent directory, a repository's hooks
/// and configuration).
pub fn never_writable(home: &Path, lookup: Lookup<'_>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = NEVER_WRITABLE_IN_HOME
        .iter()
        .map(|p| home.join(p))
        .collect();
    if let Some(cargo) = lookup("CARGO_HOME").filter(|v| !v.is_empty()) {
        let cargo = PathBuf::from(cargo);
        paths.extend(["bin", "config.toml", "config"].map(|p| cargo.join(p)));
    }
    if let Some(bun) = lookup("BUN_INSTALL").filter(|v| !v.is_empty()) {
        paths.push(PathBuf::from(bun).join("bin"));
    }
    paths.extend(extra.iter().cloned());
    paths
}

/// Creates the missing cache directories whose toolchain is installed (an executable of it on
/// `path_var`), so the kernel can grant them (see [`Creation`]). Failures are left to
/// the command (it meets the sandbox's denial and its hint).
pub fn create_missing(dirs: &[CacheDir], path_var: Option<&OsString>) {
    for dir in dirs {
        if dir.path.exists() {
            continue;
        }
        let installed = match dir.creation {
            Creation::Always => true,
            Creation::WithTool(tools) => tools
                .iter()
                .any(|tool| path_var.is_some_and(|p| on_path(tool, p))),
            Creation::Never => false,
        };
        if installed {
            let _ = std::fs::create_dir_all(&dir.path);
        }
    }
}

/// True when an executable named `name` is in one of the directories of `path_var`.
fn on_path(name: &str, path_var: &OsString) -> bool {
    std::env::split_paths(path_var).any(|dir| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            ["exe", "cmd", "bat"]
                .iter()
                .any(|ext| dir.join(name).with_extension(ext).is_file())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup_in(
        vars: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn each_cache_through_its_own_variable() {
        let home = Path::new("/home/u");
        let plain = default_cache_dirs(home, &lookup_in(&[]));
        let paths: Vec<&Path> = plain.iter().map(|d| d.path.as_path()).collect();
        for expected in [
            "/home/u/.cache",
            "/home/u/.npm",
            "/home/u/.m2/repository",
            "/home/u/.gradle/caches",
            "/home/u/go/pkg/mod",
            "/home/u/.cargo/registry",
            "/home/u/.cargo/git",
            "/home/u/.local/share/pnpm/store",
            "/home/u/.bun/install/cache",
        ] {
            assert!(
                paths.contains(&Path::new(expected)),
                "{expected}: {paths:?}"
            );
        }
        let moved = default_cache_dirs(
            home,
            &lookup_in(&[
                ("npm_config_cache", "/c/npm"),
                ("GOMODCACHE", "/c/gomod"),
                ("GOPATH", "/g1:/g2"),
                ("CARGO_HOME", "/c/cargo"),
                ("XDG_CACHE_HOME", "/c/xdg"),
                ("UV_CACHE_DIR", "/c/uv"),
            ]),
        );
        let paths: Vec<&Path> = moved.iter().map(|d| d.path.as_path()).collect();
        for expected in [
            "/c/npm",
            "/c/gomod",
            "/g1/pkg/sumdb",
            "/c/cargo/registry",
            "/c/xdg",
            "/c/uv",
        ] {
            assert!(
                paths.contains(&Path::new(expected)),
                "{expected}: {paths:?}"
            );
        }
        assert!(!paths.contains(&Path::new("/home/u/.npm")));
    }

    #[test]
    fn no_cache_holds_what_runs_code() {
        let home = Path::new("/home/u");
        let lookup = lookup_in(&[("CARGO_HOME", "/c/cargo")]);
        let never = never_writable(home, &lookup, &[]);
        for dir in default_cache_dirs(home, &lookup) {
            for path in &never {
                assert!(
                    !path.starts_with(&dir.path),
                    "{} holds {}",
                    dir.path.display(),
                    path.display()
                );
            }
        }
        assert!(never.contains(&PathBuf::from("/c/cargo/bin")));
        assert!(never.contains(&PathBuf::from("/home/u/.bashrc")));
    }
}
