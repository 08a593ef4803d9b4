//! A port of pi's `examples/extensions/jev-router.ts`: the virtual model `jev/auto`, which plans
//! on a strong OpenAI Codex model and implements on a cheap one.
//!
//! - Planning: `gpt-5.6-sol` for complex work, `gpt-5.6-terra` otherwise; planning stays on the
//!   chosen model.
//! - Implementation: `gpt-5.6-luna`. After the first successful `edit` or `write` of a turn, the
//!   next request goes to Luna, and the session stays there (one prompt-cache miss).
//! - The phase is router state, kept on the session branch; requests outside the run (a
//!   compaction summary) go to Luna.
//!
//! Difference from pi: pi rates the first prompt with the Jev classifier
//! (`modelRegistry.findOfType("classifier", "typesafe", "jev-latest")`) when it has one; pith has
//! no classifier models, so the port plans on Terra, as pi does without the classifier.

use pith_sdk::extension::entries::AgentMessage;
use pith_sdk::extension::*;

const PROVIDER: &str = "openai-codex";
const SOL: &str = "gpt-5.6-sol";
const TERRA: &str = "gpt-5.6-terra";
const LUNA: &str = "gpt-5.6-luna";

/// Tools whose successful result means implementation has started.
const EDIT_TOOLS: [&str; 2] = ["edit", "write"];

struct JevRouter;

/// The router state: the phase and the model of the phase, in pi's key order.
fn state(phase: &str, model: &str) -> String {
    format!("{{\"phase\":\"{phase}\",\"model\":\"{model}\"}}")
}

fn route_to(request: &RouteRequest, id: &str, state: Option<String>) -> Result<ModelRoute, String> {
    if models::find(PROVIDER, id).is_none() {
        return Err(format!("Model {PROVIDER}/{id} is not in the catalog"));
    }
    let route = ModelRoute::to(PROVIDER, id, request.thinking_level);
    Ok(match state {
        Some(state) => route.with_state(&state),
        None => route,
    })
}

/// Whether a tool call since the last user message edited a file successfully.
fn edited_this_turn(messages: &[AgentMessage]) -> bool {
    let last_user = messages
        .iter()
        .rposition(|m| matches!(m, AgentMessage::User(_)))
        .map_or(0, |at| at + 1);
    messages[last_user..].iter().any(|m| {
        matches!(m, AgentMessage::ToolResult(result)
            if EDIT_TOOLS.contains(&result.tool_name.as_str()) && !result.is_error)
    })
}

/// The planning model of a new session: one the session already plans on (no cache miss), else
/// Terra (pith has no Jev classifier to pick Sol with).
fn planning_model(request: &RouteRequest) -> &'static str {
    match &request.previous {
        Some(previous) if previous.model.provider == PROVIDER && previous.model.id == SOL => SOL,
        _ => TERRA,
    }
}

impl Extension for JevRouter {
    fn new() -> Self {
        JevRouter
    }

    fn describe(&self) -> ExtensionInfo {
        use ThinkingLevel::*;
        ExtensionInfo::new("jev-router").virtual_model(
            VirtualModelSpec::new("jev", "auto", "Auto (Jev)")
                .thinking_levels(&[Low, Medium, High, Xhigh])
                // Shared by all three models; shown before the first response.
                .limits(272_000, 128_000),
        )
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        let Event::ModelRoute(request) = event else {
            return Ok(EventResult::Continue);
        };
        if request.reason == RouteReason::Direct {
            return route_to(&request, LUNA, None).map(EventResult::Route);
        }
        let current: Option<serde_json::Value> = request
            .state
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok());
        let route = match current {
            None => {
                let model = planning_model(&request);
                route_to(&request, model, Some(state("planning", model)))
            }
            // The planning model made the first edit: hand the rest of the work to Luna.
            Some(current)
                if current["phase"] == "planning" && edited_this_turn(&request.messages) =>
            {
                route_to(&request, LUNA, Some(state("implementation", LUNA)))
            }
            Some(current) => {
                let model = current["model"].as_str().unwrap_or(LUNA).to_string();
                route_to(&request, &model, None)
            }
        };
        route.map(EventResult::Route)
    }
}

pith_sdk::export_extension!(JevRouter);
