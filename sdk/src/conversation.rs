//! A conversation written out as text for a model to summarise: pi's
//! `serializeConversation(convertToLlm(messages))`, over the typed messages extensions get
//! (`entries::AgentMessage`: a compaction's preparation, `agent_end`, the session's entries).
//!
//! ```
//! use pith_sdk::conversation::serialize;
//! use pith_sdk::extension::entries::{AgentMessage, UserMessage};
//! use pith_sdk::types::Content;
//!
//! let asked = AgentMessage::User(UserMessage {
//!     content: vec![Content::Text("list the files".into())],
//!     timestamp: 0,
//! });
//! assert_eq!(serialize(&[asked]), "[User]: list the files");
//! ```

use serde_json::Value;

use crate::extension::entries::{AgentMessage, BashExecutionMessage};
use crate::js;
use crate::types::{AssistantBlock, Content};

/// pi's limit on a tool result's characters in a serialized conversation.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// pi's `COMPACTION_SUMMARY_PREFIX` and `_SUFFIX`.
const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's `BRANCH_SUMMARY_PREFIX` and `_SUFFIX`.
const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// `messages` as pi's `serializeConversation(convertToLlm(messages))` writes them: `[User]: …`,
/// `[Assistant]: …`, `[Assistant tool calls]: name(key=value, …)` and `[Tool result]: …` (cut
/// at 2,000 characters) parts, separated by blank lines. Thinking and system records are left
/// out; a user's shell command, an extension's message and a summary read as the user's text
/// the model was given.
pub fn serialize(messages: &[AgentMessage]) -> String {
    let mut parts = Vec::new();
    for message in messages {
        match message {
            AgentMessage::User(user) => push_user(&mut parts, texts(&user.content)),
            AgentMessage::BashExecution(bash) if !bash.exclude_from_context => {
                push_user(&mut parts, bash_execution_text(bash));
            }
            AgentMessage::Custom(custom) => {
                let content: Value = serde_json::from_str(&custom.content).unwrap_or_default();
                push_user(&mut parts, json_texts(&content));
            }
            AgentMessage::CompactionSummary(summary) => push_user(
                &mut parts,
                format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    summary.summary
                ),
            ),
            AgentMessage::BranchSummary(summary) => push_user(
                &mut parts,
                format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    summary.summary
                ),
            ),
            AgentMessage::Assistant(answer) => {
                let text: Vec<&str> = answer
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let calls: Vec<String> = answer
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::ToolCall(call) => Some(format!(
                            "{}({})",
                            call.name,
                            arguments_text(&call.arguments)
                        )),
                        _ => None,
                    })
                    .collect();
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            AgentMessage::ToolResult(result) => {
                let text = texts(&result.content);
                if !text.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            AgentMessage::BashExecution(_) | AgentMessage::System(_) => {}
        }
    }
    parts.join("\n\n")
}

/// pi's `bashExecutionToText`: a user's shell command as the model is told of it.
pub fn bash_execution_text(bash: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", bash.command);
    if bash.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{}\n```", bash.output));
    }
    if bash.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = bash.exit_code.filter(|code| *code != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if bash.truncated
        && let Some(path) = bash.full_output_path.as_deref().filter(|p| !p.is_empty())
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn push_user(parts: &mut Vec<String>, text: String) {
    if !text.is_empty() {
        parts.push(format!("[User]: {text}"));
    }
}

/// The text blocks of `content`, joined.
fn texts(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text(text) => Some(text.as_str()),
            Content::Image(_) => None,
        })
        .collect()
}

/// The same of an extension message's content as pi keeps it: a string, or content blocks.
fn json_texts(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| b.get("text").map(js::display).unwrap_or_default())
            .collect(),
        _ => String::new(),
    }
}

/// A call's arguments as `key=value, …` (each value as `JSON.stringify` writes it).
fn arguments_text(arguments: &str) -> String {
    match serde_json::from_str(arguments) {
        Ok(Value::Object(map)) => js::entries(&map)
            .into_iter()
            .map(|(k, v)| format!("{k}={}", js::stringify(v)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}

/// pi's `truncateForSummary`, counting UTF-16 code units as JavaScript does and never cutting a
/// character in two.
fn truncate_for_summary(text: &str, max_chars: usize) -> String {
    let length: usize = text.chars().map(char::len_utf16).sum();
    if length <= max_chars {
        return text.to_string();
    }
    let mut units = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        if units + c.len_utf16() > max_chars {
            break;
        }
        units += c.len_utf16();
        end = at + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        length - max_chars
    )
}
