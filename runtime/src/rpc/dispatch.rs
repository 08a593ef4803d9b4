//! Routing commands to the session. Each command runs in its own task, so a slow one never
//! holds up the others; every response echoes the request's `id`.

use serde_json::{Map, Value, json};

use super::events::{EventFilter, RpcEvents};
use super::fields::Fields;
use super::render::UpdateMode;
use super::response;
use crate::agent::host_tools::HostResult;
use crate::agent::input::Input;
use crate::agent::model::ThinkingLevel;
use crate::agent::queue::QueueMode;
use crate::agent::session::{InterruptMode, Session, StreamingBehavior};
use crate::content::Content;
use std::sync::Arc;

/// Handles a frame that is not a command (`extension_ui_response`, `host_tool_*`); returns
/// false when it is a command.
pub fn side_channel(session: &Session, frame: &Map<String, Value>) -> bool {
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    let id = frame.get("id").and_then(Value::as_str).unwrap_or("");
    match kind {
        "extension_ui_response" => {
            session.shared().ui.on_response(frame);
            true
        }
        "host_tool_result" => {
            if let Some(result) = frame
                .get("result")
                .and_then(|r| serde_json::from_value::<HostResult>(r.clone()).ok())
            {
                let is_error = frame
                    .get("isError")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                session.host_tools().on_result(id, result, is_error);
                return true;
            }
            false
        }
        "host_tool_update" => {
            if let Some(partial) = frame
                .get("partialResult")
                .and_then(|r| serde_json::from_value::<HostResult>(r.clone()).ok())
            {
                session.host_tools().on_update(id, partial);
                return true;
            }
            false
        }
        _ => false,
    }
}

/// Runs one command and writes its response.
pub async fn command(session: Session, events: Arc<RpcEvents>, frame: Map<String, Value>) {
    let id = frame.get("id").cloned();
    let Some(kind) = frame
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        let mut out = Map::new();
        if let Some(id) = &id {
            out.insert("id".into(), id.clone());
        }
        out.insert("type".into(), json!("response"));
        out.insert("success".into(), json!(false));
        out.insert(
            "error".into(),
            json!("Unknown command: undefined (the command has no \"type\")"),
        );
        events.out().send(&Value::Object(out));
        return;
    };
    let respond = |result: Result<Option<Value>, String>| {
        let error = result.as_ref().err().cloned();
        events.out().send(&response(id.as_ref(), &kind, result));
        // pi 0.16 reported failures as `error` events too.
        if let Some(error) = error {
            events.legacy_error(&error);
        }
    };
    let fields = Fields(&frame);
    match kind.as_str() {
        "prompt" => {
            // A prompt sent while a compaction runs (after a run's `agent_end`) waits for it.
            session.shared().wait_compaction().await;
            let behavior = match fields.opt_string("streamingBehavior") {
                Ok(None) => None,
                Ok(Some("followUp")) => Some(StreamingBehavior::FollowUp),
                Ok(Some(_)) => Some(StreamingBehavior::Steer),
                Err(err) => return respond(Err(err)),
            };
            let parsed = fields
                .string("message")
                .and_then(|m| Ok((m, fields.images()?)));
            let (message, images) = match parsed {
                Ok(parsed) => parsed,
                Err(err) => return respond(Err(err)),
            };
            let Some((message, images)) = to_model(&session, message, images, &respond).await else {
                return;
            };
            match session.prompt(&message, images, behavior) {
                Ok(run) => {
                    respond(Ok(None));
                    if let Some(run) = run {
                        run.start();
                    }
                }
                Err(err) => respond(Err(err)),
            }
        }
        "steer" | "follow_up" => {
            let behavior = if kind == "steer" {
                StreamingBehavior::Steer
            } else {
                StreamingBehavior::FollowUp
            };
            match fields
                .string("message")
                .and_then(|m| Ok((m, fields.images()?)))
            {
                Ok((message, images)) => {
                    let message = session.expand(message).await;
                    session.enqueue(&message, images, behavior);
                    respond(Ok(None));
                }
                Err(err) => respond(Err(err)),
            }
        }
        "abort" => {
            session.abort().await;
            respond(Ok(None));
        }
        "abort_and_prompt" => match fields
            .string("message")
            .and_then(|m| Ok((m, fields.images()?)))
        {
            Ok((message, images)) => {
                session.abort().await;
                let Some((message, images)) = to_model(&session, message, images, &respond).await
                else {
                    return;
                };
                match session.prompt(&message, images, Some(StreamingBehavior::Steer)) {
                    Ok(run) => {
                        respond(Ok(None));
                        if let Some(run) = run {
                            run.start();
                        }
                    }
                    Err(err) => respond(Err(err)),
                }
            }
            Err(err) => respond(Err(err)),
        },
        "new_session" => match fields.opt_string("parentSession") {
            Ok(parent) => respond(Ok(Some(session.new_session(parent).await))),
            Err(err) => respond(Err(err)),
        },
        "get_state" => respond(Ok(Some(session.state_json()))),
        "get_messages" => respond(Ok(Some(session.messages_json()))),
        "get_session_stats" => respond(Ok(Some(session.stats_json()))),
        "get_last_assistant_text" => respond(Ok(Some(session.last_assistant_text()))),
        "get_available_models" => respond(Ok(Some(session.available_models()))),
        "set_model" => respond(
            fields
                .string("provider")
                .and_then(|p| Ok((p, fields.string("modelId")?)))
                .and_then(|(p, m)| session.set_model(p, m))
                .map(Some),
        ),
        "cycle_model" => respond(Ok(Some(session.cycle_model()))),
        "set_thinking_level" => match fields.string("level") {
            Ok(level) => {
                session
                    .set_thinking_level(ThinkingLevel::parse(level).unwrap_or(ThinkingLevel::Off));
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "cycle_thinking_level" => respond(Ok(Some(session.cycle_thinking_level()))),
        "set_steering_mode" | "set_follow_up_mode" => {
            match fields.one_of("mode", &["all", "one-at-a-time"]) {
                Ok(mode) => {
                    let mode = QueueMode::parse(mode);
                    if kind == "set_steering_mode" {
                        session.set_steering_mode(mode)
                    } else {
                        session.set_follow_up_mode(mode)
                    }
                    respond(Ok(None));
                }
                Err(err) => respond(Err(err)),
            }
        }
        "set_interrupt_mode" => match fields.one_of("mode", &["immediate", "wait"]) {
            Ok(mode) => {
                session.set_interrupt_mode(if mode == "wait" {
                    InterruptMode::Wait
                } else {
                    InterruptMode::Immediate
                });
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "set_auto_compaction" => match fields.boolean("enabled") {
            Ok(enabled) => {
                session.set_auto_compaction(enabled);
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "set_auto_retry" => match fields.boolean("enabled") {
            Ok(enabled) => {
                session.set_auto_retry(enabled);
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "abort_retry" => {
            session.abort_retry();
            respond(Ok(None));
        }
        "set_session_name" => respond(
            fields
                .string("name")
                .and_then(|name| session.set_session_name(name))
                .map(|()| None),
        ),
        "set_host_tools" => respond(
            fields
                .parse("tools")
                .and_then(|tools| session.set_host_tools(tools))
                .map(Some),
        ),
        "set_event_filter" => respond(event_filter(&fields).map(|filter| {
            let data = json!({
                "events": filter.events,
                "messageUpdates": if filter.updates == UpdateMode::Delta { "delta" } else { "full" },
            });
            events.set_filter(filter);
            Some(data)
        })),
        "bash" => match fields.string("command") {
            Ok(command) => respond(session.bash(command).await.map(Some)),
            Err(err) => respond(Err(err)),
        },
        "abort_bash" => {
            // Answered before the kill, so the `bash` response (which the kill releases)
            // always comes after it, as in pi.
            respond(Ok(None));
            session.abort_bash();
        }
        "get_commands" => respond(Ok(Some(session.commands_json()))),
        "get_plugins" => respond(Ok(Some(session.plugins_json()))),
        "get_available_thinking_levels" => respond(Ok(Some(session.available_thinking_levels()))),
        "get_entries" => respond(
            fields
                .opt_string("since")
                .and_then(|since| session.entries_json(since))
                .map(Some),
        ),
        "get_tree" => respond(Ok(Some(session.tree_json()))),
        "set_todos" => respond(match frame.get("phases") {
            Some(phases) => session.set_todos(phases).map(Some),
            None => Err("Missing required field \"phases\"".into()),
        }),
        "clone" => respond(session.clone_session().await.map(Some)),
        "get_fork_messages" => respond(Ok(Some(session.fork_messages()))),
        "get_branch_messages" => respond(Ok(Some(session.branch_messages()))),
        "switch_session" => match fields.string("sessionPath") {
            Ok(path) => respond(session.switch_session(path).await.map(Some)),
            Err(err) => respond(Err(err)),
        },
        "fork" | "branch" => {
            // pi 0.16's `branch` named the message by its position (`entryIndex`).
            let entry = match (kind.as_str(), frame.get("entryIndex")) {
                ("branch", Some(index)) => match index.as_u64() {
                    Some(index) => session.entry_at(index),
                    None => Err("Field \"entryIndex\" must be a non-negative integer".into()),
                },
                _ => fields.string("entryId").map(str::to_string),
            };
            match entry {
                Ok(id) => respond(session.fork(&id).await.map(Some)),
                Err(err) => respond(Err(err)),
            }
        }
        "reset" => {
            let outcome = session.new_session(None).await;
            if outcome["cancelled"] == true {
                respond(Err("Reset cancelled by an extension".into()))
            } else {
                respond(Ok(None))
            }
        }
        "queue_message" => match fields
            .string("message")
            .and_then(|m| Ok((m, fields.images()?)))
        {
            Ok((message, images)) => {
                let message = session.expand(message).await;
                session.enqueue(&message, images, StreamingBehavior::FollowUp);
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "set_queue_mode" => match fields.one_of("mode", &["all", "one-at-a-time"]) {
            Ok(mode) => {
                session.set_follow_up_mode(QueueMode::parse(mode));
                respond(Ok(None));
            }
            Err(err) => respond(Err(err)),
        },
        "set_legacy_events" => match fields.boolean("enabled") {
            Ok(enabled) => {
                events.set_legacy(enabled);
                respond(Ok(Some(json!({"enabled": enabled}))));
            }
            Err(err) => respond(Err(err)),
        },
        "export_html" => respond(fields.opt_string("outputPath").and_then(|path| session.export_html(path)).map(Some)),
        "compact" => match fields.opt_string("customInstructions") {
            Ok(instructions) => respond(session.compact(instructions).await.map(Some)),
            Err(err) => respond(Err(err)),
        },
        _ => respond(Err(format!("Unknown command: {kind}"))),
    }
}

/// Runs a prompt's text through extension commands and the `input` hook (answering the
/// command when that is the end of it) and returns what goes to the model.
async fn to_model(
    session: &Session,
    message: &str,
    images: Vec<Content>,
    respond: &impl Fn(Result<Option<Value>, String>),
) -> Option<(String, Vec<Content>)> {
    match session.process_input(message, images).await {
        Input::Command { slot, name, args } => {
            // Extension commands run at once, even while a run streams.
            respond(Ok(None));
            session
                .shared()
                .extensions
                .run_command(&slot, &name, &args)
                .await;
            None
        }
        Input::Handled => {
            respond(Ok(None));
            None
        }
        Input::Prompt { text, images } => Some((text, images)),
    }
}

/// `set_event_filter`: `{"events": [..] | null, "messageUpdates"?: "full" | "delta"}`.
fn event_filter(fields: &Fields<'_>) -> Result<EventFilter, String> {
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
        None | Some("full") => UpdateMode::Full,
        Some("delta") => UpdateMode::Delta,
        Some(other) => {
            return Err(format!(
                "Field \"messageUpdates\" must be one of \"full\", \"delta\", got \"{other}\""
            ));
        }
    };
    Ok(EventFilter { events, updates })
}
