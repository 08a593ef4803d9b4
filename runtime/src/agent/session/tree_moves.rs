//! Moving in the session tree without leaving the file: `navigate_tree` (the leaf moves to an
//! entry, and the next prompt starts a branch there, as pi's `/tree` does) and
//! `set_entry_label` (pi's label entries, shown in `get_tree`).
//!
//! Extensions are asked first with `session_before_tree` — delivered as an observed event
//! (`{targetId, oldLeafId}`), which an extension cancels by answering `cancel`, so that
//! extensions built before it existed still load — and told after with `session_tree`.

use super::answers::TreeMove;
use super::*;
use crate::agent::session::file::UnknownEntry;

impl Session {
    /// `navigate_tree`: makes `entry_id` the leaf. For a user message the leaf becomes its
    /// parent and its text comes back as `editorText` (to edit and resend, as pi does); the
    /// conversation becomes the path to the new leaf. Refused while a run streams.
    pub async fn navigate_tree(&self, entry_id: &str) -> Result<TreeMove, SessionError> {
        if self.is_streaming() || self.shared.state().compacting > 0 {
            return Err(SessionError::NavigateWhileRunning);
        }
        let (entry, old_leaf, session_id) = {
            let state = self.shared.state();
            let entry = state
                .store
                .entry(entry_id)
                .map(|entry| state.store.body(entry))
                .ok_or_else(|| SessionError::EntryNotFound(entry_id.to_string()))?;
            let leaf = state.store.leaf_id().map(str::to_string);
            (entry, leaf, state.store.id().to_string())
        };
        let asked = json!({"targetId": entry_id, "oldLeafId": old_leaf});
        // The hook comes after every event the extensions were already sent.
        self.shared.extensions.observed_so_far().await;
        let outcome = self
            .shared
            .extensions
            .hook(
                "session_before_tree",
                HookEvent::Observe(("session_before_tree".into(), asked.to_string())),
            )
            .await;
        if outcome.cancelled() {
            return Ok(TreeMove {
                cancelled: true,
                leaf_id: None,
                editor_text: None,
            });
        }
        // A user message (or a custom message, as pi has it) goes back to the editor.
        let user = match entry.get("type").and_then(Value::as_str) {
            Some("custom_message") => Some(content_text(entry.get("content"))),
            _ => entry
                .get("message")
                .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                .map(|m| content_text(m.get("content"))),
        };
        let leaf = match &user {
            Some(_) => entry
                .get("parentId")
                .and_then(Value::as_str)
                .map(str::to_string),
            None => Some(entry_id.to_string()),
        };
        {
            let mut state = self.shared.state();
            // While the extensions were asked, a run, a compaction or a switch may have started:
            // the move would then cut under it.
            if state.streaming || state.compacting > 0 {
                return Err(SessionError::NavigateRaced);
            }
            if state.store.id() != session_id || state.store.leaf_id() != old_leaf.as_deref() {
                return Err(SessionError::SessionChangedMeanwhile);
            }
            state
                .store
                .set_leaf(leaf.as_deref())
                .map_err(|UnknownEntry(id)| SessionError::EntryNotFound(id))?;
            let context = state.store.held_context();
            state.load_context(context);
        }
        let moved = json!({"newLeafId": leaf, "oldLeafId": old_leaf});
        self.shared.extensions.observe("session_tree", || moved);
        Ok(TreeMove {
            cancelled: false,
            leaf_id: Some(leaf),
            editor_text: user,
        })
    }

    /// `set_entry_label`: labels the entry `entry_id` (an empty or absent label clears it) with
    /// a pi label entry.
    pub fn set_entry_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), SessionError> {
        let mut state = self.shared.state();
        if state.store.entry(entry_id).is_none() {
            return Err(SessionError::EntryNotFound(entry_id.to_string()));
        }
        let mut fields = serde_json::Map::new();
        fields.insert("targetId".into(), json!(entry_id));
        if let Some(label) = label.map(str::trim).filter(|l| !l.is_empty()) {
            fields.insert("label".into(), json!(label));
        }
        state.store.append("label", fields);
        Ok(())
    }
}

/// The text of a message's `content` (a string, or the text blocks of a list).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
