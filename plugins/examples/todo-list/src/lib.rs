//! A port of pi's `examples/extensions/todo.ts`: a `todo` tool the model keeps a list with
//! (list, add, toggle, clear), its state kept in each result's `details` and rebuilt from the
//! branch when a session starts or the leaf moves, so a fork or a move in the tree has the list
//! of that point. `/todos` shows the list in pi's terminal only; headless it says so, as pi's
//! does in RPC mode. The tool's terminal rendering (`renderCall`, `renderResult`) is left out.

use pith_sdk::extension::*;
use serde_json::{Value, json};

/// One todo.
#[derive(Clone)]
struct Todo {
    id: u64,
    text: String,
    done: bool,
}

/// The list, as of the current point of the session.
struct TodoList {
    todos: Vec<Todo>,
    next_id: u64,
}

impl TodoList {
    /// Rebuilds the list from the last `todo` result on the branch.
    fn reconstruct(&mut self) {
        self.todos.clear();
        self.next_id = 1;
        for entry in session_read::branch() {
            let entries::EntryBody::Message(entries::AgentMessage::ToolResult(result)) = entry.body
            else {
                continue;
            };
            if result.tool_name != "todo" {
                continue;
            }
            let Some(details) = result
                .details
                .and_then(|d| serde_json::from_str::<Value>(&d).ok())
            else {
                continue;
            };
            self.todos = details["todos"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| Todo {
                    id: t["id"].as_u64().unwrap_or(0),
                    text: t["text"].as_str().unwrap_or_default().to_string(),
                    done: t["done"].as_bool().unwrap_or(false),
                })
                .collect();
            self.next_id = details["nextId"].as_u64().unwrap_or(1);
        }
    }

    /// pi's `TodoDetails`.
    fn details(&self, action: &str, error: Option<String>) -> Value {
        let todos: Vec<Value> = self
            .todos
            .iter()
            .map(|t| json!({"id": t.id, "text": t.text, "done": t.done}))
            .collect();
        let mut details = json!({"action": action, "todos": todos, "nextId": self.next_id});
        if let Some(error) = error {
            details["error"] = error.into();
        }
        details
    }

    fn answer(&self, text: String, action: &str, error: Option<String>) -> ToolResult {
        ToolResult::text(text).with_details(self.details(action, error))
    }
}

impl Extension for TodoList {
    fn new() -> Self {
        TodoList {
            todos: Vec::new(),
            next_id: 1,
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("todo")
            .on(&["session_start", "session_tree"])
            .tool(ToolSpec::new(
                "todo",
                "Manage a todo list. Actions: list, add (text), toggle (id), clear",
                json!({
                    "type": "object",
                    "required": ["action"],
                    "properties": {
                        "action": {"type": "string", "enum": ["list", "add", "toggle", "clear"]},
                        "text": {"type": "string", "description": "Todo text (for add)"},
                        "id": {"type": "number", "description": "Todo ID (for toggle)"}
                    }
                }),
            ))
            .command("todos", "Show all todos on the current branch")
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::SessionStart(_) => self.reconstruct(),
            Event::Observe((name, _)) if name == "session_tree" => self.reconstruct(),
            _ => {}
        }
        Ok(EventResult::Continue)
    }

    fn run_command(&mut self, name: &str, _args: &str) -> Result<(), String> {
        if name != "todos" {
            return Err(format!("Unknown command: {name}"));
        }
        // pi draws the list in its terminal; in every other mode it says this.
        ui::notify(
            "/todos requires interactive mode",
            Some(ui::NotifyKind::Error),
        );
        Ok(())
    }

    fn execute_tool(
        &mut self,
        name: &str,
        _call_id: &str,
        arguments: Value,
    ) -> Result<ToolResult, ToolError> {
        if name != "todo" {
            return Err(ToolError::new(format!("Unknown tool: {name}")));
        }
        let action = arguments["action"].as_str().unwrap_or_default().to_string();
        Ok(match action.as_str() {
            "list" => {
                let text = if self.todos.is_empty() {
                    "No todos".to_string()
                } else {
                    self.todos
                        .iter()
                        .map(|t| {
                            format!("[{}] #{}: {}", if t.done { "x" } else { " " }, t.id, t.text)
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                self.answer(text, "list", None)
            }
            "add" => match arguments["text"].as_str().filter(|t| !t.is_empty()) {
                None => self.answer(
                    "Error: text required for add".into(),
                    "add",
                    Some("text required".into()),
                ),
                Some(text) => {
                    let todo = Todo {
                        id: self.next_id,
                        text: text.to_string(),
                        done: false,
                    };
                    self.next_id += 1;
                    let said = format!("Added todo #{}: {}", todo.id, todo.text);
                    self.todos.push(todo);
                    self.answer(said, "add", None)
                }
            },
            "toggle" => match arguments.get("id").filter(|id| !id.is_null()) {
                None => self.answer(
                    "Error: id required for toggle".into(),
                    "toggle",
                    Some("id required".into()),
                ),
                Some(id) => {
                    let shown = id.to_string();
                    match self
                        .todos
                        .iter_mut()
                        .find(|t| id.as_f64() == Some(t.id as f64))
                    {
                        None => self.answer(
                            format!("Todo #{shown} not found"),
                            "toggle",
                            Some(format!("#{shown} not found")),
                        ),
                        Some(todo) => {
                            todo.done = !todo.done;
                            let said = format!(
                                "Todo #{} {}",
                                todo.id,
                                if todo.done {
                                    "completed"
                                } else {
                                    "uncompleted"
                                }
                            );
                            self.answer(said, "toggle", None)
                        }
                    }
                }
            },
            "clear" => {
                let count = self.todos.len();
                self.todos.clear();
                self.next_id = 1;
                self.answer(format!("Cleared {count} todos"), "clear", None)
            }
            other => self.answer(
                format!("Unknown action: {other}"),
                "list",
                Some(format!("unknown action: {other}")),
            ),
        })
    }
}

pith_sdk::export_extension!(TodoList);
