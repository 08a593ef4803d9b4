//! An example extension: every `bash` call waits for the user's confirmation (an
//! `extension_ui_request` of method `confirm` over RPC). No answer in time means no.

use pith_sdk::extension::*;

/// How long the question waits when the `timeout-ms` config is not set.
const DEFAULT_TIMEOUT_MS: u32 = 60_000;

struct PermissionGate;

impl Extension for PermissionGate {
    fn new() -> Self {
        PermissionGate
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("permission-gate").on(&["tool_call"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        let Event::ToolCall(call) = event else {
            return Ok(EventResult::Continue);
        };
        if call.tool_name != "bash" {
            return Ok(EventResult::Continue);
        }
        let command = call.argument("command").unwrap_or_default();
        let timeout = pith_sdk::host::config("timeout-ms")
            .ok()
            .flatten()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(DEFAULT_TIMEOUT_MS);
        if ui::confirm("Allow bash?", &command, Some(timeout)) {
            Ok(EventResult::Continue)
        } else {
            Ok(EventResult::block(format!(
                "The user did not allow: {command}"
            )))
        }
    }
}

pith_sdk::export_extension!(PermissionGate);
