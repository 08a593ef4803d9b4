//! The hook points of a run: `before_agent_start`, `context`, `tool_call` and `tool_result`,
//! each a no-op when no extension subscribed to it.

use serde_json::Value;

use super::Extensions;
use super::context::custom_message;
use super::hooks::{
    self, BeforeAgentStartEvent, Event, EventResult, RunStart, ToolCallEvent, ToolResultEvent,
};
use crate::agent::conversation::message::AgentMessage;
use crate::agent::conversation::system_prompt;
use crate::agent::session::shared::Shared;
use crate::agent::tools::{self, SessionTool};
use crate::content::{Content, ToolOutput};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::resources::context_files;

/// pi's result text for a call an extension blocked without a reason.
pub const BLOCKED: &str = "Tool execution was blocked";

/// `before_agent_start`: extensions may add messages after the prompt and replace the run's
/// system prompt. Returns the run's first messages.
pub async fn before_agent_start(
    shared: &Shared,
    mut initial: Vec<AgentMessage>,
) -> Vec<AgentMessage> {
    if !shared.extensions.wants("before_agent_start") {
        return initial;
    }
    let (prompt, images) = match initial.first() {
        Some(AgentMessage::User(user)) => (
            user.content.text(),
            user.content
                .blocks()
                .into_iter()
                .filter_map(|b| match b {
                    Content::Image { data, mime_type } => Some(wit::Image { data, mime_type }),
                    Content::Text { .. } => None,
                })
                .collect(),
        ),
        _ => (String::new(), Vec::new()),
    };
    // pi's `messageType`: a custom message starts the run, or a user's prompt.
    let message = match initial.first() {
        Some(AgentMessage::Custom(custom)) => Some(super::typed::custom_message(custom)),
        _ => None,
    };
    let message_type = if message.is_some() {
        RunStart::Custom
    } else {
        RunStart::User
    };
    let base = system_prompt(shared, &shared.tools());
    let outcome = shared
        .extensions
        .hook(
            "before_agent_start",
            Event::BeforeAgentStart(BeforeAgentStartEvent {
                prompt,
                images,
                system_prompt: base,
                message_type,
                message,
            }),
        )
        .await;
    for (_, result) in outcome.results {
        if let EventResult::AgentStart(changes) = result {
            if let Some(message) = changes.message {
                initial.push(custom_message(message));
            }
            if let Some(prompt) = changes.system_prompt {
                shared.state().set_system_prompt_override(Some(prompt));
            }
        }
    }
    initial
}

/// The system prompt of the next request: the one an extension set for this run, else the
/// built one.
pub fn system_prompt(shared: &Shared, tools: &[SessionTool]) -> String {
    if let Some(prompt) = shared.state().system_prompt_override().map(str::to_string) {
        return prompt;
    }
    system_sections(shared, tools).prompt()
}

/// The sections of the session's own system prompt for `tools` (before any extension's
/// replacement), in the layout of the pi version the session speaks.
pub fn system_sections(shared: &Shared, tools: &[SessionTool]) -> system_prompt::Sections {
    let resources = shared.resources();
    let context_files = if shared.prompt.context_files {
        context_files::load(&shared.cwd, &resources.dirs.agent_dir)
    } else {
        Vec::new()
    };
    let layout = if shared.behaviour.system_message {
        system_prompt::Layout::Pi15
    } else {
        system_prompt::Layout::Pi073
    };
    let inputs = system_prompt::PromptInputs {
        context_files: &context_files,
        skills: &resources.skills,
        cwd: &shared.cwd,
        date: &system_prompt::today(),
        mcp_servers: &shared.mcp().prompt_section(),
    };
    system_prompt::sections(&shared.prompt, tools, &inputs, layout)
}

/// `context`: extensions may replace the messages sent to the model (not the session's).
pub async fn context(shared: &Shared, messages: &mut Vec<AgentMessage>) {
    if !shared.extensions.wants("context") {
        return;
    }
    let json = serde_json::to_string(&messages).unwrap_or_else(|_| "[]".into());
    let outcome = shared
        .extensions
        .hook("context", Event::Context(json))
        .await;
    for (path, result) in outcome.results {
        if let EventResult::ReplaceMessages(replacement) = result {
            match serde_json::from_str::<Vec<AgentMessage>>(&replacement) {
                Ok(replacement) => *messages = replacement,
                Err(err) => shared.extensions.error(
                    &path,
                    "context",
                    &format!("the replacement messages are not pi messages: {err}"),
                ),
            }
        }
    }
}

/// Why a tool call does not run; the text is the tool result the model gets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallRefused {
    /// No tool of the session has the name.
    #[error("Tool {0} not found")]
    UnknownTool(String),
    /// The arguments do not fit the tool's schema.
    #[error(transparent)]
    Invalid(#[from] tools::InvalidArguments),
    /// An extension blocked it (its reason, or pi's default).
    #[error("{0}")]
    Blocked(String),
    /// An extension's `tool_call` hook failed, which blocks the call as in pi.
    #[error("{0}")]
    HookFailed(String),
}

/// `tool_call`: an extension may block the call (its failure blocks it too, as pi does) or
/// change its arguments, which are validated again.
pub async fn tool_call(
    shared: &Shared,
    tool: &SessionTool,
    id: &str,
    name: &str,
    args: Value,
) -> Result<(SessionTool, Value), CallRefused> {
    if !shared.extensions.wants("tool_call") {
        return Ok((tool.clone(), args));
    }
    let outcome = shared
        .extensions
        .hook(
            "tool_call",
            Event::ToolCall(ToolCallEvent {
                tool_name: name.to_string(),
                tool_call_id: id.to_string(),
                input: args.to_string(),
            }),
        )
        .await;
    if let Some(failure) = outcome.failure {
        return Err(CallRefused::HookFailed(failure));
    }
    let mut args = args;
    for (path, result) in outcome.results {
        match result {
            EventResult::Block(reason) => {
                return Err(CallRefused::Blocked(
                    reason
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| BLOCKED.to_string()),
                ));
            }
            EventResult::ReplaceArguments(replacement) => {
                match serde_json::from_str::<Value>(&replacement) {
                    Ok(value) => {
                        args = tools::validate(
                            name,
                            tool.parameters(),
                            &value,
                            shared.behaviour.validation,
                        )?
                    }
                    Err(err) => shared.extensions.error(
                        &path,
                        "tool_call",
                        &format!("the replacement arguments are not JSON: {err}"),
                    ),
                }
            }
            _ => {}
        }
    }
    Ok((tool.clone(), args))
}

/// `tool_result`: extensions may patch a successful result's content and details (pi ignores
/// patches to failed calls).
pub async fn tool_result(
    shared: &Shared,
    id: &str,
    name: &str,
    args: &Value,
    output: &mut ToolOutput,
) {
    if output.is_error || !shared.extensions.wants("tool_result") {
        return;
    }
    let outcome = shared
        .extensions
        .hook(
            "tool_result",
            Event::ToolResult(ToolResultEvent {
                tool_name: name.to_string(),
                tool_call_id: id.to_string(),
                input: args.to_string(),
                content: output
                    .content
                    .iter()
                    .cloned()
                    .map(wit::Content::from)
                    .collect(),
                details: output.details.as_ref().map(Value::to_string),
                is_error: output.is_error,
            }),
        )
        .await;
    for (_, result) in outcome.results {
        if let EventResult::PatchToolResult(patch) = result {
            if let Some(content) = patch.content {
                output.content = content.into_iter().map(Content::from).collect();
            }
            if let Some(details) = patch.details {
                output.details = crate::plugin_host::convert::details_value(Some(details));
            }
        }
    }
}

/// What an extension made of the user's shell command (pi's `user_bash` answers).
pub enum UserBashAnswer {
    /// Its outcome, without running it.
    Result(hooks::UserBashResult),
    /// A command line to run in its place.
    RunInstead(String),
}

/// `user_bash`: asks the extensions that hear it, in load order, until one answers with an
/// outcome or a command line to run instead (pi stops at the first valid answer; another
/// command line needs the extension's `process` grant).
pub async fn user_bash(extensions: &Extensions, event: Event) -> Option<UserBashAnswer> {
    const KIND: &str = "user_bash";
    for slot in extensions.slots().iter().filter(|s| s.wants(KIND)) {
        match extensions.call_slot(slot, KIND, event.clone()).await {
            Ok(EventResult::BashResult(result)) => return Some(UserBashAnswer::Result(result)),
            // Another command line is a process the extension starts: it needs that grant.
            Ok(EventResult::RunInstead(line)) if slot.plugin.capabilities.process => {
                return Some(UserBashAnswer::RunInstead(line));
            }
            Ok(EventResult::RunInstead(_)) => extensions.error(
                &slot.plugin.path,
                KIND,
                &format!(
                    "run-instead needs the process grant (the command runs as typed): declare \
                     process = true under [capabilities] in its pith.toml and grant it \
                     (\"plugins\": {{\"{}\": {{\"grant\": {{\"process\": true}}}}}})",
                    slot.plugin.manifest.id
                ),
            ),
            _ => {}
        }
    }
    None
}
