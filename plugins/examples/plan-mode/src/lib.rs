//! A port of pi 1.5.2's `examples/extensions/plan-mode` (`index.ts`, `utils.ts`): a read-only
//! plan mode. `/plan` (or `--plan` at start-up) narrows the tools to read-only ones (`edit` and
//! `write` off), blocks bash commands outside an allowlist, and injects a hidden
//! `plan-mode-context` message before each prompt asking for a numbered `Plan:`. When a run
//! ends with a plan, a select offers to execute it (the tools come back, the steps show as the
//! status `📋 done/total` and the `plan-todos` widget, `[DONE:n]` in the answers ticks them
//! off, and a `plan-complete` card is queued for the next prompt once all are done), to stay,
//! or to refine it in an editor. `/todos` shows the progress. The state is kept in `plan-mode`
//! custom entries and restored when a session starts.
//!
//! Differences from pi:
//! - Statuses and widget lines are plain text (`⏸ plan`, `📋 1/3`, `☐ step`, `☑ step`): pi
//!   colours them with `ctx.ui.theme` (and strikes done steps through), and pith has no theme
//!   API. pi's Ctrl+Alt+P shortcut (`registerShortcut`) draws pi's terminal only: left out.
//! - `turn_end` and `agent_end` are observed events in pith, delivered after the front-end has
//!   the frame: the statuses, widgets, entries and the select they cause follow the
//!   `turn_end`/`agent_end` frame (pi sends them before it).
//! - pi's `agent_end` handler runs inside the run, so the follow-ups it sends continue that
//!   run. In pith the run is over when `agent_end` is observed, and a follow-up sent then
//!   without `trigger-turn` would only be appended, with no turn. So the first follow-up
//!   (`plan-todo-list`) is sent with `trigger-turn` and starts the run pi's queue would have
//!   continued (`agent_end`, then `agent_start`, as in pi's transcript); the second
//!   (`plan-mode-execute`, or the refinement as a user message) is queued as a follow-up of
//!   that run and gets its own turn, as in pi.
//! - Custom messages carry one text block where pi's carry a string (pith's `custom-message`
//!   content is a list of blocks).
//! - pi's `setActiveTools` skips unknown names (`questionnaire` here); pith's
//!   `set-active-tools` refuses the list, so the port sets it again without them.
//! - pi's regular expressions run on a small matcher of the JavaScript subset they use
//!   (`regex.rs`); a `[DONE:n]` number too large for a `u64` is ignored (JavaScript reads it
//!   as a float, which matches no step either).

mod lifecycle;
mod messages;
mod regex;
mod regex_syntax;
mod utils;

use messages::{PLAN_MODE_CONTEXT, custom};
use pith_sdk::extension::*;
use serde_json::{Value, json};
use utils::{TodoItem, is_safe_command};

const PLAN_MODE_TOOLS: &[&str] = &["read", "bash", "grep", "find", "ls", "questionnaire"];
const NORMAL_MODE_TOOLS: &[&str] = &["read", "bash", "edit", "write"];
const PLAN_MODE_DISABLED_TOOLS: &[&str] = &["edit", "write"];

/// The custom entry that keeps the state.
const STATE_ENTRY: &str = "plan-mode";
const STATUS_KEY: &str = "plan-mode";
const WIDGET_KEY: &str = "plan-todos";
const SELECT_TITLE: &str = "Plan mode - what next?";
const EXECUTE: &str = "Execute the plan (track progress)";
const STAY: &str = "Stay in plan mode";
const REFINE: &str = "Refine the plan";

struct PlanMode {
    plan_mode_enabled: bool,
    execution_mode: bool,
    todo_items: Vec<TodoItem>,
    tools_before_plan_mode: Option<Vec<String>>,
}

/// `names` without repeats, in first-seen order.
fn unique(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn owned(names: &[&str]) -> impl Iterator<Item = String> {
    names.iter().map(|n| n.to_string())
}

/// pi's `setActiveTools`: the names the session does not know are skipped.
fn set_active_tools(names: Vec<String>) {
    if let Err(unknown) = session_control::set_active_tools(&names)
        && !unknown.is_empty()
    {
        let known: Vec<String> = names.into_iter().filter(|n| !unknown.contains(n)).collect();
        let _ = session_control::set_active_tools(&known);
    }
}

impl PlanMode {
    /// pi's `updateStatus`: the footer status and the todo widget.
    fn update_status(&self) {
        let executing = self.execution_mode && !self.todo_items.is_empty();
        if executing {
            let completed = self.todo_items.iter().filter(|t| t.completed).count();
            let status = format!("📋 {completed}/{}", self.todo_items.len());
            ui::set_status(STATUS_KEY, Some(&status));
        } else if self.plan_mode_enabled {
            ui::set_status(STATUS_KEY, Some("⏸ plan"));
        } else {
            ui::set_status(STATUS_KEY, None);
        }

        if executing {
            let lines: Vec<String> = self
                .todo_items
                .iter()
                .map(|item| {
                    let mark = if item.completed { "☑ " } else { "☐ " };
                    format!("{mark}{}", messages::widget_text(&item.text))
                })
                .collect();
            ui::set_widget(WIDGET_KEY, Some(&lines), None);
        } else {
            ui::set_widget(WIDGET_KEY, None, None);
        }
    }

    fn enable_plan_mode_tools(&mut self) {
        let before = self
            .tools_before_plan_mode
            .get_or_insert_with(session_control::active_tools);
        let kept = before
            .iter()
            .filter(|n| !PLAN_MODE_DISABLED_TOOLS.contains(&n.as_str()))
            .cloned();
        set_active_tools(unique(kept.chain(owned(PLAN_MODE_TOOLS))));
    }

    fn restore_normal_mode_tools(&mut self) {
        let tools = self.tools_before_plan_mode.take().unwrap_or_else(|| {
            let others = session_control::active_tools().into_iter().filter(|n| {
                !PLAN_MODE_TOOLS.contains(&n.as_str()) && !NORMAL_MODE_TOOLS.contains(&n.as_str())
            });
            unique(owned(NORMAL_MODE_TOOLS).chain(others))
        });
        set_active_tools(tools);
    }

    fn persist_state(&self) {
        let todos: Vec<Value> = self
            .todo_items
            .iter()
            .map(|t| json!({"step": t.step, "text": t.text, "completed": t.completed}))
            .collect();
        let mut data = json!({
            "enabled": self.plan_mode_enabled,
            "todos": todos,
            "executing": self.execution_mode,
        });
        if let Some(tools) = &self.tools_before_plan_mode {
            data["toolsBeforePlanMode"] = json!(tools);
        }
        session::append_entry(STATE_ENTRY, Some(&data.to_string()));
    }

    fn toggle_plan_mode(&mut self) {
        self.plan_mode_enabled = !self.plan_mode_enabled;
        self.execution_mode = false;
        self.todo_items.clear();
        if self.plan_mode_enabled {
            self.enable_plan_mode_tools();
            ui::notify("Plan mode enabled. Built-in write tools disabled.", None);
        } else {
            self.restore_normal_mode_tools();
            ui::notify("Plan mode disabled. Full access restored.", None);
        }
        self.update_status();
        self.persist_state();
    }

    fn show_todos(&self) {
        if self.todo_items.is_empty() {
            ui::notify(
                "No todos. Create a plan first with /plan",
                Some(ui::NotifyKind::Info),
            );
            return;
        }
        ui::notify(
            &messages::progress(&self.todo_items),
            Some(ui::NotifyKind::Info),
        );
    }

    /// Blocks destructive bash commands in plan mode.
    fn on_tool_call(&self, call: &ToolCallEvent) -> EventResult {
        if !self.plan_mode_enabled || call.tool_name != "bash" {
            return EventResult::Continue;
        }
        // `event.input.command as string`, as JavaScript prints it in the reason.
        let command = call
            .arguments()
            .get("command")
            .map_or_else(|| "undefined".to_string(), pith_sdk::js::display);
        if is_safe_command(&command) {
            return EventResult::Continue;
        }
        EventResult::block(format!(
            "Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\nCommand: {command}"
        ))
    }

    /// Outside plan mode, the stale plan-mode context leaves the messages sent to the model.
    fn on_context(&self, messages: &str) -> EventResult {
        if self.plan_mode_enabled {
            return EventResult::Continue;
        }
        let Ok(Value::Array(all)) = serde_json::from_str::<Value>(messages) else {
            return EventResult::Continue;
        };
        let count = all.len();
        let kept: Vec<Value> = all
            .into_iter()
            .filter(messages::keep_outside_plan_mode)
            .collect();
        if kept.len() == count {
            return EventResult::Continue;
        }
        EventResult::ReplaceMessages(Value::Array(kept).to_string())
    }

    /// The plan or execution context, before a user prompt.
    fn on_before_agent_start(&self, start: &BeforeAgentStartEvent) -> EventResult {
        if start.message_type != RunStart::User {
            return EventResult::Continue;
        }
        let message = if self.plan_mode_enabled {
            custom("plan-mode-context", PLAN_MODE_CONTEXT.into(), false)
        } else if self.execution_mode && !self.todo_items.is_empty() {
            let context = messages::execution_context(&self.todo_items);
            custom("plan-execution-context", context, false)
        } else {
            return EventResult::Continue;
        };
        EventResult::AgentStart(AgentStartChanges {
            message: Some(message),
            system_prompt: None,
        })
    }

    /// Tracks progress after each turn.
    fn on_turn_end(&mut self, event: &agent_events::TurnEndEvent) {
        if !self.execution_mode || self.todo_items.is_empty() {
            return;
        }
        let Some(text) = messages::assistant_text(&event.message) else {
            return;
        };
        utils::mark_completed_steps(&text, &mut self.todo_items);
        self.update_status();
        self.persist_state();
    }
}

impl Extension for PlanMode {
    fn new() -> Self {
        PlanMode {
            plan_mode_enabled: false,
            execution_mode: false,
            todo_items: Vec::new(),
            tools_before_plan_mode: None,
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("plan-mode")
            .on(&[
                "session_start",
                "tool_call",
                "context",
                "before_agent_start",
                "turn_end",
                "agent_end",
            ])
            .flag(FlagSpec::boolean(
                "plan",
                "Start in plan mode (read-only exploration)",
            ))
            .command("plan", "Toggle plan mode (read-only exploration)")
            .command("todos", "Show current plan todo list")
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        Ok(match event {
            Event::SessionStart(_) => {
                self.on_session_start();
                EventResult::Continue
            }
            Event::ToolCall(call) => self.on_tool_call(&call),
            Event::Context(messages) => self.on_context(&messages),
            Event::BeforeAgentStart(start) => self.on_before_agent_start(&start),
            Event::Agent(AgentEvent::TurnEnd(turn)) => {
                self.on_turn_end(&turn);
                EventResult::Continue
            }
            Event::Agent(AgentEvent::AgentEnd(end)) => {
                self.on_agent_end(&end);
                EventResult::Continue
            }
            _ => EventResult::Continue,
        })
    }

    fn run_command(&mut self, name: &str, _args: &str) -> Result<(), String> {
        match name {
            "plan" => self.toggle_plan_mode(),
            "todos" => self.show_todos(),
            _ => return Err(format!("Unknown command: {name}")),
        }
        Ok(())
    }
}

pith_sdk::export_extension!(PlanMode);
