//! The session's entries and messages as extensions of version 0.2 read them: typed records in
//! pi's shapes (`wit/entries.wit`), made from the entries of the session file.

use serde_json::{Map, Value};

use crate::agent::conversation::message::{
    AgentMessage, AssistantMessage, CustomMessage, ToolResultMessage, Usage,
};
use crate::agent::run::request::{wit_block, wit_stop_reason};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::entries as wit;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as types_wit;

/// An entry of the session file as an extension reads it.
pub fn entry(entry: &Map<String, Value>) -> wit::SessionEntry {
    let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let json = |key: &str| {
        entry
            .get(key)
            .filter(|v| !v.is_null())
            .map(Value::to_string)
    };
    let kind = text("type").unwrap_or_default();
    let body = match kind.as_str() {
        "message" => entry
            .get("message")
            .and_then(|m| serde_json::from_value::<AgentMessage>(m.clone()).ok())
            .map(|m| wit::EntryBody::Message(message(&m))),
        "thinking_level_change" => text("thinkingLevel").map(wit::EntryBody::ThinkingLevelChange),
        "model_change" => Some(wit::EntryBody::ModelChange(wit::ModelChangeEntry {
            provider: text("provider").unwrap_or_default(),
            model_id: text("modelId").unwrap_or_default(),
        })),
        "compaction" => Some(wit::EntryBody::Compaction(wit::CompactionEntry {
            summary: text("summary").unwrap_or_default(),
            first_kept_entry_id: text("firstKeptEntryId").unwrap_or_default(),
            tokens_before: entry
                .get("tokensBefore")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            details: json("details"),
        })),
        "branch_summary" => Some(wit::EntryBody::BranchSummary(wit::BranchSummaryEntry {
            from_id: text("fromId").unwrap_or_default(),
            summary: text("summary").unwrap_or_default(),
        })),
        "custom" => Some(wit::EntryBody::Custom(wit::CustomEntry {
            custom_type: text("customType").unwrap_or_default(),
            data: json("data"),
        })),
        "custom_message" => Some(wit::EntryBody::CustomMessage(wit::CustomMessageRecord {
            custom_type: text("customType").unwrap_or_default(),
            content: entry
                .get("content")
                .cloned()
                .unwrap_or(Value::String(String::new()))
                .to_string(),
            display: entry
                .get("display")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            details: json("details"),
            timestamp: 0,
        })),
        "label" => Some(wit::EntryBody::Label(wit::LabelEntry {
            target_id: text("targetId").unwrap_or_default(),
            label: text("label"),
        })),
        "session_info" => Some(wit::EntryBody::SessionInfo(text("name"))),
        _ => None,
    };
    wit::SessionEntry {
        id: text("id").unwrap_or_default(),
        parent_id: text("parentId"),
        timestamp: text("timestamp").unwrap_or_default(),
        body: body.unwrap_or_else(|| {
            wit::EntryBody::Other((kind, Value::Object(entry.clone()).to_string()))
        }),
    }
}

/// A message of the conversation as an extension reads it.
pub fn message(message: &AgentMessage) -> wit::AgentMessage {
    match message {
        AgentMessage::System(system) => wit::AgentMessage::System(system.timestamp),
        AgentMessage::User(user) => wit::AgentMessage::User(wit::UserMessage {
            content: user.content.blocks().into_iter().map(Into::into).collect(),
            timestamp: user.timestamp,
        }),
        AgentMessage::Assistant(answer) => wit::AgentMessage::Assistant(assistant(answer)),
        AgentMessage::ToolResult(result) => wit::AgentMessage::ToolResult(tool_result(result)),
        AgentMessage::BashExecution(bash) => {
            wit::AgentMessage::BashExecution(wit::BashExecutionMessage {
                command: bash.command.clone(),
                output: bash.output.clone(),
                exit_code: bash.exit_code,
                cancelled: bash.cancelled,
                truncated: bash.truncated,
                full_output_path: bash.full_output_path.clone(),
                exclude_from_context: bash.exclude_from_context == Some(true),
                timestamp: bash.timestamp,
            })
        }
        AgentMessage::Custom(custom) => wit::AgentMessage::Custom(custom_message(custom)),
        AgentMessage::CompactionSummary(summary) => {
            wit::AgentMessage::CompactionSummary(wit::SummaryMessage {
                summary: summary.summary.clone(),
                tokens_before: Some(summary.tokens_before),
                from_id: None,
                timestamp: summary.timestamp,
            })
        }
        AgentMessage::BranchSummary(summary) => {
            wit::AgentMessage::BranchSummary(wit::SummaryMessage {
                summary: summary.summary.clone(),
                tokens_before: None,
                from_id: Some(summary.from_id.clone()),
                timestamp: summary.timestamp,
            })
        }
    }
}

/// An extension's message as an extension reads it.
pub fn custom_message(custom: &CustomMessage) -> wit::CustomMessageRecord {
    wit::CustomMessageRecord {
        custom_type: custom.custom_type.clone(),
        content: custom.content.to_string(),
        display: custom.display,
        details: custom.details.as_ref().map(Value::to_string),
        timestamp: custom.timestamp,
    }
}

/// A model's answer as an extension reads it.
pub fn assistant(answer: &AssistantMessage) -> wit::AssistantMessage {
    wit::AssistantMessage {
        content: answer.content.iter().map(wit_block).collect(),
        api: answer.api.clone(),
        provider: answer.provider.clone(),
        model: answer.model.clone(),
        usage: usage(&answer.usage),
        stop_reason: wit_stop_reason(answer.stop_reason),
        error_message: answer.error_message.clone(),
        timestamp: answer.timestamp,
    }
}

/// A tool call's result message as an extension reads it.
pub fn tool_result(result: &ToolResultMessage) -> wit::ToolResultMessage {
    wit::ToolResultMessage {
        tool_call_id: result.tool_call_id.clone(),
        tool_name: result.tool_name.clone(),
        content: result.content.iter().cloned().map(Into::into).collect(),
        details: result.details.as_ref().map(Value::to_string),
        is_error: result.is_error,
        timestamp: result.timestamp,
    }
}

/// Token counts as plugins get them.
pub fn usage(usage: &Usage) -> types_wit::Usage {
    types_wit::Usage {
        input: usage.input,
        output: usage.output,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
    }
}
