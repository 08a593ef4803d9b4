//! A port of pi's `examples/extensions/bookmark.ts`: `/bookmark [label]` labels the last answer
//! (the label shows in `get_tree`), `/unbookmark` removes the last label set.

use pith_sdk::extension::*;

struct Bookmark;

impl Extension for Bookmark {
    fn new() -> Self {
        Bookmark
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("bookmark")
            .command(
                "bookmark",
                "Bookmark last message (usage: /bookmark [label])",
            )
            .command("unbookmark", "Remove bookmark from last labeled entry")
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        let entries = session_read::all_entries();
        match name {
            "bookmark" => {
                let label = match args.trim() {
                    "" => format!("bookmark-{}", session_read::session_id()),
                    label => label.to_string(),
                };
                let answer = entries.iter().rev().find(|entry| {
                    matches!(
                        entry.body,
                        entries::EntryBody::Message(entries::AgentMessage::Assistant(_))
                    )
                });
                match answer {
                    Some(entry) => {
                        session_control::set_label(&entry.id, Some(&label))?;
                        ui::notify(
                            &format!("Bookmarked as: {label}"),
                            Some(ui::NotifyKind::Info),
                        );
                    }
                    None => ui::notify(
                        "No assistant message to bookmark",
                        Some(ui::NotifyKind::Warning),
                    ),
                }
                Ok(())
            }
            "unbookmark" => {
                let labelled = entries
                    .iter()
                    .rev()
                    .find_map(|entry| session_read::label(&entry.id).map(|l| (entry, l)));
                match labelled {
                    Some((entry, label)) => {
                        session_control::set_label(&entry.id, None)?;
                        ui::notify(
                            &format!("Removed bookmark: {label}"),
                            Some(ui::NotifyKind::Info),
                        );
                    }
                    None => ui::notify("No bookmarked entry found", Some(ui::NotifyKind::Warning)),
                }
                Ok(())
            }
            other => Err(format!("Unknown command: {other}")),
        }
    }
}

pith_sdk::export_extension!(Bookmark);
