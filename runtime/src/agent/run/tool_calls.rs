//! Running an answer's tool calls (pi-behaviour §5): each call is prepared in order (validated,
//! then the extensions' `tool_call` hook), the prepared calls run concurrently, and they end in
//! order, each result bounded (see [`crate::agent::run::tool_output`]) and passed through the `tool_result`
//! hook. With the `immediate` interrupt mode, a steering message skips the calls not yet run.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::conversation::message::{
    AgentMessage, AssistantMessage, ToolResultMessage, now_ms,
};
use crate::agent::events;
use crate::agent::extensions::session_hooks as hooks;
use crate::agent::run::tool_timeout;
use crate::agent::session::queue::Queued;
use crate::agent::session::shared::Shared;
use crate::agent::session::state::InterruptMode;
use crate::agent::tools::todos;
use crate::agent::tools::{self, SessionTool};
use crate::content::{Content, ToolOutput};
use crate::plugin_host::PluginTools;

/// The result of a tool call skipped for a steering message.
pub const SKIPPED: &str = "Skipped due to queued user message.";

/// The shortest time between two `tool_execution_update`s of one call.
pub const UPDATE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// A tool call ready to run.
struct Runnable {
    id: String,
    name: String,
    raw_args: Value,
    args: Value,
    tool: SessionTool,
}

/// Cuts a tool result to the session's limit for the current model (see
/// [`crate::agent::run::tool_output`]).
fn bound_output(shared: &Shared, output: &mut ToolOutput) {
    let limit = shared.state().output_limit();
    limit.bound(output);
}

/// Emits a tool call's end and its result message, appends the result, and returns it; the
/// result is bounded first (a hook may have grown it).
fn end_call(
    shared: &Shared,
    id: &str,
    name: &str,
    mut output: ToolOutput,
    began: &Began,
) -> ToolResultMessage {
    let duration_ms = emit_end(shared, id, name, &mut output, began);
    record_result(shared, id, name, output, duration_ms)
}

/// Bounds a call's output and sends its `tool_execution_end`; the call's duration.
fn emit_end(
    shared: &Shared,
    id: &str,
    name: &str,
    output: &mut ToolOutput,
    began: &Began,
) -> Option<u64> {
    // pi's `images.autoResize`, after the hooks (an image an extension put in is fitted too).
    if shared.state().request_settings().auto_resize {
        crate::images::fit_tool_images(&mut output.content);
    }
    bound_output(shared, output);
    let duration_ms = began.elapsed_ms(id);
    shared.emit(&events::tool_execution_end(id, name, output, duration_ms));
    duration_ms
}

/// Adds a call's result to the conversation (`message_start`, `message_end`).
fn record_result(
    shared: &Shared,
    id: &str,
    name: &str,
    output: ToolOutput,
    duration_ms: Option<u64>,
) -> ToolResultMessage {
    let nested_calls = shared
        .nested_calls
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(id);
    let result = ToolResultMessage {
        nested_calls,
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        content: output.content,
        details: output.details,
        is_error: output.is_error,
        duration_ms,
        timestamp: now_ms(),
    };
    let message = AgentMessage::ToolResult(result.clone());
    shared.emit(&events::message_start(&message));
    shared.emit(&events::message_end(&message));
    shared.state().append(message);
    result
}

/// When each call of a turn started (its `tool_execution_start`).
#[derive(Default)]
struct Began(std::collections::HashMap<String, std::time::Instant>);

impl Began {
    /// Emits `tool_execution_start` and notes the time.
    fn start(&mut self, shared: &Shared, id: &str, name: &str, raw_args: &Value) {
        shared.emit(&events::tool_execution_start(id, name, raw_args));
        self.0.insert(id.to_string(), std::time::Instant::now());
    }

    /// Milliseconds since the call `id` started.
    fn elapsed_ms(&self, id: &str) -> Option<u64> {
        self.0.get(id).map(|at| at.elapsed().as_millis() as u64)
    }
}

fn error_output(text: &str) -> ToolOutput {
    ToolOutput {
        structured: None,
        content: vec![Content::text(text)],
        details: Some(json!({})),
        is_error: true,
    }
}

/// What the processes a tool starts learn of the session, as pi's bash tells them (its system
/// prompt tells the model to look): `AI_AGENT`, `PI_CODING_AGENT`, `PI_SESSION_ID`,
/// `PI_SESSION_FILE` (when saved), `PI_PROVIDER`, `PI_MODEL` and `PI_REASONING_LEVEL`.
/// Said after the result of a command run again outside the sandbox.
const RERUN_NOTE: &str = "[sandbox] The user approved running this command again outside the sandbox: this is that run's result.";

/// One tool call's run, within its timeout.
struct OneCall<'a> {
    shared: &'a Arc<Shared>,
    tool: &'a SessionTool,
    id: &'a str,
    args: &'a Value,
    cancel: &'a CancellationToken,
    timeouts: &'a tool_timeout::ToolTimeouts,
    process_env: &'a [(String, String)],
}

impl OneCall<'_> {
    async fn run(
        &self,
        updates: mpsc::UnboundedSender<ToolOutput>,
        escalated: crate::plugin_host::Escalation,
    ) -> ToolOutput {
        let name = self.tool.name().to_string();
        tool_timeout::run_within(self.timeouts, &name, self.cancel, |cancel| async move {
            if let SessionTool::Codemode(_) = self.tool {
                return crate::agent::tools::codemode::run(
                    self.shared,
                    self.id,
                    self.args,
                    &cancel,
                    updates,
                    nested_call,
                )
                .await;
            }
            tools::execute(
                &self.shared.host,
                &self.shared.mcp(),
                &self.shared.extensions,
                &self.shared.bridge,
                self.tool,
                self.id,
                self.args,
                &cancel,
                updates,
                escalated,
                self.process_env.to_vec(),
                self.shared.call_sandbox(),
            )
            .await
        })
        .await
    }
}

impl OneCall<'_> {
    /// Runs the call; a command the sandbox denied runs again outside it when the host
    /// approves (`"on-failure"`).
    async fn run_with_rerun(
        &self,
        updates: mpsc::UnboundedSender<ToolOutput>,
        escalated: crate::plugin_host::Escalation,
    ) -> ToolOutput {
        let output = self.run(updates.clone(), escalated).await;
        if self.cancel.is_cancelled() {
            return output;
        }
        match crate::agent::run::escalation::approve_rerun(
            self.shared,
            self.id,
            self.tool,
            self.args,
            &output,
        )
        .await
        {
            Some(escalation) => {
                let mut again = self.run(updates, escalation).await;
                again.content.push(Content::text(RERUN_NOTE));
                again
            }
            None => output,
        }
    }
}

/// Runs a call another tool call (`parent`, a `codemode` script's) made, through the same
/// pipeline as the model's calls: looked up among `tools`, validated, the `tool_call` hook, the
/// sandbox's approvals, the timeouts, the `tool_result` hook; its `tool_execution_*` events
/// carry `parentToolCallId`. Its result joins no conversation. Every failure is an error result.
pub(crate) async fn run_nested_call(
    shared: &Arc<Shared>,
    parent: &str,
    id: &str,
    name: &str,
    raw_args: &Value,
    tools: &[SessionTool],
    cancel: &CancellationToken,
) -> ToolOutput {
    shared
        .nested_parents
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .record(id, parent);
    shared.emit(&events::nested(
        events::tool_execution_start(id, name, raw_args),
        parent,
    ));
    let began = std::time::Instant::now();
    let (mut output, args) = match prepare_call(shared, tools, id, name, raw_args).await {
        Err(refused) => (error_output(&refused.to_string()), raw_args.clone()),
        Ok((tool, args)) => {
            let escalated = crate::agent::run::escalation::approve(shared, id, &tool, &args).await;
            let (updates, receiver) = mpsc::unbounded_channel::<ToolOutput>();
            let forwarding = forward_updates(
                shared,
                id,
                name,
                raw_args,
                Some(parent.to_string()),
                receiver,
            );
            let timeouts = shared.state().tool_timeouts();
            let process_env = session_env(shared);
            let call = OneCall {
                shared,
                tool: &tool,
                id,
                args: &args,
                cancel,
                timeouts: &timeouts,
                process_env: &process_env,
            };
            let output = call.run_with_rerun(updates, escalated).await;
            let _ = forwarding.await;
            (output, args)
        }
    };
    bound_output(shared, &mut output);
    hooks::tool_result(shared, id, name, &args, &mut output).await;
    if shared.state().request_settings().auto_resize {
        crate::images::fit_tool_images(&mut output.content);
    }
    bound_output(shared, &mut output);
    let duration_ms = Some(began.elapsed().as_millis() as u64);
    shared.emit(&events::nested(
        events::tool_execution_end(id, name, &output, duration_ms),
        parent,
    ));
    output
}

/// [`run_nested_call`] as the script engine's host calls it.
fn nested_call<'a>(
    shared: &'a Arc<Shared>,
    parent: &'a str,
    id: &'a str,
    name: &'a str,
    raw_args: &'a Value,
    tools: &'a [SessionTool],
    cancel: &'a CancellationToken,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ToolOutput> + Send + 'a>> {
    Box::pin(run_nested_call(
        shared, parent, id, name, raw_args, tools, cancel,
    ))
}

fn session_env(shared: &Shared) -> Vec<(String, String)> {
    let state = shared.state();
    let mut env = vec![
        ("AI_AGENT".to_string(), "pi".to_string()),
        ("PI_CODING_AGENT".to_string(), "true".to_string()),
        ("PI_SESSION_ID".to_string(), state.session_id().to_string()),
    ];
    if let Some(path) = state.session_file_path() {
        env.push(("PI_SESSION_FILE".into(), path.display().to_string()));
    }
    if let Some(model) = state.model() {
        env.push(("PI_PROVIDER".into(), model.provider.clone()));
        env.push(("PI_MODEL".into(), model.id.clone()));
    }
    env.push((
        "PI_REASONING_LEVEL".into(),
        state.thinking().as_str().to_string(),
    ));
    env
}

/// A successful `todo` tool call whose details carry `todoPhases` replaces the todo list.
fn apply_todo_tool(shared: &Arc<Shared>, name: &str, output: &ToolOutput) {
    if name != "todo" || output.is_error {
        return;
    }
    if let Some(phases) = output.details.as_ref().and_then(|d| d.get("todoPhases"))
        && let Ok(phases) = todos::normalize(phases)
    {
        shared.set_todo_list(phases);
    }
}

/// The result of every call of an answer cut off at the output token limit (pi's text).
pub fn truncated_call_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// The calls of an answer that stopped at the output token limit (pi's
/// `failToolCallsFromTruncatedMessage`): their arguments may be cut, so none is looked up,
/// validated, hooked, put to the host or run; each gets `tool_execution_start` and an error
/// result. Like pi's, these results carry no duration.
pub(super) fn fail_truncated_calls(
    shared: &Shared,
    assistant: &AssistantMessage,
) -> Vec<ToolResultMessage> {
    let untimed = Began::default();
    assistant
        .tool_calls()
        .map(|(id, name, raw_args)| {
            shared.emit(&events::tool_execution_start(id, name, raw_args));
            let output = error_output(&truncated_call_text(name));
            end_call(shared, id, name, output, &untimed)
        })
        .collect()
}

/// Prepares a call of `name` among `tools`: looked up, its arguments validated, then the
/// extensions' `tool_call` hook; the tool and the arguments to run it with, or why it is refused.
async fn prepare_call(
    shared: &Arc<Shared>,
    tools: &[SessionTool],
    id: &str,
    name: &str,
    raw_args: &Value,
) -> Result<(SessionTool, Value), hooks::CallRefused> {
    let tool = tools
        .iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| hooks::CallRefused::UnknownTool(name.to_string()))?;
    let args = crate::plugin_host::tool_arguments::prepare(name, raw_args);
    let args = tools::validate(name, tool.parameters(), &args, shared.behaviour.validation)?;
    hooks::tool_call(shared, tool, id, name, args).await
}

/// Runs the answer's tool calls; returns their results and any steering that cut them short.
pub(super) async fn run_tool_calls(
    shared: &Arc<Shared>,
    assistant: &AssistantMessage,
    cancel: &CancellationToken,
    plugin_tools: &PluginTools,
) -> (Vec<ToolResultMessage>, Vec<Queued>) {
    let tools = shared.tools_of(plugin_tools);
    let (interrupt, timeouts) = {
        let state = shared.state();
        (state.interrupt_mode(), state.tool_timeouts())
    };
    let calls: Vec<(String, String, Value)> = assistant
        .tool_calls()
        .map(|(id, name, args)| (id.to_string(), name.to_string(), args.clone()))
        .collect();
    let mut results = Vec::new();
    let mut runnable: Vec<Runnable> = Vec::new();
    let mut began = Began::default();
    for (position, (id, name, raw_args)) in calls.iter().enumerate() {
        began.start(shared, id, name, raw_args);
        match prepare_call(shared, &tools, id, name, raw_args).await {
            Err(refused) => results.push(end_call(
                shared,
                id,
                name,
                error_output(&refused.to_string()),
                &began,
            )),
            Ok((tool, args)) => runnable.push(Runnable {
                id: id.clone(),
                name: name.clone(),
                raw_args: raw_args.clone(),
                args,
                tool,
            }),
        }
        if interrupt == InterruptMode::Immediate {
            let steering = shared.state().poll_steering();
            if !steering.is_empty() {
                for call in runnable.drain(..) {
                    results.push(end_call(
                        shared,
                        &call.id,
                        &call.name,
                        error_output(SKIPPED),
                        &began,
                    ));
                }
                for (id, name, raw_args) in &calls[position + 1..] {
                    began.start(shared, id, name, raw_args);
                    results.push(end_call(shared, id, name, error_output(SKIPPED), &began));
                }
                return (results, steering);
            }
        }
    }
    let mut handles = Vec::new();
    // An extension's calls run on its one instance one after another: in the model's order, as
    // pi's extensions (one JavaScript thread) start them, not in the order the tasks happen to
    // reach the instance.
    let mut extension_turns: std::collections::HashMap<String, tokio::sync::oneshot::Receiver<()>> =
        Default::default();
    for call in runnable {
        let turn = match &call.tool {
            crate::agent::tools::SessionTool::Extension(_, plugin) => {
                let (done, next) = tokio::sync::oneshot::channel::<()>();
                Some((extension_turns.insert(plugin.clone(), next), done))
            }
            _ => None,
        };
        // A call that needs more than the sandbox mode allows is put to the host first.
        let escalated =
            crate::agent::run::escalation::approve(shared, &call.id, &call.tool, &call.args).await;
        let (updates, receiver) = mpsc::unbounded_channel::<ToolOutput>();
        let forwarding =
            forward_updates(shared, &call.id, &call.name, &call.raw_args, None, receiver);
        let runner = shared.clone();
        let (tool, id, args, cancel, timeouts) = (
            call.tool.clone(),
            call.id.clone(),
            call.args.clone(),
            cancel.clone(),
            timeouts.clone(),
        );
        let process_env = session_env(shared);
        let running = tokio::spawn(async move {
            let _done = match turn {
                Some((previous, done)) => {
                    if let Some(previous) = previous {
                        let _ = previous.await;
                    }
                    Some(done)
                }
                None => None,
            };
            let call = OneCall {
                shared: &runner,
                tool: &tool,
                id: &id,
                args: &args,
                cancel: &cancel,
                timeouts: &timeouts,
                process_env: &process_env,
            };
            call.run_with_rerun(updates, escalated).await
        });
        handles.push((call, running, forwarding));
    }
    // Each call's `tool_execution_end` goes out as it finishes (a quick `read` is not held
    // back by a slow command beside it); the results join the conversation in call order, once
    // all are done, as pi 1.5.2 does.
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let mut finishing: FuturesUnordered<_> = handles
        .into_iter()
        .enumerate()
        .map(|(position, (call, running, forwarding))| async move {
            (position, call, running.await, forwarding)
        })
        .collect();
    let mut finished = Vec::new();
    while let Some((position, call, output, forwarding)) = finishing.next().await {
        let mut output =
            output.unwrap_or_else(|err| error_output(&format!("Tool {} failed: {err}", call.name)));
        bound_output(shared, &mut output);
        hooks::tool_result(shared, &call.id, &call.name, &call.args, &mut output).await;
        apply_todo_tool(shared, &call.name, &output);
        // Every update of this call is out before its end.
        let _ = forwarding.await;
        let duration = emit_end(shared, &call.id, &call.name, &mut output, &began);
        finished.push((position, call, output, duration));
    }
    finished.sort_by_key(|(position, ..)| *position);
    for (_, call, output, duration) in finished {
        results.push(record_result(
            shared, &call.id, &call.name, output, duration,
        ));
    }
    (results, Vec::new())
}

/// Sends a call's partial results as `tool_execution_update`s (made by `parent`, if any): one
/// per interval at most (pi's bash: 100 ms), the newest one, so a host's traffic grows with the
/// command's time, not with its output. Ends when the call drops its sender.
fn forward_updates(
    shared: &Arc<Shared>,
    id: &str,
    name: &str,
    raw_args: &Value,
    parent: Option<String>,
    mut receiver: mpsc::UnboundedReceiver<ToolOutput>,
) -> tokio::task::JoinHandle<()> {
    let forwarder = shared.clone();
    let (id, name, raw_args) = (id.to_string(), name.to_string(), raw_args.clone());
    let emit = move |partial: &ToolOutput| {
        let event = events::tool_execution_update(&id, &name, &raw_args, partial);
        forwarder.emit(&match &parent {
            Some(parent) => events::nested(event, parent),
            None => event,
        });
    };
    tokio::spawn(async move {
        let mut pending: Option<ToolOutput> = None;
        let mut last = tokio::time::Instant::now() - UPDATE_INTERVAL;
        loop {
            let due = last + UPDATE_INTERVAL;
            tokio::select! {
                received = receiver.recv() => match received {
                    Some(partial) if tokio::time::Instant::now() >= due => {
                        pending = None;
                        last = tokio::time::Instant::now();
                        emit(&partial);
                    }
                    Some(partial) => pending = Some(partial),
                    None => {
                        // The newest state before the call ends is never lost.
                        if let Some(partial) = pending.take() {
                            emit(&partial);
                        }
                        break;
                    }
                },
                _ = tokio::time::sleep_until(due), if pending.is_some() => {
                    if let Some(partial) = pending.take() {
                        last = tokio::time::Instant::now();
                        emit(&partial);
                    }
                }
            }
        }
    })
}
