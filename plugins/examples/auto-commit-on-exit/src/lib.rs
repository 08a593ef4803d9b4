//! A port of pi's `examples/extensions/auto-commit-on-exit.ts`: when the session ends, the
//! workspace's changes are committed, with the first line of the last answer as the message.

use pith_sdk::extension::*;
use pith_sdk::process::exec;

struct AutoCommit;

impl Extension for AutoCommit {
    fn new() -> Self {
        AutoCommit
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("auto-commit-on-exit").on(&["session_shutdown"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        if let Event::SessionShutdown(_) = event {
            commit();
        }
        Ok(EventResult::Continue)
    }
}

/// Commits the changes, if the workspace is a git repository with any.
fn commit() {
    let Ok(status) = exec("git", &["status", "--porcelain"], None) else {
        return;
    };
    if status.code != 0 || status.stdout.trim().is_empty() {
        // Not a git repository, or nothing changed.
        return;
    }
    let first_line = last_answer()
        .lines()
        .next()
        .map(str::to_string)
        .filter(|line| !line.is_empty())
        .unwrap_or_else(|| "Work in progress".into());
    let short: String = first_line.chars().take(50).collect();
    let more = if first_line.chars().count() > 50 {
        "..."
    } else {
        ""
    };
    let message = format!("[pi] {short}{more}");
    let _ = exec("git", &["add", "-A"], None);
    if exec("git", &["commit", "-m", &message], None).is_ok_and(|commit| commit.code == 0) {
        ui::notify(
            &format!("Auto-committed: {message}"),
            Some(ui::NotifyKind::Info),
        );
    }
}

/// The text of the session's last answer.
fn last_answer() -> String {
    use entries::{AgentMessage, EntryBody};
    session_read::all_entries()
        .into_iter()
        .rev()
        .find_map(|entry| match entry.body {
            EntryBody::Message(AgentMessage::Assistant(answer)) => Some(
                answer
                    .content
                    .into_iter()
                    .filter_map(|block| match block {
                        pith_sdk::types::AssistantBlock::Text(text) => Some(text.text),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

pith_sdk::export_extension!(AutoCommit);
