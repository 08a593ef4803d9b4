//! An example extension with state: it remembers the files the agent writes or edits, and
//! while any are not marked saved (`/saved`) it cancels `new_session`, `switch_session`, `fork`
//! and `navigate_tree`, telling the user why.

use std::collections::BTreeSet;

use pith_sdk::extension::*;

struct SwitchGuard {
    unsaved: BTreeSet<String>,
}

impl SwitchGuard {
    /// Tells the user which files are unsaved and cancels.
    fn refuse(&self) -> EventResult {
        let files: Vec<&str> = self.unsaved.iter().map(String::as_str).collect();
        ui::notify(
            &format!(
                "Unsaved work in {}; run /saved to switch anyway",
                files.join(", ")
            ),
            Some(ui::NotifyKind::Warning),
        );
        EventResult::Cancel
    }
}

impl Extension for SwitchGuard {
    fn new() -> Self {
        SwitchGuard {
            unsaved: BTreeSet::new(),
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo {
            name: "switch-guard".into(),
            events: vec![
                "tool_result".into(),
                "session_before_switch".into(),
                "session_before_fork".into(),
                // Hooks added after the WIT's first version arrive as observed events.
                "session_before_tree".into(),
            ],
            commands: vec![CommandSpec {
                name: "saved".into(),
                description: "Mark the files written so far as saved, allowing session switches"
                    .into(),
            }],
            tools: Vec::new(),
            rules: Vec::new(),
            flags: Vec::new(),
            virtual_models: Vec::new(),
            providers: Vec::new(),
        }
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::ToolResult(result)
                if matches!(result.tool_name.as_str(), "write" | "edit") && !result.is_error =>
            {
                let path = serde_json::from_str::<serde_json::Value>(&result.input)
                    .ok()
                    .and_then(|input| {
                        input
                            .get("path")
                            .and_then(|p| p.as_str())
                            .map(str::to_string)
                    });
                if let Some(path) = path {
                    self.unsaved.insert(path);
                }
                Ok(EventResult::Continue)
            }
            Event::SessionBeforeSwitch(_) | Event::SessionBeforeFork(_)
                if !self.unsaved.is_empty() =>
            {
                Ok(self.refuse())
            }
            Event::Observe((name, _))
                if name == "session_before_tree" && !self.unsaved.is_empty() =>
            {
                Ok(self.refuse())
            }
            _ => Ok(EventResult::Continue),
        }
    }

    fn run_command(&mut self, name: &str, _args: &str) -> Result<(), String> {
        if name != "saved" {
            return Err(format!("Unknown command: {name}"));
        }
        let count = self.unsaved.len();
        self.unsaved.clear();
        ui::notify(&format!("{count} file(s) marked saved"), None);
        Ok(())
    }
}

pith_sdk::export_extension!(SwitchGuard);
