//! The user's own records: the session's record read for its export page, and the `bash`
//! command.

use super::*;
use crate::agent::extensions::session_hooks::{self, UserBashAnswer};
use crate::agent::session::file::held::HeldMessages;
use crate::agent::session::user_bash::BashResult;

impl Session {
    /// Reads the session's record under its lock: its file, its name and the conversation at
    /// its leaf (the export page is rendered from them; a run goes on meanwhile).
    pub fn read_record<R>(
        &self,
        read: impl FnOnce(&SessionFile, Option<&str>, &HeldMessages<'_>) -> R,
    ) -> R {
        let state = self.shared.state();
        read(
            &state.store,
            state.session_name.as_deref(),
            &state.messages(),
        )
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &std::path::Path {
        &self.shared.cwd
    }

    /// `bash`: runs the user's command (or what an extension's `user_bash` answer says) and
    /// records it in the conversation (after the run when one is streaming).
    pub async fn bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_output: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<BashResult, SessionError> {
        // pi's `user_bash`, awaited before the command runs: an extension may supply its
        // outcome, or a command line to run in its place.
        let answer = if self.shared.extensions.wants("user_bash") {
            use crate::agent::extensions::hooks::{Event, UserBashEvent};
            let event = Event::UserBash(UserBashEvent {
                command: command.to_string(),
                exclude_from_context,
                cwd: self.shared.cwd.display().to_string(),
            });
            session_hooks::user_bash(&self.shared.extensions, event).await
        } else {
            None
        };
        let sandbox = self.shared.sandbox();
        let line = match &answer {
            Some(UserBashAnswer::RunInstead(line)) => line.as_str(),
            _ => command,
        };
        let result = match answer {
            Some(UserBashAnswer::Result(given)) => BashResult {
                output: given.output,
                exit_code: given.exit_code,
                cancelled: given.cancelled,
                truncated: given.truncated,
                full_output_path: None,
            },
            _ => self
                .shared
                .bash
                .run(line, &self.shared.cwd, &sandbox, on_output)
                .await
                .map_err(SessionError::Bash)?,
        };
        let mut message = result.message(command);
        // pi 1.5's `excludeFromContext`: recorded, shown to hosts, never sent to the model.
        message.exclude_from_context = exclude_from_context.then_some(true);
        let record = AgentMessage::BashExecution(message);
        self.shared.emit(&SessionEvent::BashEnd {
            message: record.clone(),
        });
        {
            let mut state = self.shared.state();
            if state.streaming {
                state.pending_bash.push(record);
            } else {
                state.append(record);
            }
        }
        Ok(result)
    }

    /// `abort_bash`: kills the running `bash` command.
    pub fn abort_bash(&self) {
        self.shared.bash.abort();
    }
}
