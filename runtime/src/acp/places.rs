//! Where an ACP session works: any absolute directory the client names, not only the one pith
//! was started in. A session elsewhere gets that folder's own trust decision (the trust record;
//! never the start folder's `--approve`), that project's settings when trusted, and a sandbox
//! whose workspace is that folder; its tools, shell, context files, sessions directory, MCP
//! servers and project plugins follow (the folder's plugin host: `workspace_hosts.rs`). What is
//! per process stays shared: the WebAssembly engine, the compiled code and the HTTP client.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Error;

use super::Server;
use crate::cli::Args;
use crate::sandbox::SandboxPolicy;
use crate::settings::Settings;

/// A session's directory, checked, and what follows from it.
pub(super) struct Place {
    /// The directory (canonical).
    pub cwd: PathBuf,
    /// The command line as it applies there (`approve`: that folder's trust).
    pub args: Args,
    /// The settings there (the user's, and the project's when trusted).
    pub settings: Settings,
    /// The sandbox there, when it is not the process's.
    pub sandbox: Option<Arc<SandboxPolicy>>,
    /// What the client is told (an untrusted folder's resources left out).
    pub notices: Vec<String>,
}

impl Server {
    /// The place of a session in `cwd`: an absolute, existing directory.
    pub(super) fn place(&self, cwd: &Path) -> Result<Place, Error> {
        if !cwd.is_absolute() {
            return Err(super::invalid(format!(
                "cwd must be an absolute path (got {:?}): give the session's folder as an absolute path",
                cwd.display().to_string()
            )));
        }
        if !cwd.is_dir() {
            return Err(super::invalid(format!(
                "cwd {} is not a directory (it does not exist, or it is a file): give the folder the session works in",
                cwd.display()
            )));
        }
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
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
        let trusted = crate::trust::TrustRecord::load(self.agent_dir.root())
            .ok()
            .and_then(|record| record.decision(&cwd))
            .unwrap_or_else(|| {
                let agent = Settings::load(&self.agent_dir.settings_file(), None);
                crate::trust::default_trust(&agent)
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
        .map_err(super::internal)?;
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
}
