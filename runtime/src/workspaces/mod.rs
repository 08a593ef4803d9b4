//! Where a session works: the folder pith started in, or any other absolute directory a front-end
//! names (an ACP session's `cwd`, an RPC `switch_session` to a file saved in another folder). A
//! session elsewhere gets that folder's own trust decision, that project's settings when trusted,
//! and a sandbox whose workspace is that folder; its tools, shell, context files, sessions
//! directory, MCP servers and project plugins follow (the folder's plugin host: [`hosts`]). What
//! is per process stays shared: the WebAssembly engine, the compiled code and the HTTP client.

pub mod hosts;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::models::ModelRegistry;
use crate::agent::session::SessionConfig;
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::plugin_host::PluginHost;
use crate::sandbox::SandboxPolicy;
use crate::settings::Settings;

/// The folder pith was started in and what was resolved for it once: every other folder's
/// place is worked out from it.
pub struct StartFolder {
    /// The folder (as given at start).
    pub workspace: PathBuf,
    /// The command line, with the start folder's trust in `approve`.
    pub args: Args,
    /// The start folder's settings.
    pub settings: Settings,
    /// The user's agent directory.
    pub agent_dir: AgentDir,
    /// The start folder's plugin host (the process's).
    pub host: Arc<PluginHost>,
}

/// A session's directory, checked, and what follows from it.
pub struct Place {
    /// The directory (canonical).
    pub cwd: PathBuf,
    /// The command line as it applies there (`approve`: that folder's trust).
    pub args: Args,
    /// The settings there (the user's, and the project's when trusted).
    pub settings: Settings,
    /// The sandbox there, when it is not the process's.
    pub sandbox: Option<Arc<SandboxPolicy>>,
    /// What the user is told (an untrusted folder's resources left out).
    pub notices: Vec<String>,
}

impl Place {
    /// True for the start folder itself (the process's host, settings and sandbox).
    pub fn is_start(&self) -> bool {
        self.sandbox.is_none()
    }
}

/// Why a folder cannot be a session's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    /// A relative path.
    #[error(
        "cwd must be an absolute path (got {0:?}): give the session's folder as an absolute path"
    )]
    NotAbsolute(String),
    /// A path that is not an existing directory.
    #[error(
        "cwd {0} is not a directory (it does not exist, or it is a file): give the folder the session works in"
    )]
    NotADirectory(String),
    /// The user's sandbox settings cannot be applied there.
    #[error("{0}")]
    Sandbox(String),
}

/// A path with its links resolved when it exists.
pub fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

impl StartFolder {
    /// The place of a session in `cwd`, an absolute, existing directory. Its trust is
    /// `trust_flag` when given (RPC applies `--approve`/`--no-approve` to every folder, as pi
    /// does), else the folder's own record, else `defaultProjectTrust` — never the start folder's.
    pub fn place(&self, cwd: &Path, trust_flag: Option<bool>) -> Result<Place, PlaceError> {
        if !cwd.is_absolute() {
            return Err(PlaceError::NotAbsolute(cwd.display().to_string()));
        }
        if !cwd.is_dir() {
            return Err(PlaceError::NotADirectory(cwd.display().to_string()));
        }
        let cwd = canonical(cwd);
        if cwd == canonical(&self.workspace) {
            return Ok(Place {
                cwd,
                args: self.args.clone(),
                settings: self.settings.clone(),
                sandbox: None,
                notices: Vec::new(),
            });
        }
        let trusted = trust_flag.unwrap_or_else(|| {
            crate::trust::TrustRecord::load(self.agent_dir.root())
                .ok()
                .and_then(|record| record.decision(&cwd))
                .unwrap_or_else(|| {
                    let agent = Settings::load(&self.agent_dir.settings_file(), None);
                    crate::trust::default_trust(&agent)
                })
        });
        let mut args = self.args.clone();
        args.approve = Some(trusted);
        let settings = Settings::load(
            &self.agent_dir.settings_file(),
            trusted.then_some(cwd.as_path()),
        );
        // The sandbox comes from the user's settings (a project cannot set it), rebuilt for the
        // folder: its worktree and relative roots are the folder's.
        let policy = SandboxPolicy::from_settings(
            self.args.sandbox.as_deref(),
            &self.settings,
            &cwd,
            self.agent_dir.root(),
        )
        .map_err(|err| PlaceError::Sandbox(err.to_string()))?;
        let mut notices = Vec::new();
        let skipped = crate::resources::project_files(&cwd);
        if !trusted && !skipped.is_empty() {
            notices.push(format!(
                "The project's own {} in {} are not loaded: the folder is not trusted. Run `pith trust {}` to trust it, then open the session again.",
                skipped.join(", "),
                cwd.display(),
                cwd.display()
            ));
        }
        Ok(Place {
            cwd,
            args,
            settings,
            sandbox: Some(Arc::new(policy)),
            notices,
        })
    }

    /// The configuration of a session at `place` on `host` (its folder's): the user's models and
    /// keys, the place's command line and settings, its sandbox, and the skills and templates
    /// `host` sees. `Err` is the message of a configuration that cannot be used.
    pub async fn session_config(
        &self,
        place: &Place,
        host: &PluginHost,
    ) -> Result<(SessionConfig, ModelRegistry), String> {
        let (mut models, problems) = ModelRegistry::load(
            host,
            &self.agent_dir.models_file(),
            &self.agent_dir.auth_file(),
        );
        for problem in problems {
            tracing::warn!("{problem}");
        }
        let mut config = crate::commands::session_config::session_config(
            &place.args,
            &place.settings,
            &mut models,
            place.cwd.clone(),
            &self.agent_dir,
        )?;
        config.sandbox = place.sandbox.clone();
        config.resources =
            crate::resources::Resources::load(config.resources.dirs.clone(), host).await;
        Ok((config, models))
    }
}
