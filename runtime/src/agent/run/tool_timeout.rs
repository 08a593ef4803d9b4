//! The wall-clock limit on one tool call from the settings: `tools.timeoutMs` for every tool
//! and `tools.byName.<tool>.timeoutMs` for one (0: none). A call past its limit is cancelled —
//! its processes killed, what it had reported kept — and ends as a tool error that says which
//! setting stopped it, so a hung tool never holds the run. Without a setting a call is bounded
//! only by its plugin's own limits.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::content::{Content, ToolOutput};
use crate::settings::Settings;

/// How long a cancelled call has to end and report what it has.
const GRACE: Duration = Duration::from_secs(2);

/// The limits per tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolTimeouts {
    default_ms: Option<u64>,
    by_name: BTreeMap<String, u64>,
}

impl ToolTimeouts {
    /// Reads `tools.timeoutMs` and `tools.byName.<tool>.timeoutMs`.
    pub fn from_settings(settings: &Settings) -> ToolTimeouts {
        let by_name = settings
            .get("tools")
            .and_then(|tools| tools.get("byName"))
            .and_then(|by| by.as_object())
            .map(|by| {
                by.iter()
                    .filter_map(|(name, tool)| {
                        Some((name.clone(), tool.get("timeoutMs")?.as_u64()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        ToolTimeouts {
            default_ms: settings.number("tools", "timeoutMs"),
            by_name,
        }
    }

    /// The limit of the tool `name`, if any, and the setting it comes from.
    pub fn for_tool(&self, name: &str) -> Option<(Duration, String)> {
        let (ms, setting) = match self.by_name.get(name) {
            Some(ms) => (*ms, format!("tools.byName.{name}.timeoutMs")),
            None => (self.default_ms?, "tools.timeoutMs".to_string()),
        };
        (ms > 0).then(|| (Duration::from_millis(ms), setting))
    }
}

/// Runs the call `execute` (which stops when its token is cancelled) within the limit of the
/// tool `name`: past it, the token is cancelled and the call ends as an error holding what it
/// had reported within [`GRACE`].
pub async fn run_within<F>(
    timeouts: &ToolTimeouts,
    name: &str,
    cancel: &CancellationToken,
    execute: impl FnOnce(CancellationToken) -> F,
) -> ToolOutput
where
    F: Future<Output = ToolOutput>,
{
    let Some((limit, setting)) = timeouts.for_tool(name) else {
        return execute(cancel.clone()).await;
    };
    let call = cancel.child_token();
    let running = execute(call.clone());
    tokio::pin!(running);
    tokio::select! {
        output = &mut running => output,
        _ = tokio::time::sleep(limit) => {
            call.cancel();
            let partial = tokio::time::timeout(GRACE, &mut running).await.ok();
            timed_out(name, limit, &setting, partial)
        }
    }
}

/// The error of a call stopped at its limit, after the text it had reported.
fn timed_out(
    name: &str,
    limit: Duration,
    setting: &str,
    partial: Option<ToolOutput>,
) -> ToolOutput {
    let mut text = partial.map(|p| p.text()).unwrap_or_default();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&format!(
        "Tool {name} timed out after {} s and was stopped (settings {setting}).",
        limit.as_secs_f64()
    ));
    ToolOutput {
        structured: None,
        content: vec![Content::text(text)],
        details: Some(serde_json::json!({"timedOut": true, "timeoutMs": limit.as_millis() as u64})),
        is_error: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_setting_wins_over_the_default_and_zero_means_none() {
        let settings = Settings::from_value(serde_json::json!({
            "tools": {"timeoutMs": 5000, "byName": {"bash": {"timeoutMs": 60000}, "read": {"timeoutMs": 0}}}
        }));
        let timeouts = ToolTimeouts::from_settings(&settings);
        assert_eq!(
            timeouts.for_tool("bash"),
            Some((
                Duration::from_secs(60),
                "tools.byName.bash.timeoutMs".into()
            ))
        );
        assert_eq!(
            timeouts.for_tool("grep"),
            Some((Duration::from_secs(5), "tools.timeoutMs".into()))
        );
        assert_eq!(timeouts.for_tool("read"), None);
        assert_eq!(ToolTimeouts::default().for_tool("bash"), None);
    }
}
