//! Requests of a virtual model (pi's `registerVirtualModel`): before each one, the extension
//! that registered the model picks the physical model and thinking level it goes to, told why
//! (`reason`), what answered last (`previous`), what failed (`failed`, for a retry) and the
//! router state it left on this session branch (pi's `pi.virtual-model-state` custom entries,
//! which follow the session tree and survive compaction).

use serde_json::{Value, json};

use crate::agent::conversation::message::{AgentMessage, AssistantMessage, StopReason};
use crate::agent::event::SessionEvent;
use crate::agent::extensions::hooks::{FailedRequest, RouteReason, RouteRequest, RoutedModel};
use crate::agent::extensions::typed;
use crate::agent::session::shared::Shared;
use crate::model::{Model, ThinkingLevel};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::entries;
use crate::plugin_host::imports::models::model_info;

/// The custom entry type that keeps router state on the session branch (pi's).
pub const STATE_ENTRY: &str = "pi.virtual-model-state";

/// Where a request goes: a physical model and the thinking level (clamped to it).
#[derive(Debug, Clone)]
pub struct Route {
    /// The physical model.
    pub model: Model,
    /// The thinking level it is asked with.
    pub thinking: ThinkingLevel,
}

/// Why a request of the session's model is made: `retry` after a failed request, `user` when
/// a message the user wrote came since the last answer, else `continuation` (pi's).
pub fn reason_of(messages: &[AgentMessage], retrying: bool) -> RouteReason {
    if retrying {
        return RouteReason::Retry;
    }
    let since_answer = messages
        .iter()
        .rposition(|m| matches!(m, AgentMessage::Assistant(_)))
        .map_or(0, |at| at + 1);
    if messages[since_answer..]
        .iter()
        .any(|m| matches!(m, AgentMessage::User(_)))
    {
        RouteReason::User
    } else {
        RouteReason::Continuation
    }
}

/// Routes a request of the virtual model `selected` (selected with `thinking`) for
/// `messages`. The error ends the request with pi's texts: the model is not registered, the
/// router failed, or it chose a model that is virtual, unknown or without credentials.
pub async fn route(
    shared: &Shared,
    selected: &Model,
    thinking: ThinkingLevel,
    messages: &[AgentMessage],
    reason: RouteReason,
    failed: Option<AssistantMessage>,
) -> Result<Route, String> {
    let name = format!("Virtual model {}/{}", selected.provider, selected.id);
    let registry = shared.models();
    let physical = |provider: &str, id: &str| {
        registry
            .find(provider, id)
            .filter(|model| !model.is_virtual())
    };
    let previous = latest_response(messages).and_then(|answer| {
        physical(&answer.provider, &answer.model).map(|model| RoutedModel {
            model: model_info(&model),
            thinking_level: level_of(answer),
        })
    });
    let failed = failed.and_then(|message| {
        let model = physical(&message.provider, &message.model)?;
        Some(FailedRequest {
            model: model_info(&model),
            thinking_level: level_of(&message),
            message: assistant_record(message)?,
        })
    });
    let direct = reason == RouteReason::Direct;
    let state = (!direct).then(|| stored_state(shared, selected)).flatten();
    let request = RouteRequest {
        model: model_info(selected),
        thinking_level: thinking.into(),
        reason,
        previous,
        failed,
        state: state.as_ref().map(Value::to_string),
        messages: messages.iter().map(typed::message).collect(),
    };
    let not_registered = || format!("{name} is not registered.");
    let router = registry
        .router(&selected.provider, &selected.id)
        .ok_or_else(not_registered)?;
    let answer = shared
        .extensions
        .route(router, request)
        .await
        .ok_or_else(not_registered)??;
    let routed = format!("{name} routed to {}/{}", answer.provider, answer.id);
    let target = physical(&answer.provider, &answer.id)
        .ok_or_else(|| format!("{routed}, which is not a physical model."))?;
    if !registry.has_key(&target.provider) {
        return Err(format!("{routed}, which has no credentials."));
    }
    if !direct && let Some(new_state) = answer.state {
        store_state(shared, selected, &new_state, state.as_ref())?;
    }
    Ok(Route {
        thinking: ThinkingLevel::from(answer.thinking_level).clamp(&target),
        model: target,
    })
}

/// The latest successful answer (failed and aborted ones are skipped).
fn latest_response(messages: &[AgentMessage]) -> Option<&AssistantMessage> {
    messages.iter().rev().find_map(|message| match message {
        AgentMessage::Assistant(answer)
            if !matches!(answer.stop_reason, StopReason::Error | StopReason::Aborted) =>
        {
            Some(answer)
        }
        _ => None,
    })
}

fn level_of(
    answer: &AssistantMessage,
) -> Option<crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ThinkingLevel> {
    answer
        .thinking_level
        .as_deref()
        .and_then(ThinkingLevel::parse)
        .map(Into::into)
}

fn assistant_record(message: AssistantMessage) -> Option<entries::AssistantMessage> {
    match typed::message(&AgentMessage::Assistant(message)) {
        entries::AgentMessage::Assistant(record) => Some(record),
        _ => None,
    }
}

/// The router state last stored on this branch for `model`.
fn stored_state(shared: &Shared, model: &Model) -> Option<Value> {
    let state = shared.state();
    state.branch_entries().into_iter().rev().find_map(|entry| {
        if entry.kind() != "custom" {
            return None;
        }
        let mut entry = state.entry_body(entry);
        let data = entry.remove("data")?;
        (entry.get("type") == Some(&json!("custom"))
            && entry.get("customType") == Some(&json!(STATE_ENTRY))
            && data.get("provider") == Some(&json!(model.provider))
            && data.get("modelId") == Some(&json!(model.id)))
        .then(|| data.get("state").cloned().unwrap_or(Value::Null))
    })
}

/// Stores `state` (JSON text) for `model` on the branch, before the request is sent. The
/// current state handed back unchanged is kept, not stored again (pi keeps `request.state`
/// returned as it is; a component cannot return the same object, only an equal one).
fn store_state(
    shared: &Shared,
    model: &Model,
    state: &str,
    current: Option<&Value>,
) -> Result<(), String> {
    let state: Value = serde_json::from_str(state).map_err(|err| {
        format!(
            "Virtual model {}/{}: the router's state is not JSON ({err})",
            model.provider, model.id
        )
    })?;
    if current == Some(&state) {
        return Ok(());
    }
    let fields = json!({
        "customType": STATE_ENTRY,
        "data": {"provider": model.provider, "modelId": model.id, "state": state},
    });
    let Value::Object(fields) = fields else {
        return Ok(());
    };
    let entry = shared.state().append_entry("custom", fields);
    shared.emit(&SessionEvent::EntryAppended { entry });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::message::{UserContent, UserMessage};

    fn user() -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(Vec::new()),
            timestamp: 0,
        })
    }

    fn answer() -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage::empty("faux", "faux", "faux-model"))
    }

    #[test]
    fn the_reason_is_pi_s() {
        assert_eq!(reason_of(&[user()], false), RouteReason::User);
        assert_eq!(
            reason_of(&[user(), answer()], false),
            RouteReason::Continuation
        );
        assert_eq!(
            reason_of(&[user(), answer(), user()], false),
            RouteReason::User
        );
        assert_eq!(reason_of(&[user()], true), RouteReason::Retry);
    }
}
