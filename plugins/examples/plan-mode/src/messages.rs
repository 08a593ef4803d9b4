//! The texts the extension sends, and the text of the model's answers it reads (pi's
//! `getTextContent`).

use crate::utils::{TodoItem, js_len};
use pith_sdk::extension::{Content, CustomMessage, entries};
use pith_sdk::types::AssistantBlock;
use serde_json::Value;

/// The hidden message injected before a prompt in plan mode.
pub const PLAN_MODE_CONTEXT: &str = "[PLAN MODE ACTIVE]
You are in plan mode - a read-only exploration mode for safe code analysis.

Restrictions:
- Built-in edit and write tools are disabled
- Other currently active tools remain available
- Bash is restricted to an allowlist of read-only commands

Ask clarifying questions using the questionnaire tool.
Use brave-search skill via bash for web research.

Create a detailed numbered plan under a \"Plan:\" header:

Plan:
1. First step description
2. Second step description
...

Do NOT attempt to make changes - just describe what you would do.";

/// A custom message of one text block, without details.
pub fn custom(custom_type: &str, content: String, display: bool) -> CustomMessage {
    CustomMessage {
        custom_type: custom_type.into(),
        content: vec![Content::text(content)],
        display,
        details: None,
    }
}

/// The hidden message injected before a prompt while a plan executes.
pub fn execution_context(todos: &[TodoItem]) -> String {
    let todo_list = todos
        .iter()
        .filter(|t| !t.completed)
        .map(|t| format!("{}. {}", t.step, t.text))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "[EXECUTING PLAN - Full tool access enabled]\n\nRemaining steps:\n{todo_list}\n\n\
         Execute each step in order.\nAfter completing a step, include a [DONE:n] tag in your response."
    )
}

/// The message that starts the execution of the plan.
pub fn execute(todos: &[TodoItem], first: &TodoItem) -> String {
    let remaining_list = todos
        .iter()
        .map(|t| format!("{}. {}", t.step, t.text))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "Execute the plan.\n\nRemaining steps:\n{remaining_list}\n\nStart with: {}\n\
         After completing a step, include a [DONE:n] tag in your response.",
        first.text
    )
}

/// The plan's steps, shown when the plan is executed or refined.
pub fn todo_list(todos: &[TodoItem]) -> String {
    let list = todos
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}. ☐ {}", i + 1, t.text))
        .collect::<Vec<_>>()
        .join("\n");
    format!("**Plan Steps ({}):**\n\n{list}", todos.len())
}

/// The card queued for the next prompt once every step is done.
pub fn plan_complete(todos: &[TodoItem]) -> String {
    let list = todos
        .iter()
        .map(|t| format!("~~{}~~", t.text))
        .collect::<Vec<_>>()
        .join("\n");
    format!("**Plan Complete!** ✓\n\n{list}")
}

/// `/todos`'s notice.
pub fn progress(todos: &[TodoItem]) -> String {
    let list = todos
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mark = if t.completed { "✓" } else { "○" };
            format!("{}. {mark} {}", i + 1, t.text)
        })
        .collect::<Vec<_>>()
        .join("\n");
    format!("Plan Progress:\n{list}")
}

/// A widget line's text: at most 60 UTF-16 units, else its first 57 and `...` (cut at a
/// character, where JavaScript could cut a surrogate pair).
pub fn widget_text(text: &str) -> String {
    if js_len(text) <= 60 {
        return text.to_string();
    }
    let mut units = 0;
    let mut cut: String = text
        .chars()
        .take_while(|c| {
            units += c.len_utf16();
            units <= 57
        })
        .collect();
    cut.push_str("...");
    cut
}

/// pi's `getTextContent` of a message, when it is an assistant message: its text and thinking
/// blocks, one per line (other blocks add an empty line, as in pi).
pub fn assistant_text(message: &entries::AgentMessage) -> Option<String> {
    match message {
        entries::AgentMessage::Assistant(answer) => Some(entry_text(answer)),
        _ => None,
    }
}

/// The text of an assistant message (pi's `getTextContent`).
pub fn entry_text(message: &entries::AssistantMessage) -> String {
    message
        .content
        .iter()
        .map(|block| match block {
            AssistantBlock::Text(text) => text.text.as_str(),
            AssistantBlock::Thinking(thinking) => thinking.thinking.as_str(),
            AssistantBlock::ToolCall(_) => "",
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last assistant message's text among `messages` (`agent_end`'s).
pub fn last_assistant_text(messages: &[entries::AgentMessage]) -> Option<String> {
    messages.iter().rev().find_map(assistant_text)
}

/// pi's `context` filter: false for the plan-mode context message and for user messages
/// carrying `[PLAN MODE ACTIVE]`.
pub fn keep_outside_plan_mode(message: &Value) -> bool {
    const MARKER: &str = "[PLAN MODE ACTIVE]";
    if message.get("customType").and_then(Value::as_str) == Some("plan-mode-context") {
        return false;
    }
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return true;
    }
    match message.get("content") {
        Some(Value::String(text)) => !text.contains(MARKER),
        Some(Value::Array(blocks)) => !blocks.iter().any(|block| {
            block.get("type").and_then(Value::as_str) == Some("text")
                && block
                    .get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|text| text.contains(MARKER))
        }),
        _ => true,
    }
}
