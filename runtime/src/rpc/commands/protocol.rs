//! The protocol's own settings: which events the host gets (`set_event_filter`) and pi 0.16's
//! legacy events (`set_legacy_events`).

use serde_json::{Value, json};

use super::Command;
use crate::rpc::events::EventFilter;
use crate::rpc::fields::Fields;
use crate::rpc::profile::Protocol;
use crate::rpc::render::UpdateMode;

/// Answers the protocol commands; false for any other.
pub(super) fn handle(command: &Command<'_>) -> bool {
    match command.kind {
        "set_event_filter" => command.respond(
            event_filter(&command.fields, command.events.protocol()).map(|filter| {
                let data = json!({
                    "events": filter.events,
                    "messageUpdates": filter.updates.as_str(),
                });
                command.events.set_filter(filter);
                Some(data)
            }),
        ),
        "set_legacy_events" => command.with(command.fields.boolean("enabled"), |enabled| {
            command.events.set_legacy(enabled);
            command.data(json!({"enabled": enabled}));
        }),
        _ => return false,
    }
    true
}

/// `set_event_filter`: `{"events": [..] | null, "messageUpdates"?: "full" | "delta" | "usage"}`
/// (by default the profile's frames).
fn event_filter(fields: &Fields<'_>, protocol: Protocol) -> Result<EventFilter, String> {
    let events = match fields.0.get("events") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_string).ok_or_else(|| {
                        "Field \"events\" must be an array of event types".to_string()
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err("Field \"events\" must be an array of event types or null".into()),
    };
    let updates = match fields.opt_string("messageUpdates")? {
        None => UpdateMode::of(protocol),
        Some(name) => UpdateMode::parse(name).ok_or_else(|| {
            format!(
                "Field \"messageUpdates\" must be one of \"full\", \"delta\", \"usage\", got \"{name}\""
            )
        })?,
    };
    Ok(EventFilter { events, updates })
}
