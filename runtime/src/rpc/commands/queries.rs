//! Read-only queries of the session.

use serde_json::{Value, json};

use super::{Command, as_json, data_of, rendered};
use crate::agent::session::Session;
use crate::agent::session::answers::MessageList;
use crate::rpc::events::open_dialog_frames;
use crate::rpc::profile::Protocol;

/// `get_pending_ui_requests`: every open dialog as its `extension_ui_request` frame was sent,
/// with `remainingMs` when it has a timeout, oldest first.
fn pending_ui_requests(session: &Session) -> Value {
    json!({ "requests": open_dialog_frames(session) })
}

/// Answers the queries; false for any other command.
pub(super) fn handle(command: &Command<'_>) -> bool {
    let session = command.session;
    let data = match command.kind {
        "get_messages" if command.events.protocol() == Protocol::Pi15 => {
            command.messages_data(|out| session.write_messages(out));
            return true;
        }
        "get_state" => {
            let mut state = as_json(session.state());
            // A multi-session host's session also says what it holds in memory.
            if command.events.out().is_tagged()
                && let Value::Object(fields) = &mut state
            {
                fields.insert("memory".into(), as_json(session.footprint()));
            }
            state
        }
        "get_messages" => session.with_messages(|messages| as_json(MessageList { messages })),
        "get_session_stats" => as_json(session.stats()),
        "get_last_assistant_text" => as_json(session.last_assistant_text()),
        "get_fork_messages" => as_json(session.fork_messages()),
        "get_branch_messages" => as_json(session.branch_messages()),
        "get_tree" => as_json(session.tree()),
        "get_commands" => as_json(session.commands()),
        "get_plugins" => as_json(session.plugins()),
        "get_pending_ui_requests" => pending_ui_requests(session),
        "get_entries" => {
            command.respond(
                command
                    .fields
                    .opt_string("since")
                    .and_then(|since| rendered(session.entries(since)))
                    .map(data_of),
            );
            return true;
        }
        _ => return false,
    };
    command.data(data);
    true
}
