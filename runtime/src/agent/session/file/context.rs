//! The conversation a session file holds at its leaf, as pi 1.5.2 projects it: compactions
//! replace what they summarized, `context_edit` entries take messages out or replace their
//! content, and the model and thinking level in force are read on the way.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::entry::Role;
use super::held::{self, Held};
use super::{AgentMessage, Context, Entry, SessionFile};

impl SessionFile {
    /// The conversation at the leaf: compactions replace what they summarized.
    pub fn context(&self) -> Context {
        let held = self.project(false);
        Context {
            messages: held
                .messages
                .into_iter()
                .filter_map(|(id, held)| match held {
                    Held::Parsed { message, .. } => Some((id, *message)),
                    Held::Stored => None,
                })
                .collect(),
            thinking_level: held.thinking_level,
            model: held.model,
        }
    }

    /// The conversation at the leaf as a session holds it: its unedited messages on disk are
    /// left in the file, to be read when needed.
    pub fn held_context(&self) -> Context<Held> {
        self.project(true)
    }

    /// The conversation at the leaf; with `lazy`, the messages [`held::hold`] leaves in the
    /// file are not read (only the last answer, for the model).
    fn project(&self, lazy: bool) -> Context<Held> {
        let path = self.path_to(self.leaf.as_deref());
        let lines = self.lines();
        let mut context = Context {
            messages: Vec::with_capacity(path.len()),
            thinking_level: None,
            model: None,
        };
        let compaction = path.iter().rposition(|e| e.kind() == "compaction");
        // pi 1.5's `context_edit` entries take a message out of the context (`replacement`
        // null, a failed answer before its retry) or replace its content (`{"content": …}`; a
        // string becomes one text block for an answer or a tool result), the latest edit of
        // each target winning.
        let edits: HashMap<String, Value> = path
            .iter()
            .filter(|e| e.kind() == "context_edit")
            .filter_map(|e| {
                let mut body = lines.body(e);
                let target = body.get("targetId")?.as_str()?.to_string();
                Some((target, body.remove("replacement").unwrap_or(Value::Null)))
            })
            .collect();
        // The last answer left in the file, for the model in force.
        let mut last_stored_answer: Option<String> = None;
        let mut include = |context: &mut Context<Held>, entry: &Entry| {
            let id = entry.id().to_string();
            if lazy
                && !edits.contains_key(id.as_str())
                && let Some(stored) = held::hold(entry)
            {
                if entry.role() == Role::Assistant {
                    last_stored_answer = Some(id.clone());
                }
                context.messages.push((id, stored));
                return;
            }
            match entry.kind() {
                "message" => {
                    // Read straight from the line into the typed message: a JSON tree in
                    // between doubled what opening a long session cost.
                    let message = match edits.get(id.as_str()) {
                        Some(replacement) => lines
                            .body(entry)
                            .get("message")
                            .and_then(|original| edited(original, replacement))
                            .and_then(|m| serde_json::from_value::<AgentMessage>(m).ok()),
                        None => lines.message(entry),
                    };
                    if let Some(message) = message {
                        if let AgentMessage::Assistant(a) = &message {
                            context.model = Some((a.provider.clone(), a.model.clone()));
                            last_stored_answer = None;
                        }
                        let unedited = !edits.contains_key(id.as_str());
                        context.messages.push((
                            id,
                            if unedited {
                                Held::settling(message)
                            } else {
                                Held::kept(message)
                            },
                        ));
                    }
                }
                "custom_message" => {
                    let entry = lines.body(entry);
                    let mut custom = json!({"role": "custom", "customType": entry.get("customType").cloned().unwrap_or(json!("")),
                        "content": entry.get("content").cloned().unwrap_or(json!("")), "display": entry.get("display").cloned().unwrap_or(json!(true)), "timestamp": 0});
                    if let Some(details) = entry.get("details") {
                        custom["details"] = details.clone();
                    }
                    let Some(custom) = (match edits.get(id.as_str()) {
                        Some(replacement) => edited(&custom, replacement),
                        None => Some(custom),
                    }) else {
                        return;
                    };
                    if let Ok(message) = serde_json::from_value::<AgentMessage>(custom) {
                        context.messages.push((id, Held::kept(message)));
                    }
                }
                "branch_summary" => {
                    let entry = lines.body(entry);
                    let summary = entry.get("summary").and_then(Value::as_str).unwrap_or("");
                    if !summary.is_empty() {
                        let message = json!({"role": "branchSummary", "summary": summary, "fromId": entry.get("fromId").cloned().unwrap_or(json!("root")), "timestamp": 0});
                        if let Ok(message) = serde_json::from_value(message) {
                            context.messages.push((id, Held::kept(message)));
                        }
                    }
                }
                _ => {}
            }
        };
        for entry in &path {
            match entry.kind() {
                "thinking_level_change" => {
                    context.thinking_level = lines
                        .body(entry)
                        .get("thinkingLevel")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                }
                "model_change" => {
                    let entry = lines.body(entry);
                    let provider = entry
                        .get("provider")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let model = entry
                        .get("modelId")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    context.model = Some((provider, model));
                }
                _ => {}
            }
        }
        match compaction {
            None => {
                for entry in &path {
                    include(&mut context, entry);
                }
            }
            Some(at) => {
                let compact_id = path[at].id().to_string();
                let compact = lines.body(path[at]);
                let first_kept = compact.get("firstKeptEntryId").and_then(Value::as_str);
                let kept_from = first_kept
                    .and_then(|id| path[..at].iter().position(|e| e.id() == id))
                    .unwrap_or(at);
                let is_system =
                    |entry: &Entry| entry.kind() == "message" && entry.role() == Role::System;
                // pi 1.5: the compaction's `systemMessage` leads the compacted context, and the
                // system messages among the kept entries give way to it. An older entry without
                // one keeps the `system` messages before the kept part in front: they are the
                // record of the prompt and tools, not conversation.
                let leading = compact
                    .get("systemMessage")
                    .filter(|m| m.is_object())
                    .and_then(|m| serde_json::from_value::<AgentMessage>(m.clone()).ok());
                let has_leading = leading.is_some();
                match leading {
                    Some(system) => context
                        .messages
                        .push((compact_id.clone(), Held::kept(system))),
                    None => {
                        for entry in path[..kept_from].iter().filter(|e| is_system(e)) {
                            include(&mut context, entry);
                        }
                    }
                }
                let summary = json!({"role": "compactionSummary", "summary": compact.get("summary").cloned().unwrap_or(json!("")),
                    "tokensBefore": compact.get("tokensBefore").cloned().unwrap_or(json!(0)), "timestamp": 0});
                if let Ok(message) = serde_json::from_value(summary) {
                    context.messages.push((compact_id, Held::kept(message)));
                }
                for entry in path[kept_from..at]
                    .iter()
                    .filter(|e| !(has_leading && is_system(e)))
                    .chain(path[at + 1..].iter())
                {
                    include(&mut context, entry);
                }
            }
        }
        if let Some(entry) = last_stored_answer.and_then(|id| self.entry(&id))
            && let Some(AgentMessage::Assistant(a)) = lines.message(entry)
        {
            context.model = Some((a.provider, a.model));
        }
        context
    }
}

/// `message` as a `context_edit`'s `replacement` leaves it: `None` when the edit takes it
/// out (`null`), else the message with only its content replaced (pi's
/// `projectContextEntry`; a string becomes one text block for an answer or a tool result).
fn edited(message: &Value, replacement: &Value) -> Option<Value> {
    if replacement.is_null() {
        return None;
    }
    let mut message = message.clone();
    let role = message.get("role").and_then(Value::as_str).unwrap_or("");
    if !matches!(role, "user" | "assistant" | "toolResult" | "custom") {
        return Some(message);
    }
    let content = match replacement.get("content") {
        Some(Value::String(text)) if matches!(role, "assistant" | "toolResult") => {
            json!([{"type": "text", "text": text}])
        }
        Some(content) => content.clone(),
        None => return Some(message),
    };
    message["content"] = content;
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_edit_replaces_only_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let lines = [
            json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}),
            json!({"type": "message", "id": "u1", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1}}),
            json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "original"}], "api": "faux", "provider": "faux", "model": "m",
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": 2}}),
            json!({"type": "context_edit", "id": "e1", "parentId": "a1", "timestamp": "2026-01-01T00:00:03.000Z", "targetId": "a1", "replacement": {"content": "edited"}}),
            json!({"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": "2026-01-01T00:00:04.000Z", "targetId": "u1", "replacement": {"content": "edited prompt"}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let (file, problems) = SessionFile::open(&path).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let context = file.context();
        let messages: Vec<Value> = context
            .messages
            .iter()
            .map(|(_, m)| serde_json::to_value(m).unwrap())
            .collect();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["content"], "edited prompt");
        assert_eq!(messages[1]["role"], "assistant");
        assert_eq!(
            messages[1]["content"],
            json!([{"type": "text", "text": "edited"}])
        );
        assert_eq!(
            messages[1]["stopReason"], "stop",
            "the rest of the message is kept"
        );
    }

    #[test]
    fn a_compaction_s_system_message_leads_and_the_kept_ones_give_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let system = |text: &str| json!({"role": "system", "content": "", "sections": {"preamble": "", "tools": "", "rules": text, "docs": "", "cwd": ""}, "timestamp": 1});
        let lines = [
            json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}),
            json!({"type": "message", "id": "s0", "parentId": null, "timestamp": "2026-01-01T00:00:00.500Z", "message": system("old")}),
            json!({"type": "message", "id": "u1", "parentId": "s0", "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "kept"}], "timestamp": 1}}),
            json!({"type": "compaction", "id": "c1", "parentId": "u1", "timestamp": "2026-01-01T00:00:02.000Z",
                "summary": "earlier", "firstKeptEntryId": "s0", "tokensBefore": 10, "systemMessage": system("new")}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let (file, _) = SessionFile::open(&path).unwrap();
        let messages: Vec<Value> = file
            .context()
            .messages
            .iter()
            .map(|(_, m)| serde_json::to_value(m).unwrap())
            .collect();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(messages[0]["sections"]["rules"], "new");
        assert_eq!(messages[1]["role"], "compactionSummary");
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages.len(), 3, "the kept system message gave way");
    }
}
