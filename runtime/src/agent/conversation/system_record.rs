//! pi 1.5's `system` message: the record, at the start of a run, of the system prompt's
//! sections and of the tool set the model is shown. The first one of a session holds every
//! section and tool; a later one is recorded only when something changed, and holds the
//! sections that changed (`null` for one removed) and the tools added and removed since (a
//! changed tool is removed and added again), as pi's `diffSystemPromptSections` and
//! `getToolStateChanges` make them. Replaying the records in order gives what is in force.

use crate::agent::conversation::message::{
    AgentMessage, SystemMessage, ToolDescription, ToolReference, now_ms,
};
use crate::agent::conversation::messages::Messages;
use crate::agent::conversation::prompt_sections::Sections;
use crate::agent::tools::SessionTool;

/// What the system messages of a conversation leave in force (pi's `getCurrentSystemMessage`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InForce {
    /// The sections, patched in order.
    pub sections: Sections,
    /// The tools, in the order they were first declared (a tool removed and added again
    /// comes last, as in a JavaScript `Map`).
    pub tools: Vec<ToolDescription>,
    /// The first record's time.
    pub timestamp: i64,
}

impl InForce {
    /// Replays the system messages of `messages`; `None` when there is none.
    pub fn replay<M: Messages + ?Sized>(messages: &M) -> Option<InForce> {
        let mut in_force: Option<InForce> = None;
        for message in messages.system_records() {
            if let AgentMessage::System(system) = &*message {
                let state = in_force.get_or_insert_with(|| InForce {
                    timestamp: system.timestamp,
                    ..InForce::default()
                });
                state.sections.apply(&system.sections);
                for removed in &system.tools_removed {
                    state.tools.retain(|tool| tool.name != removed.name);
                }
                for tool in &system.tools_added {
                    match state.tools.iter_mut().find(|t| t.name == tool.name) {
                        Some(known) => *known = tool.clone(),
                        None => state.tools.push(tool.clone()),
                    }
                }
            }
        }
        in_force
    }

    /// The whole record: one system message holding every section and tool (what a
    /// compaction keeps as its `systemMessage`).
    pub fn message(&self) -> SystemMessage {
        SystemMessage {
            content: String::new(),
            sections: self.sections.clone(),
            timestamp: self.timestamp,
            tools_added: self.tools.clone(),
            tools_removed: Vec::new(),
        }
    }
}

/// The names of the tools the system messages of `messages` leave declared, in order.
pub fn recorded_names<M: Messages + ?Sized>(messages: &M) -> Vec<String> {
    InForce::replay(messages)
        .map(|state| state.tools.into_iter().map(|tool| tool.name).collect())
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

/// The system message to record before a run over `messages` with `sections` and `tools`,
/// or `None` when what is in force already is that.
pub fn next<M: Messages + ?Sized>(
    messages: &M,
    sections: Sections,
    tools: &[SessionTool],
) -> Option<SystemMessage> {
    let current: Vec<ToolDescription> = tools.iter().map(describe).collect();
    let Some(known) = InForce::replay(messages) else {
        return Some(SystemMessage {
            content: String::new(),
            sections,
            timestamp: now_ms(),
            tools_added: current,
            tools_removed: Vec::new(),
        });
    };
    let same = |a: &ToolDescription, b: &ToolDescription| a == b;
    let tools_added: Vec<ToolDescription> = current
        .iter()
        .filter(|tool| !known.tools.iter().any(|k| same(k, tool)))
        .cloned()
        .collect();
    let tools_removed: Vec<ToolReference> = known
        .tools
        .iter()
        .filter(|k| !current.iter().any(|tool| same(k, tool)))
        .map(|k| ToolReference {
            name: k.name.clone(),
        })
        .collect();
    let patch = sections.patch_from(&known.sections).unwrap_or_default();
    if patch.is_empty() && tools_added.is_empty() && tools_removed.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: String::new(),
        sections: patch,
        timestamp: now_ms(),
        tools_added,
        tools_removed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::host_tools::HostToolDefinition;
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
    fn the_first_record_lists_everything_and_later_ones_only_changes() {
        let tools = vec![host("a", "first"), host("b", "second")];
        let mut sections = Sections::new();
        sections.set("preamble", Some("p".into()));
        sections.set("cwd", Some("<cwd>\n/w\n</cwd>".into()));
        let first = next(&Vec::<AgentMessage>::new(), sections.clone(), &tools).unwrap();
        assert_eq!(first.tools_added.len(), 2);
        assert!(first.tools_removed.is_empty());
        assert_eq!(first.sections, sections);
        let mut history = vec![AgentMessage::System(first)];
        assert_eq!(next(&history, sections.clone(), &tools), None);
        // A changed tool is removed and added again, and comes last on replay.
        let changed = vec![host("a", "first, reworded"), host("c", "third")];
        let second = next(&history, sections.clone(), &changed).unwrap();
        let added: Vec<&str> = second.tools_added.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(added, ["a", "c"]);
        let removed: Vec<&str> = second
            .tools_removed
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(removed, ["a", "b"]);
        assert!(second.sections.is_empty());
        history.push(AgentMessage::System(second));
        assert_eq!(recorded_names(&history), ["a", "c"]);
        assert_eq!(next(&history, sections.clone(), &changed), None);
        // A changed section alone is a patch of that section.
        let mut moved = sections.clone();
        moved.set("cwd", Some("<cwd>\n/x\n</cwd>".into()));
        let third = next(&history, moved.clone(), &changed).unwrap();
        assert_eq!(
            third.sections.iter().collect::<Vec<_>>(),
            [("cwd", Some("<cwd>\n/x\n</cwd>"))]
        );
        assert!(third.tools_added.is_empty() && third.tools_removed.is_empty());
        history.push(AgentMessage::System(third));
        assert_eq!(InForce::replay(&history).unwrap().sections, moved);
    }
}
