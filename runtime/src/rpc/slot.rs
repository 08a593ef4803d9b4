//! The session an RPC process serves. A host has one session at a time (pi's protocol), but
//! `switch_session` to a file saved in another folder replaces it with a session of that folder,
//! as pi rebuilds its runtime for the file's `cwd`: the tools, the shell, the sandbox, the context
//! files, the project's settings, plugins and trust, and where new session files go all become
//! that folder's. Every command takes the session from here when it starts; one that arrives
//! while a switch, new session or fork is under way waits for it, so it runs on the session the
//! host meant.

use std::path::Path;
use std::sync::{Arc, RwLock, Weak};

use super::events::RpcEvents;
use crate::agent::session::answers::SwitchOutcome;
use crate::agent::session::file::SessionFile;
use crate::agent::session::{Session, SessionError};
use crate::plugin_host::PluginHost;
use crate::plugin_host::reload::ReloadReport;
use crate::workspaces::hosts::{OnReload, WorkspaceHosts};
use crate::workspaces::{PlaceError, StartFolder, canonical};

/// The session served, and what a session of another folder is made from.
pub struct SessionSlot {
    current: RwLock<Session>,
    start: Arc<StartFolder>,
    hosts: Arc<WorkspaceHosts>,
    /// What a reload of a folder's plugins reaches (every session of the process).
    on_reload: OnReload,
    events: Arc<RpcEvents>,
    /// Commands that replace the session, under way.
    replacing: tokio::sync::watch::Sender<usize>,
}

/// Why `switch_session` to another folder's file failed; the session is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum SwitchError {
    /// The file cannot be opened, or the switch failed in the engine.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The folder the file was saved in is gone (pi's text).
    #[error(
        "Stored session working directory does not exist: {cwd}\nSession file: {file}\nCurrent working directory: {current}"
    )]
    CwdMissing {
        /// The file's folder.
        cwd: String,
        /// The file.
        file: String,
        /// The session's folder now.
        current: String,
    },
    /// The folder cannot hold a session (its sandbox).
    #[error(transparent)]
    Place(#[from] PlaceError),
    /// The folder's settings make no usable session.
    #[error("{0}")]
    Config(String),
}

/// A command that replaces the session, counted until it is answered.
pub struct Replacing(Arc<SessionSlot>);

impl Drop for Replacing {
    fn drop(&mut self) {
        self.0.replacing.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl SessionSlot {
    /// The slot of `session`; sessions of other folders are made from `start` on the plugin
    /// hosts of `hosts` (shared by the sessions of a process).
    pub fn new(
        session: Session,
        start: Arc<StartFolder>,
        hosts: Arc<WorkspaceHosts>,
        events: Arc<RpcEvents>,
        on_reload: OnReload,
    ) -> Arc<SessionSlot> {
        let slot = Arc::new(SessionSlot {
            current: RwLock::new(session),
            start,
            hosts,
            on_reload,
            events: events.clone(),
            replacing: tokio::sync::watch::Sender::new(0),
        });
        // An extension's `switch-session` moves the session as the `switch_session` command
        // does, to another folder too; the commands read meanwhile wait for it.
        let weak = Arc::downgrade(&slot);
        events.on_switch(Box::new(move |path| {
            let weak = weak.clone();
            Box::pin(async move {
                let slot = weak.upgrade().ok_or("the session has ended")?;
                let _replacing = slot.replacing();
                slot.switch_session(&path)
                    .await
                    .map(|outcome| outcome.cancelled)
                    .map_err(|err| err.to_string())
            })
        }));
        slot
    }

    /// The session served now.
    pub fn current(&self) -> Session {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The start folder's plugin host (the process's).
    pub fn start_host(&self) -> &Arc<PluginHost> {
        &self.start.host
    }

    /// Counts a command that replaces the session from the moment it is read, so the commands
    /// read after it wait for it ([`SessionSlot::settled`]).
    pub fn replacing(self: &Arc<Self>) -> Replacing {
        self.replacing.send_modify(|n| *n += 1);
        Replacing(self.clone())
    }

    /// Waits until no command that replaces the session is under way.
    pub async fn settled(&self) {
        let mut replacing = self.replacing.subscribe();
        let _ = replacing.wait_for(|n| *n == 0).await;
    }

    /// A reload of `host`'s plugins reaches the session when it runs there.
    pub fn plugins_reloaded(&self, host: &Weak<PluginHost>, report: ReloadReport) {
        let session = self.current();
        if session.runs_on(host) {
            tokio::spawn(async move { session.plugins_reloaded(report).await });
        }
    }

    /// `switch_session`: `path` (relative to the folder pith started in, as pi resolves it) is
    /// opened; a file of the session's folder becomes the session in place, one saved in another
    /// folder gets a new session there.
    pub async fn switch_session(&self, path: &str) -> Result<SwitchOutcome, SwitchError> {
        let current = self.current();
        let full = crate::sandbox::paths::normalize(&self.start.workspace.join(path));
        let (store, problems) = SessionFile::open(&full).map_err(SessionError::from)?;
        for problem in problems {
            tracing::warn!("{problem}");
        }
        let cwd = store
            .saved_cwd()
            .unwrap_or_else(|| self.start.workspace.clone());
        if canonical(&cwd) == canonical(current.cwd()) {
            return Ok(current.switch_to_file(&full, store).await);
        }
        if !current.may_switch_to(&full).await {
            return Ok(SwitchOutcome { cancelled: true });
        }
        if !cwd.is_dir() {
            return Err(SwitchError::CwdMissing {
                cwd: cwd.display().to_string(),
                file: full.display().to_string(),
                current: current.cwd().display().to_string(),
            });
        }
        self.switch_folder(current, &full, store, &cwd).await
    }

    /// Replaces `current` by a session of `cwd` holding `store` (opened from `full`), once its
    /// extensions let it go.
    async fn switch_folder(
        &self,
        current: Session,
        full: &Path,
        store: SessionFile,
        cwd: &Path,
    ) -> Result<SwitchOutcome, SwitchError> {
        let place = self.start.place(cwd, self.start.args.trust_flag)?;
        self.start.host.deferred_settled().await;
        let (host, plugin_notices) = self
            .hosts
            .host_for(&self.start, &place, self.on_reload.clone())
            .await;
        let (mut config, models) = self
            .start
            .session_config(&place, &host)
            .await
            .map_err(SwitchError::Config)?;
        let departure = current.leave(Some(full)).await;
        // pi writes nothing on stdout for the switch: what the user should know goes to stderr.
        eprintln!(
            "pith: the session now works in {} (its tools, shell, sandbox and project files)",
            place.cwd.display()
        );
        for notice in place.notices.iter().chain(&plugin_notices) {
            eprintln!("pith: {notice}");
        }
        config.session = Some(store);
        config.sessions_dir = full.parent().map(Path::to_path_buf);
        if let Some(model) = departure.model.0.clone() {
            config.model = Some(model);
        }
        let session = Session::new(host, self.events.clone(), models, config);
        let previous = departure.previous_session_file.clone();
        session.arrive(departure);
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = session.clone();
        drop(current);
        self.hosts.release_unused().await;
        session.start_extensions_resumed(previous).await;
        Ok(SwitchOutcome { cancelled: false })
    }
}
