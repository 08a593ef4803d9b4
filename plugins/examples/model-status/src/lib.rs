//! A port of pi's `examples/extensions/model-status.ts`: shows model changes. On each
//! `model_select` it notifies `Model: <provider>/<id>` (unless the session restored its own
//! model), sets the `model` status to `🤖 <id>`, and logs
//! `[model_select] <previous> → <next> (<source>)`.
//!
//! Difference from pi: pi's `console.log` line goes to stderr as is in RPC mode; pith discards
//! a plugin's stdout, so the port writes the line to pith's log at `info` level (stderr, tagged
//! with the plugin; shown with `PITH_LOG=info`).

use pith_sdk::extension::*;

struct ModelStatus;

/// pi's name of a `model_select` source.
fn source_name(source: ModelSelectSource) -> &'static str {
    match source {
        ModelSelectSource::Set => "set",
        ModelSelectSource::Cycle => "cycle",
        ModelSelectSource::Restore => "restore",
    }
}

impl Extension for ModelStatus {
    fn new() -> Self {
        ModelStatus
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("model-status").on(&["model_select"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        let Event::ModelSelect(select) = event else {
            return Ok(EventResult::Continue);
        };
        let model = &select.model;
        let next = format!("{}/{}", model.provider, model.id);
        let prev = select.previous_model.as_ref().map_or_else(
            || "none".to_string(),
            |m| format!("{}/{}", m.provider, m.id),
        );

        // Show a notification on change.
        if !matches!(select.source, ModelSelectSource::Restore) {
            ui::notify(&format!("Model: {next}"), Some(ui::NotifyKind::Info));
        }

        // Update the status bar with the current model.
        ui::set_status("model", Some(&format!("🤖 {}", model.id)));

        // Log the change's details (pi's `console.log`, visible in debug output).
        pith_sdk::host::info(&format!(
            "[model_select] {prev} → {next} ({})",
            source_name(select.source)
        ));
        Ok(EventResult::Continue)
    }
}

pith_sdk::export_extension!(ModelStatus);
