//! pi's agent events (`agent_start`, `turn_end`, `message_update`, `tool_execution_end`, …) as
//! extensions of version 0.2 hear them: typed records (`wit/agent-events.wit`), made from the
//! session's events. Extensions of version 0.1 get pi's JSON instead, as before.

use serde_json::Value;

use super::typed;
use crate::agent::event::{AssistantUpdate, ResultObject, SessionEvent, UpdateKind, UpdatePayload};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::agent_events as wit;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as types_wit;

/// The typed form of `event`, for the agent events that have one.
pub fn agent_event(event: &SessionEvent) -> Option<wit::AgentEvent> {
    Some(match event {
        SessionEvent::AgentStart => wit::AgentEvent::AgentStart,
        SessionEvent::AgentEnd {
            messages,
            will_retry,
        } => wit::AgentEvent::AgentEnd(wit::AgentEndEvent {
            messages: messages.iter().map(typed::message).collect(),
            will_retry: *will_retry,
        }),
        SessionEvent::TurnStart => wit::AgentEvent::TurnStart,
        SessionEvent::TurnEnd {
            message,
            tool_results,
        } => wit::AgentEvent::TurnEnd(wit::TurnEndEvent {
            message: typed::message(message),
            tool_results: tool_results.iter().map(typed::tool_result).collect(),
        }),
        SessionEvent::MessageStart { message, .. } => {
            wit::AgentEvent::MessageStart(typed::message(message))
        }
        SessionEvent::MessageEnd { message } => {
            wit::AgentEvent::MessageEnd(typed::message(message))
        }
        SessionEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
            ..
        } => wit::AgentEvent::ToolExecutionStart(wit::ToolExecutionStartEvent {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.to_string(),
        }),
        SessionEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
            ..
        } => wit::AgentEvent::ToolExecutionUpdate(wit::ToolExecutionUpdateEvent {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: args.to_string(),
            partial_result: output(partial_result),
        }),
        SessionEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
            duration_ms,
            ..
        } => wit::AgentEvent::ToolExecutionEnd(wit::ToolExecutionEndEvent {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            output: output(result),
            is_error: *is_error,
            duration_ms: *duration_ms,
        }),
        _ => return None,
    })
}

/// `message_update`, typed.
pub fn message_update(update: &AssistantUpdate<'_>) -> wit::AgentEvent {
    let text = match update.payload {
        UpdatePayload::Delta(text) | UpdatePayload::Content(text) => Some(text.clone()),
        UpdatePayload::None | UpdatePayload::ToolCall => None,
    };
    wit::AgentEvent::MessageUpdate(wit::MessageUpdateEvent {
        change: change(update.kind),
        content_index: u32::try_from(update.content_index).unwrap_or(u32::MAX),
        text,
        message: typed::assistant(update.message),
    })
}

fn change(kind: UpdateKind) -> wit::AnswerChange {
    match kind {
        UpdateKind::TextStart => wit::AnswerChange::TextStart,
        UpdateKind::TextDelta => wit::AnswerChange::TextDelta,
        UpdateKind::TextEnd => wit::AnswerChange::TextEnd,
        UpdateKind::ThinkingStart => wit::AnswerChange::ThinkingStart,
        UpdateKind::ThinkingDelta => wit::AnswerChange::ThinkingDelta,
        UpdateKind::ThinkingEnd => wit::AnswerChange::ThinkingEnd,
        UpdateKind::ToolcallStart => wit::AnswerChange::ToolCallStart,
        UpdateKind::ToolcallDelta => wit::AnswerChange::ToolCallDelta,
        UpdateKind::ToolcallEnd => wit::AnswerChange::ToolCallEnd,
    }
}

/// A tool's output as the events carry it (its content and details).
fn output(result: &ResultObject) -> types_wit::ToolResult {
    types_wit::ToolResult {
        content: result.0.content.iter().cloned().map(Into::into).collect(),
        details: result.0.details.as_ref().map(Value::to_string),
    }
}
