//! How the session runs: queue and interrupt modes, automatic compaction and retry.

use super::Command;
use crate::agent::session::InterruptMode;
use crate::agent::session::queue::QueueMode;

const QUEUE_MODES: &[&str] = &["all", "one-at-a-time"];

/// Answers the control commands; false for any other.
pub(super) fn handle(command: &Command<'_>) -> bool {
    let (session, fields) = (command.session, &command.fields);
    match command.kind {
        // pi 0.16's `set_queue_mode` set the follow-up queue's mode.
        "set_steering_mode" | "set_follow_up_mode" | "set_queue_mode" => {
            command.with(fields.one_of("mode", QUEUE_MODES), |mode| {
                let mode = QueueMode::parse(mode);
                if command.kind == "set_steering_mode" {
                    session.set_steering_mode(mode)
                } else {
                    session.set_follow_up_mode(mode)
                }
                command.ok();
            })
        }
        "set_interrupt_mode" => {
            command.with(fields.one_of("mode", &["immediate", "wait"]), |mode| {
                session.set_interrupt_mode(if mode == "wait" {
                    InterruptMode::Wait
                } else {
                    InterruptMode::Immediate
                });
                command.ok();
            })
        }
        "set_auto_compaction" => command.with(fields.boolean("enabled"), |enabled| {
            session.set_auto_compaction(enabled);
            command.ok();
        }),
        "set_auto_retry" => command.with(fields.boolean("enabled"), |enabled| {
            session.set_auto_retry(enabled);
            command.ok();
        }),
        "clear_queue" => command.data(session.clear_queue()),
        "abort_retry" => {
            session.abort_retry();
            command.ok();
        }
        // Liveness: answered at once, whatever runs.
        "ping" => command.data(serde_json::json!({
            "pong": true,
            "uptimeMs": command.events.uptime().as_millis() as u64,
            "runActive": session.is_streaming(),
        })),
        _ => return false,
    }
    true
}
