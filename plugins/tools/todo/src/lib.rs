//! `todo`: the model writes the session's todo list — phases of tasks with a status each. The
//! list comes back as a checklist, and in `details.todoPhases`, from which the session takes
//! it (normalised as `set_todos` does; the host sees it in `get_state`).

use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Task {
    content: String,
    #[serde(default = "pending")]
    status: String,
    #[serde(default)]
    blocker: Option<String>,
}

fn pending() -> String {
    "pending".into()
}

#[derive(serde::Deserialize)]
struct Phase {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tasks: Vec<Task>,
}

#[derive(serde::Deserialize)]
struct Args {
    phases: Vec<Phase>,
}

const STATUSES: [&str; 5] = [
    "pending",
    "in_progress",
    "completed",
    "abandoned",
    "blocked",
];

struct Todo;

impl Tool for Todo {
    const NAME: &'static str = "todo";
    const DESCRIPTION: &'static str = "Write the todo list for the current work: phases of tasks, each with a status (pending, in_progress, completed, abandoned, blocked). The whole list is replaced on each call; keep exactly one task in_progress while working, and mark tasks completed as soon as they are done.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["phases"],
            "properties": {"phases": {"type": "array", "description": "The whole todo list, in order", "items": {
                "type": "object",
                "required": ["tasks"],
                "properties": {
                    "name": {"type": "string", "description": "The phase's name"},
                    "tasks": {"type": "array", "items": {
                        "type": "object",
                        "required": ["content", "status"],
                        "properties": {
                            "content": {"type": "string", "description": "What to do"},
                            "status": {"type": "string", "enum": STATUSES},
                            "blocker": {"type": "string", "description": "What blocks a blocked task"}
                        }
                    }}
                }
            }}}
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Keep the todo list of the current work".into())
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let mut text = String::new();
        let mut phases = Vec::new();
        for (p, phase) in args.phases.iter().enumerate() {
            let name = phase.name.clone().unwrap_or_else(|| "Todos".into());
            text.push_str(&format!("{name}\n"));
            let mut tasks = Vec::new();
            for (t, task) in phase.tasks.iter().enumerate() {
                if !STATUSES.contains(&task.status.as_str()) {
                    return Err(ToolError::new(format!(
                        "phases[{p}].tasks[{t}].status must be one of {}, got \"{}\"",
                        STATUSES.join(", "),
                        task.status
                    )));
                }
                let mark = match task.status.as_str() {
                    "completed" => "[x]",
                    "in_progress" => "[>]",
                    "abandoned" => "[-]",
                    "blocked" => "[!]",
                    _ => "[ ]",
                };
                text.push_str(&format!("  {mark} {}\n", task.content));
                let mut entry = json!({"content": task.content, "status": task.status});
                if let Some(blocker) = &task.blocker {
                    entry["blocker"] = json!(blocker);
                }
                tasks.push(entry);
            }
            phases.push(json!({"name": name, "tasks": tasks}));
        }
        if text.is_empty() {
            text.push_str("The todo list is empty.");
        }
        Ok(ToolResult::text(text.trim_end().to_string())
            .with_details(json!({"todoPhases": phases})))
    }
}

pith_sdk::export_tools!(Todo);
