//! The session's todo list (seed 001's `set_todos` and `todoPhases`): phases of tasks, each
//! `pending`, `in_progress`, `completed`, `abandoned` or `blocked`; normalised on the way in;
//! the reminder sent when the agent tries to stop with work left; cleared once all is done.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// How many times one run is reminded of incomplete todos before it may end anyway.
pub const MAX_REMINDERS: u32 = 3;

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Given up.
    Abandoned,
    /// Waiting on something else.
    Blocked,
}

/// The statuses, as the protocol names them.
pub const STATUSES: [&str; 5] = [
    "pending",
    "in_progress",
    "completed",
    "abandoned",
    "blocked",
];

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoTask {
    /// Its id (given, or `task-N`).
    pub id: String,
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
    /// What blocks it, for blocked tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<String>,
}

/// A phase of tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TodoPhase {
    /// Its id (given, or `phase-N`).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its tasks.
    pub tasks: Vec<TodoTask>,
}

/// Why a todo list was refused: the text names the offending field (`phases[0].tasks[1]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TodoError {
    /// `phases` is no array.
    #[error("Field \"phases\" must be an array of phases")]
    NotAnArray,
    /// A phase or a task is no object.
    #[error("{at} must be an object")]
    NotAnObject {
        /// Where.
        at: String,
    },
    /// A phase's `tasks` is no array.
    #[error("{at}.tasks must be an array")]
    TasksNotAnArray {
        /// Which phase.
        at: String,
    },
    /// A task without `content`.
    #[error("{at}.content is required")]
    NoContent {
        /// Which task.
        at: String,
    },
    /// A status not known.
    #[error("{at}.status must be one of {}, got \"{got}\"", STATUSES.map(|s| format!("\"{s}\"")).join(", "))]
    UnknownStatus {
        /// Which task.
        at: String,
        /// The status given.
        got: String,
    },
    /// A status that is no string.
    #[error("{at}.status must be a string")]
    StatusNotAString {
        /// Which task.
        at: String,
    },
    /// A text field that is no string.
    #[error("{at}.{key} must be a string")]
    NotAString {
        /// Which phase or task.
        at: String,
        /// The field.
        key: String,
    },
}

/// Normalises `phases` (a JSON array): ids filled in (`phase-N`, `task-N`), text trimmed,
/// unknown fields dropped. Errors name the offending field.
pub fn normalize(phases: &Value) -> Result<Vec<TodoPhase>, TodoError> {
    let list = phases.as_array().ok_or(TodoError::NotAnArray)?;
    let mut task_number = 0;
    let mut normalized = Vec::with_capacity(list.len());
    for (p, phase) in list.iter().enumerate() {
        let at = format!("phases[{p}]");
        let phase = phase
            .as_object()
            .ok_or_else(|| TodoError::NotAnObject { at: at.clone() })?;
        let name = optional_text(phase, "name", &at)?.unwrap_or_else(|| "Todos".to_string());
        let id = optional_text(phase, "id", &at)?.unwrap_or_else(|| format!("phase-{}", p + 1));
        let tasks = match phase.get("tasks") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(tasks)) => tasks.clone(),
            Some(_) => return Err(TodoError::TasksNotAnArray { at }),
        };
        let mut out = Vec::with_capacity(tasks.len());
        for (t, task) in tasks.iter().enumerate() {
            let at = format!("{at}.tasks[{t}]");
            let task = task
                .as_object()
                .ok_or_else(|| TodoError::NotAnObject { at: at.clone() })?;
            task_number += 1;
            let content = optional_text(task, "content", &at)?
                .ok_or_else(|| TodoError::NoContent { at: at.clone() })?;
            let status = match task.get("status") {
                None | Some(Value::Null) => TodoStatus::Pending,
                Some(Value::String(s)) => {
                    serde_json::from_value(json!(s)).map_err(|_| TodoError::UnknownStatus {
                        at: at.clone(),
                        got: s.clone(),
                    })?
                }
                Some(_) => return Err(TodoError::StatusNotAString { at }),
            };
            out.push(TodoTask {
                id: optional_text(task, "id", &at)?
                    .unwrap_or_else(|| format!("task-{task_number}")),
                content,
                status,
                blocker: optional_text(task, "blocker", &at)?,
            });
        }
        normalized.push(TodoPhase {
            id,
            name,
            tasks: out,
        });
    }
    Ok(normalized)
}

/// A trimmed, non-empty string field, if present.
fn optional_text(
    object: &Map<String, Value>,
    key: &str,
    at: &str,
) -> Result<Option<String>, TodoError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => {
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_string()))
        }
        Some(_) => Err(TodoError::NotAString {
            at: at.to_string(),
            key: key.to_string(),
        }),
    }
}

/// The tasks still to do (pending or in progress).
pub fn incomplete(phases: &[TodoPhase]) -> Vec<TodoTask> {
    phases
        .iter()
        .flat_map(|p| &p.tasks)
        .filter(|t| matches!(t.status, TodoStatus::Pending | TodoStatus::InProgress))
        .cloned()
        .collect()
}

/// True when there are tasks and every one is completed or abandoned.
pub fn all_done(phases: &[TodoPhase]) -> bool {
    let mut tasks = phases.iter().flat_map(|p| &p.tasks).peekable();
    tasks.peek().is_some()
        && tasks.all(|t| matches!(t.status, TodoStatus::Completed | TodoStatus::Abandoned))
}

/// The user-role reminder sent when the agent would stop with `left` undone.
pub fn reminder_text(left: &[TodoTask]) -> String {
    let mut text = String::from("<system-reminder>\nYou stopped with incomplete todos:\n");
    for task in left {
        let status = serde_json::to_value(task.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        text.push_str(&format!("- [{status}] {}\n", task.content));
    }
    text.push_str("Continue with them, or update the todo list if they are done, blocked or no longer needed.\n</system-reminder>");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_ids_trims_and_drops_unknown_fields() {
        let phases = normalize(&json!([
            {"name": " Plan ", "extra": 1, "tasks": [{"content": " a ", "status": "in_progress", "x": true}, {"content": "b"}]},
            {"id": "mine", "tasks": [{"id": "t9", "content": "c", "status": "blocked", "blocker": "waiting"}]}
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&phases).unwrap(),
            json!([
                {"id": "phase-1", "name": "Plan", "tasks": [
                    {"id": "task-1", "content": "a", "status": "in_progress"},
                    {"id": "task-2", "content": "b", "status": "pending"}]},
                {"id": "mine", "name": "Todos", "tasks": [
                    {"id": "t9", "content": "c", "status": "blocked", "blocker": "waiting"}]}
            ])
        );
        assert_eq!(incomplete(&phases).len(), 2);
        assert!(!all_done(&phases));
    }

    #[test]
    fn names_the_bad_field() {
        let err = normalize(&json!([{"tasks": [{"content": "a", "status": "done"}]}]))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("phases[0].tasks[0].status must be one of \"pending\""),
            "{err}"
        );
        assert_eq!(
            normalize(&json!([{"tasks": [{"status": "pending"}]}]))
                .unwrap_err()
                .to_string(),
            "phases[0].tasks[0].content is required"
        );
        assert!(normalize(&json!({})).is_err());
    }
}
