//! A port of pi's `file-trigger` example: from the session's start it watches a trigger file
//! (`/tmp/agent-trigger.txt`, outside the workspace: its folder is granted with `dirs`), and
//! whatever is written there is sent to the model as an `External trigger: …` message that
//! starts a turn; the file is then cleared.
//!
//! ```text
//! echo "Run the tests" > /tmp/agent-trigger.txt
//! ```

use pith_sdk::extension::*;

/// The trigger file pi's example watches.
const TRIGGER_FILE: &str = "/tmp/agent-trigger.txt";

struct FileTrigger {
    file: String,
}

impl FileTrigger {
    /// Sends the file's text, if any, and clears it (a file not there yet is skipped).
    fn fire(&self) {
        let Ok(text) = std::fs::read_to_string(&self.file) else {
            return;
        };
        let content = text.trim();
        if content.is_empty() {
            return;
        }
        let message = CustomMessage {
            custom_type: "file-trigger".into(),
            content: vec![Content::Text(format!("External trigger: {content}"))],
            display: true,
            details: None,
        };
        session::send_message(&message, None, true);
        let _ = std::fs::write(&self.file, "");
    }
}

impl Extension for FileTrigger {
    fn new() -> Self {
        let file = pith_sdk::host::config("trigger-file")
            .ok()
            .flatten()
            .unwrap_or_else(|| TRIGGER_FILE.to_string());
        FileTrigger { file }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("file-trigger").on(&["session_start"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::SessionStart(_) => {
                wake_ups::watch("trigger", &self.file)?;
                if session_read::has_ui() {
                    ui::notify(
                        &format!("Watching {}", self.file),
                        Some(ui::NotifyKind::Info),
                    );
                }
            }
            Event::FileChange(_) => self.fire(),
            _ => {}
        }
        Ok(EventResult::Continue)
    }
}

pith_sdk::export_extension!(FileTrigger);
