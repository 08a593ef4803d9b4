//! Replacing the session: a new session, switching to a file, forking and cloning (with the
//! extensions' `session_before_switch` / `session_before_fork` hooks).

use super::answers::{ForkOutcome, SwitchOutcome};
use super::*;
use crate::agent::extensions::hooks::{SessionStartReason, ShutdownReason};
use crate::agent::session::file::held::{self, Held};
use crate::agent::tools::ToolSelection;
use std::path::Path;

impl Session {
    /// `new_session`: aborts any run and starts an empty session (with `parentSession` in its
    /// header when given); the thinking level is recorded in it, as pi does.
    pub async fn new_session(&self, parent_session: Option<&str>) -> SwitchOutcome {
        if self.switch_cancelled(SwitchReason::New, None).await {
            return SwitchOutcome { cancelled: true };
        }
        let previous = self.session_file();
        self.abort().await;
        let (id, path) = new_session_file(self.shared.sessions_dir().as_deref(), None);
        self.shut_down_extensions(ShutdownReason::New, path.as_deref())
            .await;
        let store = SessionFile::create(path, &id, &self.shared.cwd, parent_session);
        {
            let mut state = self.shared.state();
            state.steering.drain();
            state.follow_up.drain();
            self.replace_store(&mut state, store);
            state.record_thinking();
        }
        self.after_switch("new", previous.clone());
        self.restart_extensions(SessionStartReason::New, previous)
            .await;
        SwitchOutcome { cancelled: false }
    }

    /// Asks the extensions whether a switch may happen (`session_before_switch`).
    pub(super) async fn switch_cancelled(
        &self,
        reason: SwitchReason,
        target: Option<String>,
    ) -> bool {
        self.shared
            .extensions
            .hook(
                "session_before_switch",
                HookEvent::SessionBeforeSwitch(BeforeSwitchEvent {
                    reason,
                    target_session_file: target,
                }),
            )
            .await
            .cancelled()
    }

    /// The session file's path, when it has one (not an in-memory session).
    pub fn file(&self) -> Option<std::path::PathBuf> {
        self.shared.state().store.path().map(Path::to_path_buf)
    }

    /// The session's id (its file's).
    pub fn id(&self) -> String {
        self.shared.state().session_id.clone()
    }

    /// The current session file's path, if it has one.
    pub(super) fn session_file(&self) -> Option<String> {
        self.shared
            .state()
            .store
            .path()
            .map(|p| p.display().to_string())
    }

    /// Tells the extensions a switch happened (`session_switch`).
    pub(super) fn after_switch(&self, reason: &str, previous: Option<String>) {
        self.shared.emit(&SessionEvent::SessionSwitch {
            reason: reason.to_string(),
            previous_session_file: previous,
        });
    }

    /// Makes `store` the session: its context becomes the conversation.
    pub(super) fn replace_store(&self, state: &mut State, store: SessionFile) {
        let context = store.held_context();
        state.session_id = store.id().to_string();
        state.session_name = store.name();
        state.store = store;
        state.pending_bash.clear();
        state.load_context(context);
    }

    /// `switch_session` to `store`, opened from `full` (a session of this session's folder; the
    /// RPC front-end gives one of another folder a new session there): after the extensions'
    /// `session_before_switch`, any run is aborted and the file becomes the session, its folder
    /// the place of the next new sessions (as pi's `SessionManager.open`). Restores the file's
    /// model when it is available and its thinking level.
    pub async fn switch_to_file(&self, full: &Path, store: SessionFile) -> SwitchOutcome {
        if self
            .switch_cancelled(SwitchReason::Resume, Some(full.display().to_string()))
            .await
        {
            return SwitchOutcome { cancelled: true };
        }
        let previous = self.session_file();
        self.abort().await;
        self.shut_down_extensions(ShutdownReason::Resume, Some(full))
            .await;
        self.files_beside(full);
        let context = store.held_context();
        let level = {
            let mut state = self.shared.state();
            state.steering.drain();
            state.follow_up.drain();
            if let Some(model) = restored_model(&context, &store, &self.shared.models()) {
                let previous = state.model.replace(model.clone());
                if previous.as_ref() != Some(&model) {
                    self.model_selected(
                        &model,
                        previous,
                        crate::agent::extensions::hooks::ModelSelectSource::Restore,
                    );
                }
            }
            self.replace_store(&mut state, store);
            context
                .thinking_level
                .as_deref()
                .and_then(ThinkingLevel::parse)
                .unwrap_or(state.thinking)
        };
        self.apply_thinking(level);
        self.after_switch("resume", previous.clone());
        self.restart_extensions(SessionStartReason::Resume, previous)
            .await;
        SwitchOutcome { cancelled: false }
    }

    /// pi's `session_shutdown` to the extensions, before the session is replaced.
    async fn shut_down_extensions(&self, reason: ShutdownReason, target: Option<&Path>) {
        let target = target.map(|path| path.display().to_string());
        self.shared
            .extensions
            .session_shutdown(reason, target)
            .await;
    }

    /// pi's `session_shutdown` with `quit`: the process is ending; awaited, so an extension
    /// finishes its work first.
    pub async fn quit(&self) {
        self.shut_down_extensions(ShutdownReason::Quit, None).await;
    }

    /// New sessions are written beside `file` from now on (in its folder).
    fn files_beside(&self, file: &Path) {
        if let Some(folder) = file.parent() {
            *self
                .shared
                .sessions_dir
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(folder.to_path_buf());
        }
    }

    /// An extension's `switch-session` where the front-end leaves it to the engine: `path`
    /// (relative to the session's folder) becomes the session when it was saved in this
    /// folder. `Ok(true)`: an extension cancelled it.
    pub async fn switch_from_extension(&self, path: &str) -> Result<bool, String> {
        let full = crate::sandbox::paths::normalize(&self.cwd().join(path));
        let (store, problems) = SessionFile::open(&full).map_err(|err| err.to_string())?;
        for problem in problems {
            tracing::warn!("{problem}");
        }
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(cwd) = store.saved_cwd()
            && canonical(&cwd) != canonical(self.cwd())
        {
            return Err(format!(
                "{} was saved in {}, another folder: this front-end switches only to sessions \
                 of {}",
                full.display(),
                cwd.display(),
                self.cwd().display()
            ));
        }
        Ok(self.switch_to_file(&full, store).await.cancelled)
    }

    /// Asks the extensions whether the session may be left for the session file `target`
    /// (`session_before_switch`): false when one cancelled.
    pub async fn may_switch_to(&self, target: &Path) -> bool {
        !self
            .switch_cancelled(SwitchReason::Resume, Some(target.display().to_string()))
            .await
    }

    /// Leaves this session for another folder's, which a new session will hold (after
    /// [`Session::may_switch_to`]): any run is aborted and the session closed (its dialogs
    /// cancelled, its host-tool calls failed, its MCP servers stopped).
    pub async fn leave(&self, target: Option<&Path>) -> Departure {
        let carried = {
            let state = self.shared.state();
            Carried {
                steering: state.steering.mode,
                follow_up: state.follow_up.mode,
                interrupt: state.interrupt_mode,
                auto_compaction: state.auto_compaction,
                auto_retry: state.auto_retry,
                host_tools: state.host_tools.clone(),
                tools: state.tools.clone(),
                announce_answers: self.shared.ui.announces_answers(),
            }
        };
        let departure = Departure {
            previous_session_file: self.session_file(),
            model: self.model_and_thinking(),
            carried,
        };
        self.cancel_dialogs();
        self.abort().await;
        self.shut_down_extensions(ShutdownReason::Resume, target)
            .await;
        self.close().await;
        departure
    }

    /// Closes the session for good: its dialogs are cancelled, its host-tool calls failed, its
    /// MCP servers stopped and their files no longer watched.
    pub async fn close(&self) {
        self.cancel_dialogs();
        self.shared.bridge.close();
        self.shared.mcp().shut_down().await;
        self.shared
            .mcp_watcher
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
    }

    /// Takes over what the host set on the session it left (`departure`): the queue and
    /// interrupt modes, automatic compaction and retry, the host's tools and the active-tool
    /// choice, as pi keeps them across a switch.
    pub fn arrive(&self, departure: Departure) {
        let carried = departure.carried;
        {
            let mut state = self.shared.state();
            state.steering.mode = carried.steering;
            state.follow_up.mode = carried.follow_up;
            state.interrupt_mode = carried.interrupt;
            state.auto_compaction = carried.auto_compaction;
            state.auto_retry = carried.auto_retry;
            state.host_tools = carried.host_tools;
            state.tools = carried.tools;
        }
        if carried.announce_answers {
            self.shared.ui.announce_answers();
        }
    }

    /// `fork` (and `branch`): a new session with the conversation up to (not including) the
    /// user message `entry_id`; returns that message's text so the host can edit and resend it.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkOutcome, SessionError> {
        if self.fork_cancelled(entry_id).await {
            return Ok(ForkOutcome {
                text: String::new(),
                cancelled: true,
            });
        }
        self.fork_point(entry_id)?;
        let previous = self.session_file();
        self.shut_down_extensions(ShutdownReason::Fork, None).await;
        let forked = self.fork_now(entry_id)?;
        self.forked_from(previous.clone());
        self.restart_extensions(SessionStartReason::Fork, previous)
            .await;
        Ok(forked)
    }

    /// `session_before_fork` for a fork or clone at `entry_id`: true when an extension cancelled.
    pub(super) async fn fork_cancelled(&self, entry_id: &str) -> bool {
        self.shared
            .extensions
            .hook(
                "session_before_fork",
                HookEvent::SessionBeforeFork(entry_id.to_string()),
            )
            .await
            .cancelled()
    }

    /// Tells the extensions the session was forked or cloned from `previous` (`session_fork`).
    pub(super) fn forked_from(&self, previous: Option<String>) {
        self.shared.emit(&SessionEvent::SessionFork {
            previous_session_file: previous,
        });
    }

    /// `clone`: a copy of the current branch in a new session file, which becomes the session.
    pub async fn clone_session(&self) -> Result<SwitchOutcome, SessionError> {
        let (leaf, empty) = {
            let state = self.shared.state();
            (
                state.store.leaf_id().map(str::to_string),
                state.messages.is_empty(),
            )
        };
        let Some(leaf) = leaf else {
            return Err(SessionError::CloneNoLeaf);
        };
        if empty {
            return Err(SessionError::CloneEmpty);
        }
        if self.fork_cancelled(&leaf).await {
            return Ok(SwitchOutcome { cancelled: true });
        }
        self.abort().await;
        let previous = self.session_file();
        let (id, path) = new_session_file(self.shared.sessions_dir().as_deref(), None);
        self.shut_down_extensions(ShutdownReason::Fork, path.as_deref())
            .await;
        {
            let mut state = self.shared.state();
            let cloned = state.store.branch(Some(&leaf), path, &id, &self.shared.cwd);
            self.replace_store(&mut state, cloned);
        }
        self.forked_from(previous.clone());
        self.restart_extensions(SessionStartReason::Fork, previous)
            .await;
        Ok(SwitchOutcome { cancelled: false })
    }

    /// The user message `entry_id` a fork starts before: its text and its parent's id.
    fn fork_point(&self, entry_id: &str) -> Result<(String, Option<String>), SessionError> {
        let state = self.shared.state();
        let entry = state
            .store
            .entry(entry_id)
            .ok_or(SessionError::InvalidForkEntry)?;
        let message = state
            .store
            .body(entry)
            .remove("message")
            .and_then(|m| serde_json::from_value::<AgentMessage>(m).ok());
        let Some(AgentMessage::User(user)) = message else {
            return Err(SessionError::InvalidForkEntry);
        };
        Ok((user.content.text(), entry.parent().map(str::to_string)))
    }

    pub(super) fn fork_now(&self, entry_id: &str) -> Result<ForkOutcome, SessionError> {
        let (text, parent) = self.fork_point(entry_id)?;
        let mut state = self.shared.state();
        let (id, path) = new_session_file(self.shared.sessions_dir().as_deref(), None);
        let branched = match &parent {
            Some(parent) => state
                .store
                .branch(Some(parent), path, &id, &self.shared.cwd),
            None => {
                let previous = state.store.path().map(|p| p.display().to_string());
                SessionFile::create(path, &id, &self.shared.cwd, previous.as_deref())
            }
        };
        self.replace_store(&mut state, branched);
        Ok(ForkOutcome {
            text,
            cancelled: false,
        })
    }
}

/// What a session left for another folder's hands over (`Session::leave`).
pub struct Departure {
    /// The file left (pi's `previousSessionFile`).
    pub previous_session_file: Option<String>,
    /// The model and thinking level it had: the next session's when its file names none.
    pub model: (Option<Model>, ThinkingLevel),
    carried: Carried,
}

/// What the host set on a session that the next one keeps.
struct Carried {
    steering: QueueMode,
    follow_up: QueueMode,
    interrupt: InterruptMode,
    auto_compaction: bool,
    auto_retry: bool,
    host_tools: Vec<HostToolDefinition>,
    tools: ToolSelection,
    announce_answers: bool,
}

/// The model a resumed session goes back to: the one of its latest `model_change`, or, when
/// that one is gone (a virtual model whose extension is not loaded), the physical model that
/// answered last, as pi falls back.
pub(super) fn restored_model(
    context: &crate::agent::session::file::Context<Held>,
    store: &SessionFile,
    models: &crate::agent::models::ModelRegistry,
) -> Option<Model> {
    let (provider, id) = context.model.as_ref()?;
    models.find_available(provider, id).or_else(|| {
        context
            .messages
            .iter()
            .rev()
            .find_map(|(id, held)| {
                let message = match held {
                    Held::Parsed { message, .. } => std::borrow::Cow::Borrowed(&**message),
                    Held::Stored => std::borrow::Cow::Owned(held::read_stored(store, id)?),
                };
                match message.as_ref() {
                    AgentMessage::Assistant(answer)
                        if !matches!(
                            answer.stop_reason,
                            crate::agent::conversation::message::StopReason::Error
                                | crate::agent::conversation::message::StopReason::Aborted
                        ) =>
                    {
                        Some((answer.provider.clone(), answer.model.clone()))
                    }
                    _ => None,
                }
            })
            .and_then(|(provider, model)| models.find_available(&provider, &model))
            .filter(|model| !model.is_virtual())
    })
}
