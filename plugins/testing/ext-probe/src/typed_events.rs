//! The agent events as version 0.2 types them: with the config `agent-events` set, the probe
//! notifies what each `turn_end`, `tool_execution_end` and `agent_end` carries, and how many
//! text deltas the run's `message_update`s carried, read from the typed records alone.

use pith_sdk::extension::agent_events::AnswerChange;
use pith_sdk::extension::*;
use pith_sdk::types::AssistantBlock;

/// Reports `event` when the config asks for it; `deltas` counts the run's text deltas.
pub fn report(event: &AgentEvent, deltas: &mut u32) {
    if pith_sdk::host::config("agent-events")
        .ok()
        .flatten()
        .is_none()
    {
        return;
    }
    match event {
        AgentEvent::MessageUpdate(update) if update.change == AnswerChange::TextDelta => {
            *deltas += 1;
        }
        AgentEvent::TurnEnd(turn) => {
            let results: Vec<&str> = turn
                .tool_results
                .iter()
                .map(|r| r.tool_name.as_str())
                .collect();
            ui::notify(
                &format!(
                    "turn_end answer={:?} results={results:?}",
                    answer_text(&turn.message)
                ),
                None,
            );
        }
        AgentEvent::ToolExecutionEnd(end) => {
            let first = end.output.content.first().map(|c| match c {
                Content::Text(text) => text.clone(),
                Content::Image(_) => "<image>".into(),
            });
            ui::notify(
                &format!(
                    "tool_execution_end {} error={} output={:?}",
                    end.tool_name,
                    end.is_error,
                    first.unwrap_or_default()
                ),
                None,
            );
        }
        AgentEvent::AgentEnd(end) => {
            ui::notify(
                &format!("agent_end messages={} deltas={deltas}", end.messages.len()),
                None,
            );
            *deltas = 0;
        }
        _ => {}
    }
}

/// The text of an answer's text blocks.
fn answer_text(message: &entries::AgentMessage) -> String {
    let entries::AgentMessage::Assistant(answer) = message else {
        return String::new();
    };
    answer
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}
