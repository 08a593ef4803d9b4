//! Tools and commands the host runs: host tools, the user's `bash`, and the todo list.

use super::{Command, data_of, rendered};

/// Answers the tool commands; false for any other.
pub(super) async fn handle(command: &Command<'_>) -> bool {
    let (session, fields) = (command.session, &command.fields);
    match command.kind {
        "set_host_tools" => command.respond(
            fields
                .parse("tools")
                .and_then(|tools| rendered(session.set_host_tools(tools)))
                .map(data_of),
        ),
        "get_tools" => command.data(session.tools()),
        "reload" => command.data(session.reload().await),
        "get_argument_completions" => match fields
            .string("commandName")
            .and_then(|name| Ok((name, fields.opt_string("argumentPrefix")?)))
        {
            Ok((name, prefix)) => command.respond(
                session
                    .argument_completions(name, prefix.unwrap_or(""))
                    .await
                    .map(data_of),
            ),
            Err(err) => command.respond(Err(err)),
        },
        "set_active_tools" => command.respond(
            fields
                .parse("names")
                .and_then(|names| rendered(session.set_active_tools(names)))
                .map(data_of),
        ),
        "bash" => match fields
            .string("command")
            .and_then(|line| Ok((line, fields.opt_boolean("excludeFromContext")?)))
        {
            Ok((line, exclude)) => {
                let id = command.id();
                let streamed = |delta: &str| command.events.bash_output(id, delta);
                let result = session
                    .bash(line, exclude.unwrap_or(false), &streamed)
                    .await;
                command.respond(result.map(data_of))
            }
            Err(err) => command.respond(Err(err)),
        },
        "abort_bash" => {
            // Answered before the kill, so the `bash` response (which the kill releases)
            // always comes after it, as in pi.
            command.ok();
            session.abort_bash();
        }
        "set_todos" => command.respond(match command.frame.get("phases") {
            Some(phases) => rendered(session.set_todos(phases)).map(data_of),
            None => Err("Missing required field \"phases\"".into()),
        }),
        _ => return false,
    }
    true
}
