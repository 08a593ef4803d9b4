//! The session's events as protocol frames, in pi's key order (pi-behaviour §4).

use serde_json::{Map, Value, json};

use super::message::{AgentMessage, ToolResultMessage};
use crate::content::ToolOutput;

/// `{"type":"agent_start"}`
pub fn agent_start() -> Value {
    json!({"type": "agent_start"})
}

/// `{"type":"agent_end","messages":[…]}`
pub fn agent_end(messages: &[AgentMessage]) -> Value {
    json!({"type": "agent_end", "messages": messages})
}

/// `{"type":"turn_start"}`
pub fn turn_start() -> Value {
    json!({"type": "turn_start"})
}

/// `{"type":"turn_end","message","toolResults"}`
pub fn turn_end(message: &AgentMessage, tool_results: &[ToolResultMessage]) -> Value {
    json!({"type": "turn_end", "message": message, "toolResults": tool_results})
}

/// `{"type":"message_start","message"}`
pub fn message_start(message: &AgentMessage) -> Value {
    json!({"type": "message_start", "message": message})
}

/// `{"type":"message_end","message"}`
pub fn message_end(message: &AgentMessage) -> Value {
    json!({"type": "message_end", "message": message})
}

/// `{"type":"queue_update","steering":[…],"followUp":[…]}`
pub fn queue_update(steering: Vec<String>, follow_up: Vec<String>) -> Value {
    json!({"type": "queue_update", "steering": steering, "followUp": follow_up})
}

/// `{"type":"tool_execution_start","toolCallId","toolName","args"}`
pub fn tool_execution_start(id: &str, name: &str, args: &Value) -> Value {
    json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args})
}

/// `{"type":"tool_execution_update","toolCallId","toolName","args","partialResult"}`
pub fn tool_execution_update(id: &str, name: &str, args: &Value, partial: &ToolOutput) -> Value {
    json!({"type": "tool_execution_update", "toolCallId": id, "toolName": name, "args": args, "partialResult": result_object(partial)})
}

/// `{"type":"tool_execution_end","toolCallId","toolName","result","isError"}`
pub fn tool_execution_end(id: &str, name: &str, output: &ToolOutput) -> Value {
    json!({"type": "tool_execution_end", "toolCallId": id, "toolName": name, "result": result_object(output), "isError": output.is_error})
}

/// `{"content":[…],"details"?}`
pub fn result_object(output: &ToolOutput) -> Value {
    let mut object = Map::new();
    object.insert("content".into(), json!(output.content));
    if let Some(details) = &output.details {
        object.insert("details".into(), details.clone());
    }
    Value::Object(object)
}

/// `{"type":"thinking_level_changed","level"}`
pub fn thinking_level_changed(level: &str) -> Value {
    json!({"type": "thinking_level_changed", "level": level})
}

/// `{"type":"session_info_changed","name"}`
pub fn session_info_changed(name: &str) -> Value {
    json!({"type": "session_info_changed", "name": name})
}

/// `{"type":"agent_settled"}`: nothing can continue the run any more.
pub fn agent_settled() -> Value {
    json!({"type": "agent_settled"})
}
