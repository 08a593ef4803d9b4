//! Pure mappings from pith's records to ACP session updates: the todo list as a plan, user and
//! custom messages as chunks, and a saved conversation replayed for `session/load`.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema as acp;
use serde_json::Value;

use super::tools;
use crate::agent::conversation::message::{
    AgentMessage, AssistantBlock, ToolResultMessage, UserContent,
};
use crate::agent::tools::todos::{TodoPhase, TodoStatus};
use crate::content::Content;

/// The todo list as an ACP plan: every task in order, prefixed with its phase's name when there
/// are several phases.
pub(super) fn plan(phases: &[TodoPhase]) -> acp::Plan {
    let several = phases.len() > 1;
    let entries = phases
        .iter()
        .flat_map(|phase| phase.tasks.iter().map(move |task| (phase, task)))
        .map(|(phase, task)| {
            let mut content = if several {
                format!("{}: {}", phase.name, task.content)
            } else {
                task.content.clone()
            };
            let status = match task.status {
                TodoStatus::Pending => acp::PlanEntryStatus::Pending,
                TodoStatus::Blocked => {
                    if let Some(blocker) = &task.blocker {
                        content.push_str(&format!(" (blocked: {blocker})"));
                    } else {
                        content.push_str(" (blocked)");
                    }
                    acp::PlanEntryStatus::Pending
                }
                TodoStatus::InProgress => acp::PlanEntryStatus::InProgress,
                TodoStatus::Completed => acp::PlanEntryStatus::Completed,
                TodoStatus::Abandoned => {
                    content.push_str(" (abandoned)");
                    acp::PlanEntryStatus::Completed
                }
            };
            acp::PlanEntry::new(content, acp::PlanEntryPriority::Medium, status)
        })
        .collect();
    acp::Plan::new(entries)
}

/// The plan a `todo` call's details carry (`todoPhases`), if they hold a valid list.
pub(super) fn plan_of(details: Option<&Value>) -> Option<acp::Plan> {
    let phases = details?.get("todoPhases")?;
    crate::agent::tools::todos::normalize(phases)
        .ok()
        .map(|phases| plan(&phases))
}

/// A content block of a message as an ACP content block.
pub(super) fn block(content: &Content) -> acp::ContentBlock {
    match content {
        Content::Text { text } => acp::ContentBlock::from(text.clone()),
        Content::Image { data, mime_type } => {
            acp::ContentBlock::Image(acp::ImageContent::new(data.clone(), mime_type.clone()))
        }
    }
}

/// A user message as user chunks (one per block).
pub(super) fn user_chunks(content: &UserContent) -> Vec<acp::SessionUpdate> {
    let blocks: Vec<acp::ContentBlock> = match content {
        UserContent::Text(text) => vec![acp::ContentBlock::from(text.clone())],
        UserContent::Blocks(blocks) => blocks.iter().map(block).collect(),
    };
    blocks
        .into_iter()
        .map(|block| acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(block)))
        .collect()
}

/// An extension's displayed message as text (its `content`: a string or text blocks).
pub(super) fn custom_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn agent_text(text: String) -> acp::SessionUpdate {
    acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text.into()))
}

/// The conversation as the updates a client would have seen: user and agent chunks, thoughts,
/// and every tool call with its final status and output.
pub(super) fn replay(messages: &[AgentMessage], cwd: &Path) -> Vec<acp::SessionUpdate> {
    let results: HashMap<&str, &ToolResultMessage> = messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(result) => Some((result.tool_call_id.as_str(), result)),
            _ => None,
        })
        .collect();
    let mut updates = Vec::new();
    for message in messages {
        match message {
            AgentMessage::User(user) => updates.extend(user_chunks(&user.content)),
            AgentMessage::Assistant(answer) => {
                let message_id = uuid::Uuid::new_v4().to_string();
                for block in &answer.content {
                    match block {
                        AssistantBlock::Text { text, .. } if !text.is_empty() => {
                            updates.push(acp::SessionUpdate::AgentMessageChunk(
                                acp::ContentChunk::new(text.clone().into())
                                    .message_id(acp::MessageId::new(message_id.clone())),
                            ));
                        }
                        AssistantBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                            updates.push(acp::SessionUpdate::AgentThoughtChunk(
                                acp::ContentChunk::new(thinking.clone().into())
                                    .message_id(acp::MessageId::new(message_id.clone())),
                            ));
                        }
                        AssistantBlock::ToolCall {
                            id,
                            name,
                            arguments,
                            ..
                        } => {
                            // A call whose answer ended before it ran has no result: failed.
                            let mut call = tools::announce(id, name, arguments, cwd)
                                .status(acp::ToolCallStatus::Failed);
                            if let Some(result) = results.get(id.as_str()) {
                                let done = tools::finish(
                                    name,
                                    arguments,
                                    &result.content,
                                    result.details.as_ref(),
                                    result.is_error,
                                    cwd,
                                );
                                call.update(done);
                            }
                            updates.push(acp::SessionUpdate::ToolCall(call));
                        }
                        _ => {}
                    }
                }
            }
            AgentMessage::BashExecution(run) => {
                let args = serde_json::json!({"command": run.command});
                let output = [Content::Text {
                    text: run.output.clone(),
                }];
                let mut call =
                    tools::announce(&format!("bash-{}", run.timestamp), "bash", &args, cwd);
                call.update(tools::finish("bash", &args, &output, None, false, cwd));
                updates.push(acp::SessionUpdate::ToolCall(call));
            }
            AgentMessage::Custom(custom) if custom.display => {
                if let Some(text) = custom_text(&custom.content) {
                    updates.push(agent_text(text));
                }
            }
            AgentMessage::CompactionSummary(summary) => {
                updates.push(agent_text(format!(
                    "Earlier messages were compacted. Summary:\n\n{}",
                    summary.summary
                )));
            }
            AgentMessage::BranchSummary(summary) => {
                updates.push(agent_text(format!(
                    "Summary of the branch left:\n\n{}",
                    summary.summary
                )));
            }
            AgentMessage::ToolResult(_) | AgentMessage::Custom(_) | AgentMessage::System(_) => {}
        }
    }
    updates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::todos::TodoTask;

    #[test]
    fn phases_become_one_plan_with_their_names() {
        let task = |content: &str, status| TodoTask {
            id: content.into(),
            content: content.into(),
            status,
            blocker: None,
        };
        let phases = vec![
            TodoPhase {
                id: "p1".into(),
                name: "Read".into(),
                tasks: vec![task("look", TodoStatus::Completed)],
            },
            TodoPhase {
                id: "p2".into(),
                name: "Write".into(),
                tasks: vec![
                    task("draft", TodoStatus::InProgress),
                    task("ship", TodoStatus::Abandoned),
                ],
            },
        ];
        let plan = serde_json::to_value(plan(&phases)).unwrap();
        assert_eq!(plan["entries"][0]["content"], "Read: look");
        assert_eq!(plan["entries"][0]["status"], "completed");
        assert_eq!(plan["entries"][1]["status"], "in_progress");
        assert_eq!(plan["entries"][2]["content"], "Write: ship (abandoned)");
    }
}
