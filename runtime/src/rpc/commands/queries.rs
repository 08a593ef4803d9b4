//! Read-only queries of the session.

use super::Command;

/// Answers the queries; false for any other command.
pub(super) fn handle(command: &Command<'_>) -> bool {
    let session = command.session;
    let data = match command.kind {
        "get_state" => session.state_json(),
        "get_messages" => session.messages_json(),
        "get_session_stats" => session.stats_json(),
        "get_last_assistant_text" => session.last_assistant_text(),
        "get_fork_messages" => session.fork_messages(),
        "get_branch_messages" => session.branch_messages(),
        "get_tree" => session.tree_json(),
        "get_commands" => session.commands_json(),
        "get_plugins" => session.plugins_json(),
        "get_entries" => {
            command.respond(
                command
                    .fields
                    .opt_string("since")
                    .and_then(|since| session.entries_json(since))
                    .map(Some),
            );
            return true;
        }
        _ => return false,
    };
    command.data(data);
    true
}
