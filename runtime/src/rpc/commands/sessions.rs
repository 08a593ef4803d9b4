//! The session's lifecycle: new, switch, fork, clone, moves in the tree and labels, reset, name,
//! compaction and export; and
//! the sessions on disk (`list_sessions`, `delete_session`).

use super::{Command, data_of, rendered};

/// Answers the session commands; false for any other.
pub(super) async fn handle(command: &Command<'_>) -> bool {
    let (session, fields) = (command.session, &command.fields);
    match command.kind {
        "new_session" => match fields.opt_string("parentSession") {
            Ok(parent) => command.data(session.new_session(parent).await),
            Err(err) => command.respond(Err(err)),
        },
        "list_sessions" => command.respond(
            fields
                .opt_string("scope")
                .and_then(|scope| Ok((scope, fields.opt_u64("limit")?)))
                .and_then(|(scope, limit)| Ok((scope, limit, fields.opt_string("cursor")?)))
                .and_then(|(scope, limit, cursor)| {
                    rendered(session.list_sessions(scope, limit, cursor))
                })
                .map(data_of),
        ),
        "delete_session" => command.respond(
            fields
                .string("path")
                .and_then(|path| rendered(session.delete_session(path)))
                .map(data_of),
        ),
        "switch_session" => match fields.string("sessionPath") {
            Ok(path) => command.respond(command.slot.switch_session(path).await.map(data_of)),
            Err(err) => command.respond(Err(err)),
        },
        "fork" | "branch" => {
            // pi 0.16's `branch` named the message by its position (`entryIndex`).
            let entry = match (command.kind, command.frame.get("entryIndex")) {
                ("branch", Some(index)) => match index.as_u64() {
                    Some(index) => rendered(session.entry_at(index)),
                    None => Err("Field \"entryIndex\" must be a non-negative integer".into()),
                },
                _ => fields.string("entryId").map(str::to_string),
            };
            match entry {
                Ok(id) => command.respond(session.fork(&id).await.map(data_of)),
                Err(err) => command.respond(Err(err)),
            }
        }
        "clone" => command.respond(session.clone_session().await.map(data_of)),
        "navigate_tree" => match fields.string("entryId") {
            Ok(id) => command.respond(session.navigate_tree(id).await.map(data_of)),
            Err(err) => command.respond(Err(err)),
        },
        "set_entry_label" => command.respond(
            fields
                .string("entryId")
                .and_then(|id| Ok((id, fields.opt_string("label")?)))
                .and_then(|(id, label)| rendered(session.set_entry_label(id, label)))
                .map(|()| None),
        ),
        "reset" => {
            let outcome = session.new_session(None).await;
            if outcome.cancelled {
                command.respond(Err("Reset cancelled by an extension"))
            } else {
                command.ok()
            }
        }
        "set_session_name" => command.respond(
            fields
                .string("name")
                .and_then(|name| rendered(session.set_session_name(name)))
                .map(|()| None),
        ),
        "compact" => match fields.opt_string("customInstructions") {
            Ok(instructions) => command.respond(session.compact(instructions).await.map(data_of)),
            Err(err) => command.respond(Err(err)),
        },
        "export_html" => command.respond(
            fields
                .opt_string("outputPath")
                .and_then(|path| crate::export::export_session(session, path))
                .map(data_of),
        ),
        _ => return false,
    }
    true
}
