//! The agent directory: pith's per-user configuration and state, laid out like pi's
//! (`~/.pi/agent`) so that pointing pith at pi's directory works.

use std::path::{Path, PathBuf};

/// The environment variable that moves the agent directory.
pub const AGENT_DIR_ENV: &str = "PITH_AGENT_DIR";
/// pi's environment variable for its agent directory, read when [`AGENT_DIR_ENV`] is unset.
pub const PI_AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";
/// The environment variable that moves the compiled-component cache.
pub const CACHE_DIR_ENV: &str = "PITH_CACHE_DIR";

/// The agent directory and the paths inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDir {
    root: PathBuf,
}

impl AgentDir {
    /// `--agent-dir` if given, else `$PITH_AGENT_DIR`, else pi's `$PI_CODING_AGENT_DIR`, else
    /// `~/.pith/agent` when it exists, else pi's `~/.pi/agent` when it exists (a pi user's keys,
    /// models, settings, resources and sessions, used as they are), else `~/.pith/agent`. A
    /// leading `~` is expanded.
    pub fn resolve(flag: Option<&Path>) -> AgentDir {
        let env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let chosen = flag
            .map(Path::to_path_buf)
            .or_else(|| env(AGENT_DIR_ENV))
            .or_else(|| env(PI_AGENT_DIR_ENV))
            .unwrap_or_else(|| {
                let home = home_dir();
                let pith = home.join(".pith").join("agent");
                let pi = home.join(".pi").join("agent");
                if !pith.exists() && pi.is_dir() {
                    pi
                } else {
                    pith
                }
            });
        AgentDir {
            root: expand_tilde(&chosen),
        }
    }

    /// An agent directory at `root`.
    pub fn at(root: impl Into<PathBuf>) -> AgentDir {
        AgentDir { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `settings.json`: global settings.
    pub fn settings_file(&self) -> PathBuf {
        self.root.join("settings.json")
    }

    /// `models.json`: custom providers and models.
    pub fn models_file(&self) -> PathBuf {
        self.root.join("models.json")
    }

    /// `auth.json`: stored API keys.
    pub fn auth_file(&self) -> PathBuf {
        self.root.join("auth.json")
    }

    /// `sessions/`: session files, one directory per working directory.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// `skills/`: the user's skills.
    pub fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// `prompts/`: the user's prompt templates.
    pub fn prompts_dir(&self) -> PathBuf {
        self.root.join("prompts")
    }

    /// `plugins/`: the user's WebAssembly plugins.
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("plugins")
    }
}

/// The compiled-component cache: `$PITH_CACHE_DIR`, else `$XDG_CACHE_HOME/pith`, else
/// `~/.cache/pith`. It lives outside the agent directory so that sharing an agent directory
/// with pi leaves pi's directory clean.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|v| !v.is_empty()) {
        return expand_tilde(Path::new(&dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("pith");
    }
    home_dir().join(".cache").join("pith")
}

/// The user's home directory (`$HOME`), or `/` when unset.
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Expands a leading `~` or `~/` to the home directory.
pub fn expand_tilde(path: &Path) -> PathBuf {
    match path.to_str() {
        Some("~") => home_dir(),
        Some(s) if s.starts_with("~/") => home_dir().join(&s[2..]),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_wins_and_paths_follow_pi_layout() {
        let dir = AgentDir::resolve(Some(Path::new("/tmp/agent-x")));
        assert_eq!(dir.root(), Path::new("/tmp/agent-x"));
        assert_eq!(dir.models_file(), Path::new("/tmp/agent-x/models.json"));
        assert_eq!(dir.auth_file(), Path::new("/tmp/agent-x/auth.json"));
        assert_eq!(dir.settings_file(), Path::new("/tmp/agent-x/settings.json"));
        assert_eq!(dir.sessions_dir(), Path::new("/tmp/agent-x/sessions"));
        assert_eq!(dir.skills_dir(), Path::new("/tmp/agent-x/skills"));
        assert_eq!(dir.prompts_dir(), Path::new("/tmp/agent-x/prompts"));
        assert_eq!(dir.plugins_dir(), Path::new("/tmp/agent-x/plugins"));
    }

    #[test]
    fn tilde_expands_to_home() {
        let home = home_dir();
        assert_eq!(expand_tilde(Path::new("~/x")), home.join("x"));
        assert_eq!(expand_tilde(Path::new("~")), home);
        assert_eq!(expand_tilde(Path::new("/abs/~")), Path::new("/abs/~"));
    }
}
