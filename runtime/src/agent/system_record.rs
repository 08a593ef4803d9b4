//! pi 1.5's `system` message: the record, at the start of a run, of the system prompt's
//! sections and of the tool set the model is shown. The first one of a session lists every
//! tool; a later one is recorded only when the tool set changed (a hot reload, an extension
//! registering a tool) and lists the tools added (or changed) and removed since.

use std::collections::BTreeMap;

use super::message::{AgentMessage, SystemMessage, ToolDescription, now_ms};
use super::system_prompt::Sections;
use super::tools::SessionTool;

/// The tool set as the system messages of `messages` left it; `None` when there is none.
fn recorded(messages: &[AgentMessage]) -> Option<BTreeMap<String, ToolDescription>> {
    let mut tools: Option<BTreeMap<String, ToolDescription>> = None;
    for message in messages {
        if let AgentMessage::System(system) = message {
            let known = tools.get_or_insert_with(BTreeMap::new);
            for name in &system.tools_removed {
                known.remove(name);
            }
            for tool in &system.tools_added {
                known.insert(tool.name.clone(), tool.clone());
            }
        }
    }
    tools
}

/// The names of the tools the last system messages of `messages` leave declared.
pub fn recorded_names(messages: &[AgentMessage]) -> Vec<String> {
    recorded(messages)
        .map(|tools| tools.into_keys().collect())
        .unwrap_or_default()
}

/// How `tool` is described to hosts.
fn describe(tool: &SessionTool) -> ToolDescription {
    ToolDescription {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: tool.parameters().clone(),
        // pi declares MCP tools without `constrainedSampling`.
        constrained_sampling: match tool {
            SessionTool::Mcp(_) => serde_json::Value::Null,
            _ => ToolDescription::prefer_schema(),
        },
    }
}

/// The system message to record before a run over `messages` with `tools`, or `None` when the
/// conversation's last record still holds.
pub fn next(
    messages: &[AgentMessage],
    sections: Sections,
    tools: &[SessionTool],
) -> Option<SystemMessage> {
    let current: Vec<ToolDescription> = tools.iter().map(describe).collect();
    let (tools_added, tools_removed) = match recorded(messages) {
        None => (current, Vec::new()),
        Some(known) => {
            let added: Vec<ToolDescription> = current
                .iter()
                .filter(|tool| known.get(&tool.name) != Some(tool))
                .cloned()
                .collect();
            let removed: Vec<String> = known
                .keys()
                .filter(|name| !current.iter().any(|tool| &tool.name == *name))
                .cloned()
                .collect();
            if added.is_empty() && removed.is_empty() {
                return None;
            }
            (added, removed)
        }
    };
    Some(SystemMessage {
        content: String::new(),
        sections,
        timestamp: now_ms(),
        tools_added,
        tools_removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::host_tools::HostToolDefinition;
    use serde_json::json;

    fn host(name: &str, description: &str) -> SessionTool {
        SessionTool::Host(HostToolDefinition {
            name: name.into(),
            description: description.into(),
            label: None,
            parameters: json!({"type": "object"}),
            timeout_ms: None,
        })
    }

    #[test]
    fn the_first_record_lists_every_tool_and_later_ones_only_changes() {
        let tools = vec![host("a", "first"), host("b", "second")];
        let first = next(&[], Sections::default(), &tools).unwrap();
        assert_eq!(first.tools_added.len(), 2);
        assert!(first.tools_removed.is_empty());
        let history = vec![AgentMessage::System(first)];
        assert_eq!(next(&history, Sections::default(), &tools), None);
        let changed = vec![host("a", "first, reworded"), host("c", "third")];
        let second = next(&history, Sections::default(), &changed).unwrap();
        let added: Vec<&str> = second.tools_added.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(added, ["a", "c"]);
        assert_eq!(second.tools_removed, ["b"]);
    }
}
