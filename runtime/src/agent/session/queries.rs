//! Read-only queries: `get_state`, `get_messages`, `get_session_stats`, fork and branch
//! messages, entries and the tree, the available models and thinking levels.

use super::answers::{
    ContextUsage, Entries, LastAssistantText, ModelList, ProjectTrust, SessionState, SessionStats,
    SessionTree, ThinkingLevels, TokenTotals, UserMessageList, UserMessageRef,
};
use super::*;
use crate::agent::conversation::messages::Messages as _;
use crate::agent::session::file::UnknownEntry;

impl Session {
    /// The session file's header (`{"type":"session","version":3,"id",…}`, as the file has
    /// it), as `--mode json` prints it first.
    pub fn session_header(&self) -> Map<String, Value> {
        self.shared.state().store.header().clone()
    }

    /// `get_state`.
    pub fn state(&self) -> SessionState {
        let state = self.shared.state();
        let pending = state.steering.len() + state.follow_up.len();
        // What of the project's own configuration is not loaded (an untrusted project), so a
        // host can ask the user whether to trust it.
        let trusted = self.shared.resources().dirs.project_trusted;
        let not_loaded = if trusted {
            Vec::new()
        } else {
            crate::resources::project_files(&self.shared.cwd)
        };
        SessionState {
            model: state.model.clone(),
            thinking_level: state.thinking,
            is_streaming: state.streaming,
            is_compacting: state.compacting > state.settling,
            steering_mode: state.steering.mode,
            follow_up_mode: state.follow_up.mode,
            interrupt_mode: state.interrupt_mode,
            session_file: state.store.path().map(|p| p.display().to_string()),
            session_id: state.session_id.clone(),
            session_name: state.session_name.clone(),
            auto_compaction_enabled: state.auto_compaction,
            message_count: state.messages.len(),
            pending_message_count: pending,
            queued_message_count: pending,
            todo_phases: state.todos.clone(),
            queue_mode: state.follow_up.mode,
            sandbox: self.shared.sandbox().describe(),
            project: ProjectTrust {
                trusted,
                not_loaded,
            },
        }
    }

    /// `get_session_stats`.
    pub fn stats(&self) -> SessionStats {
        let state = self.shared.state();
        let (mut users, mut assistants, mut calls, mut results) = (0, 0, 0, 0);
        let (mut input, mut output, mut cache_read, mut cache_write, mut cost) =
            (0u64, 0u64, 0u64, 0u64, 0f64);
        let mut last_context: Option<u64> = None;
        state.messages().each(&mut |message| match message {
            AgentMessage::User(_) => users += 1,
            AgentMessage::Assistant(a) => {
                assistants += 1;
                calls += a.tool_calls().count();
                input += a.usage.input;
                output += a.usage.output;
                cache_read += a.usage.cache_read;
                cache_write += a.usage.cache_write;
                cost += a.usage.cost.total;
                if a.usage.total_tokens > 0 {
                    last_context = Some(a.usage.total_tokens);
                }
            }
            AgentMessage::ToolResult(_) => results += 1,
            _ => {}
        });
        let window = state.model.as_ref().map_or(0, |m| m.context_window);
        let tokens = last_context.unwrap_or(0);
        let percent = if window > 0 {
            tokens as f64 / window as f64 * 100.0
        } else {
            0.0
        };
        SessionStats {
            session_file: state.store.path().map(|p| p.display().to_string()),
            session_id: state.session_id.clone(),
            user_messages: users,
            assistant_messages: assistants,
            tool_calls: calls,
            tool_results: results,
            total_messages: state.messages.len(),
            tokens: TokenTotals {
                input,
                output,
                cache_read,
                cache_write,
                total: input + output + cache_read + cache_write,
            },
            cost,
            context_usage: ContextUsage {
                tokens,
                context_window: window,
                percent,
            },
            extension_usage: self.shared.extension_spend(),
        }
    }

    /// `get_last_assistant_text`'s data: `{"text"}` or `{}`.
    pub fn last_assistant_text(&self) -> LastAssistantText {
        let state = self.shared.state();
        let messages = state.messages();
        let text = (0..messages.len())
            .rev()
            .find_map(|at| match messages.get(at).as_deref() {
                Some(AgentMessage::Assistant(a))
                    if !(a.stop_reason
                        == crate::agent::conversation::message::StopReason::Aborted
                        && a.content.is_empty()) =>
                {
                    Some(a.text())
                }
                _ => None,
            });
        LastAssistantText {
            text: text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
        }
    }

    /// `get_fork_messages`'s data: every user message with text, `{"entryId","text"}`.
    pub fn fork_messages(&self) -> UserMessageList {
        let state = self.shared.state();
        let messages = state
            .store
            .user_messages()
            .into_iter()
            .map(|(entry_id, text)| UserMessageRef {
                entry_id,
                text,
                entry_index: None,
            })
            .collect();
        UserMessageList { messages }
    }

    /// `get_branch_messages`: as `get_fork_messages`, each with pi 0.16's `entryIndex` (its
    /// position in the conversation) when it is in the current context.
    pub fn branch_messages(&self) -> UserMessageList {
        let state = self.shared.state();
        let messages = state
            .store
            .user_messages()
            .into_iter()
            .map(|(entry_id, text)| UserMessageRef {
                entry_index: state.entry_ids.iter().position(|e| *e == entry_id),
                entry_id,
                text,
            })
            .collect();
        UserMessageList { messages }
    }

    /// The entry id of the message at `index` in the conversation (pi 0.16's `entryIndex`).
    pub fn entry_at(&self, index: u64) -> Result<String, SessionError> {
        let state = self.shared.state();
        usize::try_from(index)
            .ok()
            .and_then(|i| state.entry_ids.get(i))
            .cloned()
            .ok_or(SessionError::InvalidEntryIndex)
    }

    /// `get_available_models`'s data.
    pub fn available_models(&self) -> ModelList {
        ModelList {
            models: self.shared.models().available(),
        }
    }

    /// `get_available_thinking_levels`: the levels of the current model (`off` only without
    /// reasoning).
    pub fn available_thinking_levels(&self) -> ThinkingLevels {
        let levels = match &self.shared.state().model {
            Some(model) if model.reasoning => ThinkingLevel::available(model),
            _ => vec![ThinkingLevel::Off],
        };
        ThinkingLevels { levels }
    }

    /// `get_entries`: the session's entries (after `since`, an entry id) and the leaf.
    pub fn entries(&self, since: Option<&str>) -> Result<Entries, SessionError> {
        let state = self.shared.state();
        let entries = state
            .store
            .entries_since(since)
            .map_err(|UnknownEntry(id)| SessionError::EntryNotFound(id))?;
        Ok(Entries {
            entries,
            leaf_id: state.store.leaf_id().map(str::to_string),
        })
    }

    /// `get_tree`: the session tree and the leaf.
    pub fn tree(&self) -> SessionTree {
        let state = self.shared.state();
        SessionTree {
            tree: state.store.tree(),
            leaf_id: state.store.leaf_id().map(str::to_string),
        }
    }
}
