//! The stdio RPC mode: framing, the single stdout writer, command dispatch and response
//! envelopes. Every response echoes the request's `id`, errors included.

pub mod client_ids;
pub mod commands;
pub mod envelope;
pub mod events;
pub mod fields;
pub mod framing;
pub mod host;
pub mod listen;
pub mod profile;
pub mod recover;
pub mod render;
pub mod slot;
pub mod writer;

use std::process::ExitCode;

use serde_json::Value;

use envelope::{parse_error_frame, parse_frame};
use events::RpcEvents;
use framing::{Line, LineReader};
use host::{SessionHost, Target};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Serves the protocol on `input`/`output` until the input closes, then lets the runs in
/// flight finish, fails pending host-tool calls, and flushes.
pub async fn serve<R>(host: Arc<SessionHost>, input: R, writer: writer::WriterHandle) -> ExitCode
where
    R: tokio::io::AsyncRead + Unpin,
{
    let events = host.default_session().events.clone();
    let slot = host.default_session().slot.clone();
    // SIGTERM and SIGINT end the serve loop.
    let mut terminations = crate::signals::Signals::listen(
        (crate::signals::Ending::Terminate, 143),
        (crate::signals::Ending::Interrupt, 130),
    );
    let mut reader = LineReader::new(input);
    // Extensions start once frames are read, so a dialog in `session_start` can be answered.
    let starting = slot.current();
    tokio::spawn(async move { starting.start_extensions().await });
    let mut terminated = false;
    let intake = Intake {
        commands: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        priority: Arc::new(Semaphore::new(MAX_PRIORITY_IN_FLIGHT)),
    };
    let mut shut_down = false;
    loop {
        let line = tokio::select! {
            line = reader.next_line() => line,
            _ = terminations.next() => {
                terminated = true;
                host.abort_all().await;
                break;
            }
            // `shutdown` answered: stop reading, as at the end of stdin.
            _ = events.shutdown_requested() => {
                shut_down = true;
                break;
            }
        };
        match line {
            Ok(Some(line)) => {
                tokio::select! {
                    _ = handle_line(&host, &intake, line) => {}
                    _ = terminations.next() => {
                        terminated = true;
                        host.abort_all().await;
                        break;
                    }
                }
            }
            Ok(None) => {
                tokio::select! {
                    _ = host.finish() => {}
                    _ = terminations.next() => {
                        terminated = true;
                        host.abort_all().await;
                    }
                }
                break;
            }
            Err(err) => {
                tracing::error!("reading stdin failed: {err}");
                break;
            }
        }
    }
    if shut_down {
        host.finish().await;
    }
    drop(events);
    drop(slot);
    drop(host);
    if terminated {
        // A host that stopped reading cannot hold pith past the grace period.
        let _ = tokio::time::timeout(TERMINATION_GRACE, writer.finished()).await;
    } else {
        writer.finished().await;
    }
    ExitCode::SUCCESS
}

/// How long pith keeps flushing its output after SIGTERM or SIGINT before it exits anyway.
pub const TERMINATION_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Answers a line that is not a command.
fn parse_error(events: &RpcEvents, id: Option<Value>, message: String) {
    events.out().send(&parse_error_frame(id.as_ref(), &message));
    events.legacy_error(&format!("Failed to parse command: {message}"));
}

/// The places of the commands in flight: the ordinary commands share one pool, the priority
/// ones (`abort`, `get_state`, `ping`, …) have their own, so a flood of ordinary commands never
/// holds them up, and a flood of them is bounded too.
struct Intake {
    commands: Arc<Semaphore>,
    priority: Arc<Semaphore>,
}

/// Reads one line and starts its command, on the session it names ([`SessionHost::target`]).
/// The command first takes a place among the commands in flight of its kind ([`MAX_IN_FLIGHT`],
/// or [`MAX_PRIORITY_IN_FLIGHT`] for the priority ones): when none is free (the host is not
/// reading the responses), reading waits, so pith's memory stays bounded whatever is piped in.
async fn handle_line(host: &Arc<SessionHost>, intake: &Intake, line: Line) {
    let mut frame = match parse_frame(line) {
        Ok(frame) => frame,
        Err((id, message)) => {
            return parse_error(&host.default_session().events, id, message);
        }
    };
    let target = host.target(&mut frame);
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    let pool = if commands::PRIORITY.contains(&kind) {
        &intake.priority
    } else {
        &intake.commands
    };
    match target {
        Target::Answered => {}
        Target::Host(frame, leaving) => {
            let place = intake.commands.clone().acquire_owned().await.ok();
            tokio::spawn(host::commands::run(host.clone(), frame, leaving, place));
        }
        Target::Ready(routed) => {
            if commands::side_channel(&routed.slot.current(), &routed.events, &frame) {
                return;
            }
            let place = pool.clone().acquire_owned().await.ok();
            if let Err(error) = host.check_run(&routed, kind) {
                return refuse(&routed.events, &frame, error);
            }
            // Counted as read, so the commands read after it run on the session it leaves.
            let replacing = commands::REPLACING
                .contains(&kind)
                .then(|| routed.slot.replacing());
            tokio::spawn(commands::command(
                routed.slot,
                routed.events,
                frame,
                (place, replacing),
            ));
        }
        Target::Opening(id, opening) => {
            let place = pool.clone().acquire_owned().await.ok();
            let host = host.clone();
            // The session is resumed apart from the reading: the other sessions' commands go on.
            tokio::spawn(async move {
                let routed = match host.arrive(&id, &opening).await {
                    Ok(routed) => routed,
                    Err(error) => {
                        let out = host.default_session().events.out().tagged(&id);
                        let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
                        out.send(&envelope::response(frame.get("id"), kind, Err(error)));
                        return;
                    }
                };
                if commands::side_channel(&routed.slot.current(), &routed.events, &frame) {
                    return;
                }
                let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
                if let Err(error) = host.check_run(&routed, kind) {
                    return refuse(&routed.events, &frame, error);
                }
                commands::command(routed.slot, routed.events, frame, (place, None)).await;
            });
        }
    }
}

/// Answers a command with an error before it runs.
fn refuse(events: &RpcEvents, frame: &serde_json::Map<String, Value>, error: String) {
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    events
        .out()
        .send(&envelope::response(frame.get("id"), kind, Err(error)));
}

/// Commands read and not yet answered (their responses not yet written), at most.
pub const MAX_IN_FLIGHT: usize = 256;
/// Priority commands read and not yet answered, at most (apart from [`MAX_IN_FLIGHT`]).
pub const MAX_PRIORITY_IN_FLIGHT: usize = 64;
