//! A port of pi's `project-trust` example: asked about a project's trust at start-up, it says
//! so (a notice, which goes to stderr: there is no session yet) and, when a user can answer,
//! offers pi's five choices. Headless, as in pi's RPC mode, nobody can answer before the
//! session starts, so it leaves the decision to pith (`undecided`). Once the session starts it
//! says it loaded after the decision.

use pith_sdk::extension::*;

struct ProjectTrust {
    /// How many times the extension was loaded (pi's factory counter): one per instance.
    loads: u32,
}

/// pi's name of a mode (`ctx.mode`).
fn mode_name(mode: session_read::RunMode) -> &'static str {
    match mode {
        session_read::RunMode::Rpc => "rpc",
        session_read::RunMode::Json => "json",
        session_read::RunMode::Print => "print",
        session_read::RunMode::Acp => "acp",
    }
}

fn decision(trusted: TrustAnswer, remember: bool) -> EventResult {
    EventResult::Trust(TrustDecision { trusted, remember })
}

impl ProjectTrust {
    fn trust(&self, asked: ProjectTrustEvent) -> EventResult {
        ui::notify(
            &format!(
                "project_trust fired for {} (mode: {}, load: {})",
                asked.cwd,
                mode_name(asked.mode),
                self.loads
            ),
            Some(ui::NotifyKind::Info),
        );
        if !asked.has_ui {
            return decision(TrustAnswer::Undecided, false);
        }
        let choices = [
            "Trust and remember",
            "Trust with note and remember",
            "Trust this session",
            "Do not trust this session",
            "Let built-in prompt decide",
        ]
        .map(String::from);
        let title = format!("Project trust for:\n{}", asked.cwd);
        match ui::select(&title, &choices, None).as_deref() {
            Some("Trust with note and remember") => {
                let note = ui::input(
                    "Project trust note",
                    Some("Optional note for this demo"),
                    None,
                );
                let said = match note.filter(|n| !n.is_empty()) {
                    Some(note) => format!("Recorded demo note: {note}"),
                    None => "No demo note entered".to_string(),
                };
                ui::notify(&said, Some(ui::NotifyKind::Info));
                decision(TrustAnswer::Yes, true)
            }
            Some("Trust and remember") => decision(TrustAnswer::Yes, true),
            Some("Trust this session") => decision(TrustAnswer::Yes, false),
            Some("Do not trust this session") => decision(TrustAnswer::No, false),
            _ => decision(TrustAnswer::Undecided, false),
        }
    }
}

impl Extension for ProjectTrust {
    fn new() -> Self {
        ProjectTrust { loads: 1 }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("project-trust").on(&["project_trust", "session_start"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::ProjectTrust(asked) => Ok(self.trust(asked)),
            Event::SessionStart(_) => {
                ui::notify(
                    &format!(
                        "project-trust example loaded after trust resolution in {}",
                        session_read::cwd()
                    ),
                    Some(ui::NotifyKind::Info),
                );
                Ok(EventResult::Continue)
            }
            _ => Ok(EventResult::Continue),
        }
    }
}

pith_sdk::export_extension!(ProjectTrust);
