//! Prompting: `prompt`, `steer`, `follow_up`, `abort`, `abort_and_prompt` and pi 0.16's
//! `queue_message`.

use super::Command;
use crate::agent::session::StreamingBehavior;
use crate::agent::session::submit::{Disposition, Submission};
use crate::content::Content;

/// Answers the prompting commands; false for any other.
pub(super) async fn handle(command: &Command<'_>) -> bool {
    let session = command.session;
    match command.kind {
        "prompt" => {
            let behavior = match command.fields.opt_string("streamingBehavior") {
                Ok(None) => None,
                Ok(Some("followUp")) => Some(StreamingBehavior::FollowUp),
                Ok(Some(_)) => Some(StreamingBehavior::Steer),
                Err(err) => {
                    command.respond(Err(err));
                    return true;
                }
            };
            match message(command) {
                Ok((text, images, id)) => start(command, text, images, behavior, id).await,
                Err(err) => command.respond(Err(err)),
            }
        }
        "steer" | "follow_up" | "queue_message" => {
            let behavior = if command.kind == "steer" {
                StreamingBehavior::Steer
            } else {
                StreamingBehavior::FollowUp
            };
            match message(command) {
                Ok((text, images, id)) => {
                    let text = session.expand(text).await;
                    session.enqueue(&text, images, behavior, id);
                    command.data(disposition("queued"));
                }
                Err(err) => command.respond(Err(err)),
            }
        }
        "remove_queued" => command.with(command.fields.string("clientMessageId"), |id| {
            command.respond(session.remove_queued(id).map(|()| None))
        }),
        "abort" => {
            session.abort().await;
            command.ok();
        }
        // For hosts that cannot close stdin (Erlang ports): end the run, answer, then stop
        // reading; the output is flushed and pith exits 0.
        "shutdown" => {
            session.abort().await;
            command.ok();
            command.events.request_shutdown();
        }
        "abort_and_prompt" => match message(command) {
            Ok((text, images, id)) => {
                session.abort().await;
                start(command, text, images, Some(StreamingBehavior::Steer), id).await;
            }
            Err(err) => command.respond(Err(err)),
        },
        _ => return false,
    }
    true
}

/// pi 1.5's answer to a prompt: whether it `started` a run, was `queued` behind the running
/// one, or was `handled` without the model (an extension command or input hook).
fn disposition(how: &str) -> serde_json::Value {
    serde_json::json!({ "disposition": how })
}

/// The command's `message`, `images` and `clientMessageId` (the host's id for the message,
/// echoed in `queue_update` and `message_start`).
fn message<'a>(command: &Command<'a>) -> Result<(&'a str, Vec<Content>, Option<String>), String> {
    let text = command.fields.string("message")?;
    let id = command.fields.opt_string("clientMessageId")?;
    Ok((text, command.fields.images()?, id.map(str::to_string)))
}

/// Sends a prompt through the session's one prompt path ([`Session::submit`]); the response
/// goes out before the run's first event, and before an extension command runs.
///
/// [`Session::submit`]: crate::agent::session::Session::submit
async fn start(
    command: &Command<'_>,
    text: &str,
    images: Vec<Content>,
    behavior: Option<StreamingBehavior>,
    client_id: Option<String>,
) {
    let submission = Submission {
        text: text.to_string(),
        images,
        behavior,
        client_id,
    };
    match command.session.submit(submission).await {
        Ok(Disposition::Command(call)) => {
            // Extension commands run at once, even while a run streams; the answer comes once
            // the command has returned, as pi's (its notices before it).
            call.run(command.session).await;
            command.data(disposition("handled"));
        }
        Ok(Disposition::Started(run)) => {
            command.data(disposition("started"));
            run.start();
        }
        Ok(other) => command.data(disposition(other.as_str())),
        Err(err) => command.respond(Err(err.to_string())),
    }
}
