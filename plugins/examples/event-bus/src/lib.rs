//! A port of pi's `examples/extensions/event-bus.ts`: messages between extensions over pi's
//! `pi.events`, here pith's `events-bus`. The extension hears the channel `my:notification` and
//! notifies `Event from <from>: <message>` for each message on it; `/emit [message]` sends
//! `{message, from: "/emit command"}` on it (`hello` without a message), and every
//! `session_start` sends `{message: "Session started", from: "event-bus-example"}`.
//!
//! Differences from pi: pi's listener is registered once, when the extension loads; pith's bus
//! subscriptions belong to the session's instance, so the port subscribes in `session_start`
//! (before it emits there). Over RPC, pi 1.5.2 fires `session_start` twice on `new_session`
//! (so two `Session started` notifies); pith fires it once, so the port notifies once.

use pith_sdk::extension::*;

/// The channel pi's example uses.
const CHANNEL: &str = "my:notification";

struct EventBus;

/// A JSON value as JavaScript's template literal shows it (`${value}`): a string as is,
/// a missing field as `undefined`.
fn js_text(value: Option<&serde_json::Value>) -> String {
    match value {
        None => "undefined".to_string(),
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(serde_json::Value::Object(_)) => "[object Object]".to_string(),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                serde_json::Value::Null => String::new(),
                other => js_text(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

/// Sends `{message, from}` on the channel, in pi's key order.
fn emit(message: &str, from: &str) {
    let data = format!(
        "{{\"message\":{},\"from\":{}}}",
        serde_json::Value::from(message),
        serde_json::Value::from(from)
    );
    events_bus::emit(CHANNEL, &data);
}

impl Extension for EventBus {
    fn new() -> Self {
        EventBus
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("event-bus")
            .on(&["session_start"])
            .command("emit", "Emit my:notification event (usage: /emit message)")
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::SessionStart(_) => {
                // pi's `pi.events.on(...)` at load: heard from the session's start on.
                events_bus::subscribe(CHANNEL);
                // pi's second `session_start` handler.
                emit("Session started", "event-bus-example");
            }
            Event::Bus((channel, data)) if channel == CHANNEL => {
                let data: serde_json::Value =
                    serde_json::from_str(&data).unwrap_or(serde_json::Value::Null);
                let message = js_text(data.get("message"));
                let from = js_text(data.get("from"));
                ui::notify(
                    &format!("Event from {from}: {message}"),
                    Some(ui::NotifyKind::Info),
                );
            }
            _ => {}
        }
        Ok(EventResult::Continue)
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        if name != "emit" {
            return Err(format!("Unknown command: {name}"));
        }
        // JavaScript's `trim` also removes the byte-order mark, which Rust's does not.
        let message = match args.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}') {
            "" => "hello",
            message => message,
        };
        // The listener (this extension's `bus` event) shows the notification.
        emit(message, "/emit command");
        Ok(())
    }
}

pith_sdk::export_extension!(EventBus);
