//! The ends of runs (the plan completed, the plan-mode select) and the start of a session
//! (the state restored from the last `plan-mode` entry).

use crate::messages::{self, custom};
use crate::utils::{self, TodoItem, all_steps_complete, extract_todo_items};
use crate::{EXECUTE, PlanMode, REFINE, SELECT_TITLE, STATE_ENTRY, STAY};
use pith_sdk::extension::*;
use serde_json::Value;

/// The todos of a `plan-mode` entry's data.
fn parse_todos(todos: &[Value]) -> Vec<TodoItem> {
    todos
        .iter()
        .map(|t| TodoItem {
            step: t["step"]
                .as_u64()
                .or_else(|| t["step"].as_f64().map(|s| s as u64))
                .unwrap_or(0),
            text: t["text"].as_str().unwrap_or_default().to_string(),
            completed: t["completed"].as_bool().unwrap_or(false),
        })
        .collect()
}

impl PlanMode {
    /// The end of a run: the plan completed, or the plan-mode select.
    pub(crate) fn on_agent_end(&mut self, event: &agent_events::AgentEndEvent) {
        let last_assistant = messages::last_assistant_text(&event.messages);
        if self.execution_mode && !self.todo_items.is_empty() {
            // Fallback: the model wrapped up without [DONE:n] tags ("All steps complete").
            if last_assistant.as_deref().is_some_and(all_steps_complete) {
                self.todo_items.iter_mut().for_each(|t| t.completed = true);
            }
            if self.todo_items.iter().all(|t| t.completed) {
                let card = custom(
                    "plan-complete",
                    messages::plan_complete(&self.todo_items),
                    true,
                );
                session::send_message(&card, Some(session::Delivery::NextTurn), false);
                self.execution_mode = false;
                self.todo_items.clear();
                self.update_status();
                self.persist_state();
            }
            return;
        }

        if !self.plan_mode_enabled || !session_read::has_ui() {
            return;
        }
        if let Some(text) = last_assistant {
            let extracted = extract_todo_items(&text);
            if !extracted.is_empty() {
                self.todo_items = extracted;
            }
        }
        if self.todo_items.is_empty() {
            return;
        }
        self.persist_state();

        let todo_list = custom(
            "plan-todo-list",
            messages::todo_list(&self.todo_items),
            true,
        );
        let options = [EXECUTE, STAY, REFINE].map(String::from);
        let choice = ui::select(SELECT_TITLE, &options, None);
        let follow_up = Some(session::Delivery::FollowUp);
        if choice.as_deref().is_some_and(|c| c.starts_with("Execute")) {
            let Some(first) = self.todo_items.first().cloned() else {
                return;
            };
            self.plan_mode_enabled = false;
            self.execution_mode = true;
            self.restore_normal_mode_tools();
            self.update_status();
            self.persist_state();

            let execute = messages::execute(&self.todo_items, &first);
            // The run is over in pith: the first follow-up starts the next one (see the crate docs).
            session::send_message(&todo_list, follow_up, true);
            session::send_message(&custom("plan-mode-execute", execute, true), follow_up, true);
        } else if choice.as_deref() == Some(REFINE) {
            let refinement = ui::editor("Refine the plan:", Some(""));
            let refinement = refinement
                .as_deref()
                .map(pith_sdk::js::trim)
                .unwrap_or_default();
            if !refinement.is_empty() {
                session::send_message(&todo_list, follow_up, true);
                session::send_user_message(&[Content::text(refinement)], follow_up);
            }
        }
    }

    /// Restores the state when a session starts.
    pub(crate) fn on_session_start(&mut self) {
        if flag_on("plan") {
            self.plan_mode_enabled = true;
        }
        let all = session_read::all_entries();

        let state_entry = all.iter().rev().find_map(|entry| match &entry.body {
            entries::EntryBody::Custom(custom) if custom.custom_type == STATE_ENTRY => {
                Some(custom.data.as_deref())
            }
            _ => None,
        });
        let data = state_entry
            .flatten()
            .and_then(|data| serde_json::from_str::<Value>(data).ok())
            .filter(|data| !data.is_null());
        if let Some(data) = data {
            if let Some(enabled) = data["enabled"].as_bool() {
                self.plan_mode_enabled = enabled;
            }
            if let Some(todos) = data["todos"].as_array() {
                self.todo_items = parse_todos(todos);
            }
            if let Some(executing) = data["executing"].as_bool() {
                self.execution_mode = executing;
            }
            if let Some(tools) = data["toolsBeforePlanMode"].as_array() {
                let names = tools.iter().filter_map(Value::as_str).map(String::from);
                self.tools_before_plan_mode = Some(names.collect());
            }
        }

        // On resume, the [DONE:n] markers since the last plan-mode-execute message count.
        let is_resume = state_entry.is_some();
        if is_resume && self.execution_mode && !self.todo_items.is_empty() {
            let custom_type = |body: &entries::EntryBody| match body {
                entries::EntryBody::Custom(c) => Some(c.custom_type.clone()),
                entries::EntryBody::CustomMessage(c) => Some(c.custom_type.clone()),
                entries::EntryBody::Message(entries::AgentMessage::Custom(c)) => {
                    Some(c.custom_type.clone())
                }
                _ => None,
            };
            let start = all
                .iter()
                .rposition(|e| custom_type(&e.body).as_deref() == Some("plan-mode-execute"))
                .map_or(0, |i| i + 1);
            let text = all[start..]
                .iter()
                .filter_map(|entry| match &entry.body {
                    entries::EntryBody::Message(entries::AgentMessage::Assistant(message)) => {
                        Some(messages::entry_text(message))
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            utils::mark_completed_steps(&text, &mut self.todo_items);
        }

        if self.plan_mode_enabled {
            self.enable_plan_mode_tools();
        }
        self.update_status();
    }
}
