//! The model and the thinking level.

use super::{Command, data_of, rendered};
use crate::agent::model::ThinkingLevel;

/// Answers the model and thinking commands; false for any other.
pub(super) fn handle(command: &Command<'_>) -> bool {
    let (session, fields) = (command.session, &command.fields);
    match command.kind {
        "get_available_models" => command.data(session.available_models()),
        "set_model" => command.respond(
            fields
                .string("provider")
                .and_then(|p| Ok((p, fields.string("modelId")?)))
                .and_then(|(p, m)| rendered(session.set_model(p, m)))
                .map(data_of),
        ),
        "cycle_model" => command.data(session.cycle_model()),
        "set_thinking_level" => command.with(fields.string("level"), |level| {
            session.set_thinking_level(ThinkingLevel::parse(level).unwrap_or(ThinkingLevel::Off));
            command.ok();
        }),
        "cycle_thinking_level" => command.data(session.cycle_thinking_level()),
        "get_available_thinking_levels" => command.data(session.available_thinking_levels()),
        _ => return false,
    }
    true
}
