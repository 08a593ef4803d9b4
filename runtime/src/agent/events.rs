//! Constructors of the session's common events (see [`SessionEvent`]).

use serde_json::{Value, json};

use super::event::{ResultObject, SessionEvent};
use crate::agent::conversation::message::{AgentMessage, ToolResultMessage};
use crate::agent::session::queue::Queue;
use crate::content::ToolOutput;

/// `agent_start`
pub fn agent_start() -> SessionEvent {
    SessionEvent::AgentStart
}

/// `agent_end` with every message of the run.
pub fn agent_end(messages: &[AgentMessage], will_retry: bool) -> SessionEvent {
    SessionEvent::AgentEnd {
        messages: messages.to_vec(),
        will_retry,
    }
}

/// `turn_start`
pub fn turn_start() -> SessionEvent {
    SessionEvent::TurnStart
}

/// `turn_end` with the answer and its tool results.
pub fn turn_end(message: &AgentMessage, tool_results: &[ToolResultMessage]) -> SessionEvent {
    SessionEvent::TurnEnd {
        message: message.clone(),
        tool_results: tool_results.to_vec(),
    }
}

/// `message_start`
pub fn message_start(message: &AgentMessage) -> SessionEvent {
    SessionEvent::MessageStart {
        message: message.clone(),
        client_message_id: None,
    }
}

/// `message_end`
pub fn message_end(message: &AgentMessage) -> SessionEvent {
    SessionEvent::MessageEnd {
        message: message.clone(),
    }
}

/// `queue_update` with the queues' texts (and their `clientMessageId`s when any has one).
pub fn queue_update(steering: &Queue, follow_up: &Queue) -> SessionEvent {
    let ids = |queue: &Queue| -> Vec<Option<String>> {
        queue.items().map(|q| q.client_id.clone()).collect()
    };
    let (steering_ids, follow_up_ids) = (ids(steering), ids(follow_up));
    let any = steering_ids
        .iter()
        .chain(&follow_up_ids)
        .any(Option::is_some);
    SessionEvent::QueueUpdate {
        steering: steering.texts(),
        follow_up: follow_up.texts(),
        client_message_ids: any.then_some(super::event::QueueIds {
            steering: steering_ids,
            follow_up: follow_up_ids,
        }),
    }
}

/// `tool_execution_start`
pub fn tool_execution_start(id: &str, name: &str, args: &Value) -> SessionEvent {
    SessionEvent::ToolExecutionStart {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        args: args.clone(),
        parent_tool_call_id: None,
    }
}

/// `tool_execution_update` with the output so far.
pub fn tool_execution_update(
    id: &str,
    name: &str,
    args: &Value,
    partial: &ToolOutput,
) -> SessionEvent {
    SessionEvent::ToolExecutionUpdate {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        args: args.clone(),
        partial_result: ResultObject(partial.clone(), None),
        parent_tool_call_id: None,
    }
}

/// `tool_execution_end` with the output.
pub fn tool_execution_end(
    id: &str,
    name: &str,
    output: &ToolOutput,
    duration_ms: Option<u64>,
) -> SessionEvent {
    SessionEvent::ToolExecutionEnd {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        result: ResultObject(
            output.clone(),
            structured_content(name, output, duration_ms),
        ),
        is_error: output.is_error,
        duration_ms,
        parent_tool_call_id: None,
    }
}

/// A tool call's event as made by the call `parent` (pi's `parentToolCallId`).
pub fn nested(mut event: SessionEvent, parent: &str) -> SessionEvent {
    match &mut event {
        SessionEvent::ToolExecutionStart {
            parent_tool_call_id,
            ..
        }
        | SessionEvent::ToolExecutionUpdate {
            parent_tool_call_id,
            ..
        }
        | SessionEvent::ToolExecutionEnd {
            parent_tool_call_id,
            ..
        } => *parent_tool_call_id = Some(parent.to_string()),
        _ => {}
    }
    event
}

/// pi 1.5's `structuredContent` of a first-party tool's successful result: a shell's output,
/// truncation, exit code and wall time; `read`'s text. `None` for errors and other tools.
pub(crate) fn structured_content(
    name: &str,
    output: &ToolOutput,
    duration_ms: Option<u64>,
) -> Option<Value> {
    // A tool that reports its own (an MCP tool's whole result), errors included.
    if let Some(structured) = &output.structured {
        return Some(structured.clone());
    }
    if output.is_error {
        return None;
    }
    let text = output.text();
    match name {
        "bash" | "powershell" => Some(json!({
            "output": text,
            "truncated": output.details.as_ref().is_some_and(|d| d.get("truncation").is_some()),
            "exit_code": 0,
            "wall_time_seconds": duration_ms.unwrap_or(0) / 1000,
        })),
        "read" => Some(Value::String(text)),
        _ => None,
    }
}

/// `thinking_level_changed`
pub fn thinking_level_changed(level: &str) -> SessionEvent {
    SessionEvent::ThinkingLevelChanged {
        level: level.to_string(),
    }
}

/// `session_info_changed`
pub fn session_info_changed(name: &str) -> SessionEvent {
    SessionEvent::SessionInfoChanged {
        name: name.to_string(),
    }
}

/// `agent_settled`: nothing can continue the run any more.
pub fn agent_settled(aborted: bool) -> SessionEvent {
    SessionEvent::AgentSettled { aborted }
}
