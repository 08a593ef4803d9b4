//! Extensions built for version 0.1 of the extension world, served by the 0.2 host: the
//! engine speaks 0.2, and this turns its events into 0.1's (events 0.1 had no case for arrive
//! as `observe` with pi's JSON, as they did in 0.1) and 0.1's answers into 0.2's.

use std::sync::Arc;

use serde_json::json;

use super::bindings::extension_world::exports::pith::plugin0_1_0::extension as v1;
use super::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension as v2;
use super::bindings::extension_world_v2::pith::plugin0_2_0::agent_events::AgentEvent;

/// pi's name for an agent event.
pub fn agent_kind(event: &AgentEvent) -> &'static str {
    match event {
        AgentEvent::AgentStart => "agent_start",
        AgentEvent::AgentEnd(_) => "agent_end",
        AgentEvent::TurnStart => "turn_start",
        AgentEvent::TurnEnd(_) => "turn_end",
        AgentEvent::MessageStart(_) => "message_start",
        AgentEvent::MessageUpdate(_) => "message_update",
        AgentEvent::MessageEnd(_) => "message_end",
        AgentEvent::ToolExecutionStart(_) => "tool_execution_start",
        AgentEvent::ToolExecutionUpdate(_) => "tool_execution_update",
        AgentEvent::ToolExecutionEnd(_) => "tool_execution_end",
    }
}

/// An event as a 0.1 extension gets it (`pi_json`: the JSON of an agent event, which 0.2 gets
/// typed).
pub fn event(event: v2::Event, pi_json: Option<Arc<str>>) -> v1::Event {
    match event {
        v2::Event::Agent(agent) => {
            let kind = agent_kind(&agent);
            let json = pi_json.map_or_else(|| json!({"type": kind}).to_string(), |j| j.to_string());
            v1::Event::Observe((kind.to_string(), json))
        }
        v2::Event::SessionStart(_) => v1::Event::SessionStart,
        v2::Event::SessionShutdown(shutdown) => {
            let mut json = json!({
                "type": "session_shutdown",
                "reason": shutdown_reason(shutdown.reason),
            });
            if let Some(target) = shutdown.target_session_file {
                json["targetSessionFile"] = target.into();
            }
            observe("session_shutdown", json)
        }
        v2::Event::SessionBeforeSwitch(switch) => {
            v1::Event::SessionBeforeSwitch(v1::BeforeSwitchEvent {
                reason: match switch.reason {
                    v2::SwitchReason::New => v1::SwitchReason::New,
                    v2::SwitchReason::Resume => v1::SwitchReason::Resume,
                },
                target_session_file: switch.target_session_file,
            })
        }
        v2::Event::SessionBeforeFork(entry) => v1::Event::SessionBeforeFork(entry),
        // Never sent: 0.1 has no such event.
        v2::Event::ResourcesDiscover(_) => {
            observe("resources_discover", json!({"type": "resources_discover"}))
        }
        // Never sent: an extension of 0.1 registers no virtual model.
        v2::Event::ModelRoute(_) => observe("model_route", json!({"type": "model_route"})),
        // Never sent: 0.1 has no such events.
        v2::Event::BeforeProviderRequest(_) => observe(
            "before_provider_request",
            json!({"type": "before_provider_request"}),
        ),
        v2::Event::ProjectTrust(_) => observe("project_trust", json!({"type": "project_trust"})),
        v2::Event::AfterProviderResponse(_) => observe(
            "after_provider_response",
            json!({"type": "after_provider_response"}),
        ),
        v2::Event::SessionBeforeCompact(compact) => {
            // pi's JSON: the preparation and the branch, one line each.
            let json = pi_json.unwrap_or_else(|| Arc::from("null\nnull"));
            let (preparation, branch) = json.split_once('\n').unwrap_or((&json, "null"));
            v1::Event::SessionBeforeCompact(v1::BeforeCompactEvent {
                custom_instructions: compact.custom_instructions,
                preparation: preparation.to_string(),
                branch_entries: branch.to_string(),
            })
        }
        v2::Event::SessionCompact(compact) => observe(
            "session_compact",
            json!({
                "type": "session_compact",
                "compactionEntry": {
                    "type": "compaction",
                    "id": compact.entry_id,
                    "summary": compact.summary,
                    "firstKeptEntryId": compact.first_kept_entry_id,
                    "tokensBefore": compact.tokens_before,
                },
                "fromExtension": compact.from_extension,
                "reason": compaction_reason(compact.reason),
                "willRetry": compact.will_retry,
            }),
        ),
        v2::Event::ModelSelect(select) => {
            let model =
                |m: &super::bindings::extension_world_v2::pith::plugin0_2_0::models::ModelInfo| {
                    json!({
                        "id": m.id,
                        "name": m.name,
                        "api": m.api,
                        "provider": m.provider,
                        "reasoning": m.reasoning,
                        "contextWindow": m.context_window,
                        "maxTokens": m.max_tokens,
                    })
                };
            observe(
                "model_select",
                json!({
                    "type": "model_select",
                    "model": model(&select.model),
                    "previousModel": select.previous_model.as_ref().map(model),
                    "source": match select.source {
                        v2::ModelSelectSource::Set => "set",
                        v2::ModelSelectSource::Cycle => "cycle",
                        v2::ModelSelectSource::Restore => "restore",
                    },
                }),
            )
        }
        v2::Event::UserBash(bash) => observe(
            "user_bash",
            json!({
                "type": "user_bash",
                "command": bash.command,
                "excludeFromContext": bash.exclude_from_context,
                "cwd": bash.cwd,
            }),
        ),
        v2::Event::Input(input) => v1::Event::Input(v1::InputEvent {
            text: input.text,
            images: input.images,
            source: match input.source {
                v2::InputSource::Interactive => v1::InputSource::Interactive,
                v2::InputSource::Rpc => v1::InputSource::Rpc,
                v2::InputSource::Extension => v1::InputSource::Extension,
            },
        }),
        v2::Event::BeforeAgentStart(start) => {
            v1::Event::BeforeAgentStart(v1::BeforeAgentStartEvent {
                prompt: start.prompt,
                images: start.images,
                system_prompt: start.system_prompt,
            })
        }
        v2::Event::Context(messages) => v1::Event::Context(messages),
        v2::Event::ToolCall(call) => v1::Event::ToolCall(v1::ToolCallEvent {
            tool_name: call.tool_name,
            tool_call_id: call.tool_call_id,
            input: call.input,
        }),
        v2::Event::ToolResult(result) => v1::Event::ToolResult(v1::ToolResultEvent {
            tool_name: result.tool_name,
            tool_call_id: result.tool_call_id,
            input: result.input,
            content: result.content,
            details: result.details,
            is_error: result.is_error,
        }),
        // A 0.1 extension cannot subscribe to the bus: it never gets one.
        v2::Event::Bus((channel, data)) => v1::Event::Observe((format!("bus:{channel}"), data)),
        // (0.1 has no `wake-ups`: these reach only an instance that set them.)
        v2::Event::Timer(id) => observe("timer", json!({"type": "timer", "id": id})),
        v2::Event::FileChange(change) => observe(
            "file_change",
            json!({"type": "file_change", "id": change.id, "paths": change.paths}),
        ),
        v2::Event::Observe(observed) => v1::Event::Observe(observed),
    }
}

/// A 0.1 extension's answer as the engine takes it.
pub fn result(result: v1::EventResult) -> v2::EventResult {
    match result {
        v1::EventResult::Continue => v2::EventResult::Continue,
        v1::EventResult::Cancel => v2::EventResult::Cancel,
        v1::EventResult::Block(reason) => v2::EventResult::Block(reason),
        v1::EventResult::ReplaceArguments(arguments) => {
            v2::EventResult::ReplaceArguments(arguments)
        }
        v1::EventResult::PatchToolResult(patch) => {
            v2::EventResult::PatchToolResult(v2::ToolResultPatch {
                content: patch.content,
                details: patch.details,
            })
        }
        v1::EventResult::ReplaceMessages(messages) => v2::EventResult::ReplaceMessages(messages),
        v1::EventResult::TransformInput(input) => {
            v2::EventResult::TransformInput(v2::TransformedInput {
                text: input.text,
                images: input.images,
            })
        }
        v1::EventResult::Handled => v2::EventResult::Handled,
        v1::EventResult::AgentStart(changes) => {
            v2::EventResult::AgentStart(v2::AgentStartChanges {
                message: changes.message,
                system_prompt: changes.system_prompt,
            })
        }
        v1::EventResult::Compaction(summary) => {
            v2::EventResult::Compaction(v2::CompactionSummary {
                summary: summary.summary,
                first_kept_entry_id: summary.first_kept_entry_id,
                tokens_before: summary.tokens_before,
                details: summary.details,
                usage: None,
            })
        }
    }
}

/// A 0.1 extension's description as the engine takes it.
pub fn info(info: v1::ExtensionInfo) -> v2::ExtensionInfo {
    v2::ExtensionInfo {
        name: info.name,
        events: info.events,
        commands: info
            .commands
            .into_iter()
            .map(|c| v2::CommandSpec {
                name: c.name,
                description: c.description,
            })
            .collect(),
        tools: info.tools,
        rules: info
            .rules
            .into_iter()
            .map(|r| v2::Rule {
                name: r.name,
                description: r.description,
                globs: r.globs,
                trigger: r.trigger,
                content: r.content,
            })
            .collect(),
        flags: Vec::new(),
        virtual_models: Vec::new(),
        providers: Vec::new(),
    }
}

fn observe(kind: &str, json: serde_json::Value) -> v1::Event {
    v1::Event::Observe((kind.to_string(), json.to_string()))
}

fn shutdown_reason(reason: v2::ShutdownReason) -> &'static str {
    match reason {
        v2::ShutdownReason::Quit => "quit",
        v2::ShutdownReason::Reload => "reload",
        v2::ShutdownReason::New => "new",
        v2::ShutdownReason::Resume => "resume",
        v2::ShutdownReason::Fork => "fork",
    }
}

fn compaction_reason(reason: v2::CompactionReason) -> &'static str {
    match reason {
        v2::CompactionReason::Manual => "manual",
        v2::CompactionReason::Threshold => "threshold",
        v2::CompactionReason::Overflow => "overflow",
    }
}
