//! The user's own records: `export_html` and the `bash` command.

use super::*;

impl Session {
    /// `export_html`: the session as one self-contained HTML file; `{"path"}`.
    pub fn export_html(&self, output: Option<&str>) -> Result<Value, String> {
        // Rendered under the session's lock, written after it (a run goes on meanwhile).
        let (html, default) = {
            let state = self.shared.state();
            let Some(file) = state.store.path() else {
                return Err("Cannot export in-memory session to HTML".into());
            };
            if !state.store.is_written() {
                return Err("Nothing to export yet - start a conversation first".into());
            }
            let default = format!(
                "pith-session-{}.html",
                file.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            let html =
                crate::export::render(&state.store, state.session_name.as_deref(), &state.messages);
            (html, default)
        };
        let target = self.shared.cwd.join(output.unwrap_or(&default));
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
        }
        std::fs::write(&target, html)
            .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
        Ok(json!({"path": output.map_or(default, str::to_string)}))
    }

    /// `bash`: runs the user's command and records it in the conversation (after the run when
    /// one is streaming), without an event.
    pub async fn bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_output: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Value, String> {
        let result = self
            .shared
            .bash
            .run(command, &self.shared.cwd, &self.shared.sandbox(), on_output)
            .await?;
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
        Ok(serde_json::to_value(result).unwrap_or(Value::Null))
    }

    /// `abort_bash`: kills the running `bash` command.
    pub fn abort_bash(&self) {
        self.shared.bash.abort();
    }
}
