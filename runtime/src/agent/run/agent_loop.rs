//! One run of the agent loop, with pi's event order (pi-behaviour §5): `agent_start`,
//! `turn_start`, the new user messages, then per turn the streamed assistant message, its tool
//! calls (prepared in order, run concurrently, ended in order), `turn_end`; steering is
//! delivered after the tools (skipping the calls not yet run) or after the turn, follow-ups when
//! the run would end; `agent_end` with every message of the run. The tool calls run in
//! [`crate::agent::run::tool_calls`].
//!
//! Over 600 lines because the run, its retry and overflow recovery, and the streamed turn share
//! one set of emission helpers and the event order between them; the next split moves the
//! recovery (`Recovery`, `recovery_for`) beside `crate::agent::run::overflow`.

use crate::agent::conversation::messages::Messages;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::conversation::message::{AgentMessage, AssistantMessage, StopReason};
use crate::agent::event::{AssistantUpdate, SessionEvent};
use crate::agent::events;
use crate::agent::extensions::session_hooks as hooks;
use crate::agent::run::history_cache::Mode;
use crate::agent::run::request::{self, RequestError, RequestParts};
use crate::agent::run::retry;
use crate::agent::run::routing;
use crate::agent::run::stream::{Produced, StreamAssembler};
use crate::agent::session::queue::Queued;
use crate::agent::session::shared::{Shared, no_model_message};
use crate::agent::tools::todos;
use crate::model::ThinkingLevel;
use crate::plugin_host::PluginTools;
use crate::plugin_host::provider::StreamEvent;
use crate::resources::rules::{Rule, RuleWatch};

/// The message of an aborted answer.
pub const ABORTED: &str = "This operation was aborted";
/// The message of an aborted openai-completions answer (pi's provider says it so).
pub const REQUEST_ABORTED: &str = "Request was aborted";

/// The message of an answer of `api` aborted, as pi's provider for it says it.
pub fn aborted_message(api: &str) -> &'static str {
    if api == "openai-completions" {
        REQUEST_ABORTED
    } else {
        ABORTED
    }
}
/// The error of an answer a streamed rule stopped.
pub const RULE_STOPPED: &str = "Stopped by a streamed rule";
/// pi 1.5's system message when the prompt or the tool set changed since the last one.
fn record_tool_set(
    shared: &Arc<Shared>,
    plugin_tools: &PluginTools,
    run_messages: &mut Vec<AgentMessage>,
) {
    if !shared.behaviour.system_message {
        return;
    }
    let tools = shared.tools_of(plugin_tools);
    let sections = hooks::system_sections(shared, &tools);
    let record = crate::agent::conversation::system_record::next(
        &shared.state().messages(),
        sections,
        &tools,
    );
    if let Some(record) = record {
        deliver(shared, AgentMessage::System(record), run_messages);
    }
}

/// Runs until the model stops and no steering or follow-up is left, or until cancelled; a
/// transient provider error is retried with backoff (see [`crate::agent::run::retry`]).
pub async fn run(shared: Arc<Shared>, initial: Vec<AgentMessage>, cancel: CancellationToken) {
    // A failed answer of an earlier run that was never retried is not this run's `failed`.
    shared.state().take_retry_failed();
    // Plugins still compiling after start-up are part of the first run (with their hooks).
    shared.host.deferred_settled().await;
    // The first prompt waits (10 s at most) for the MCP servers that show tools directly.
    if !shared.mcp().wait_direct_once().await {
        shared.notify(
            "MCP servers are still connecting; their tools become available once connected.",
            "info",
        );
    }
    let mut initial = hooks::before_agent_start(&shared, initial).await;
    // The plugin tools this run shows the model and calls: a hot reload applies from the next
    // run, so a call never reaches a different version than the one the model was shown.
    let plugin_tools = shared.host.tools();
    // What the extensions' `agent_end` handlers queued: a new run delivers it, before the
    // session settles (pi's).
    let mut queued: Vec<Queued> = Vec::new();
    let (over_threshold, after_reason, after_end, run_messages, heard) = loop {
        let mut attempt = 0u32;
        let mut overflow_tried = false;
        let mut compact_after = false;
        // Events that follow the final `agent_end` (the end of a retry sequence).
        let mut after_end: Vec<SessionEvent> = Vec::new();
        let (mut last, mut run_messages);
        loop {
            (last, run_messages) = run_agent(
                &shared,
                (std::mem::take(&mut initial), std::mem::take(&mut queued)),
                &cancel,
                attempt,
                &plugin_tools,
            )
            .await;
            // A context overflow, or an answer cut short below the model's own output limit, is
            // compacted away once and the run goes on (pi's recovery); an overflow that still
            // answered is compacted after the run, without a retry.
            let recovery = last
                .as_ref()
                .and_then(|answer| recovery_for(&shared, answer));
            if let Some(recovery) = recovery
                && shared.state().auto_compaction()
                && !cancel.is_cancelled()
            {
                if recovery == Recovery::CompactAfter {
                    compact_after = true;
                    break;
                }
                if overflow_tried {
                    let message = match recovery {
                        Recovery::Truncated => {
                            "Truncated response recovery failed after one compact-and-retry attempt."
                        }
                        _ => {
                            "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model."
                        }
                    };
                    after_end.push(SessionEvent::CompactionEnd {
                        reason: "overflow".into(),
                        result: None,
                        aborted: false,
                        will_retry: false,
                        error_message: Some(message.into()),
                    });
                    after_end.push(SessionEvent::AutoCompactionEnd {
                        result: None,
                        aborted: false,
                        will_retry: false,
                        error_message: Some(message.into()),
                    });
                    break;
                }
                overflow_tried = true;
                // pi 1.5 ends the failed run without announcing the retry.
                shared.emit(&events::agent_end(&run_messages, false));
                drop_failed_answer(&shared);
                if shared.compact(None, "overflow", true).await.is_ok() {
                    continue;
                }
                run_messages.clear();
                break;
            }
            let (retry, policy) = {
                let state = shared.state();
                state.retry_settings()
            };
            let error = match &last {
                Some(message) if message.stop_reason == StopReason::Error => {
                    message.error_message.clone().unwrap_or_default()
                }
                _ => break,
            };
            if !retry || !retry::is_retryable(&error) || cancel.is_cancelled() {
                if attempt > 0 {
                    after_end.push(retry::end_event(false, attempt, Some(&error)));
                }
                break;
            }
            attempt += 1;
            if attempt > policy.max_retries {
                after_end.push(retry::end_event(false, policy.max_retries, Some(&error)));
                break;
            }
            shared.emit(&events::agent_end(&run_messages, true));
            let delay = policy.delay_ms(attempt);
            // The wait is in place before `auto_retry_start` goes out, so an `abort_retry` sent
            // on that event always finds it.
            let wait = CancellationToken::new();
            shared.state().set_retry_wait(Some(wait.clone()));
            shared.emit(&retry::start_event(
                attempt,
                policy.max_retries,
                delay,
                &error,
            ));
            // pi 1.5 takes the failed answer out of the context after announcing the retry.
            drop_failed_answer(&shared);
            let cancelled = tokio::select! {
                _ = tokio::time::sleep(std::time::Duration::from_millis(delay)) => false,
                _ = cancel.cancelled() => true,
                _ = wait.cancelled() => true,
            };
            shared.state().set_retry_wait(None);
            if cancelled {
                run_messages.clear();
                after_end.push(retry::end_event(false, attempt, Some("Retry cancelled")));
                break;
            }
        }
        // Past the threshold (the context window minus the reserve), or after an overflow that
        // still answered, compact before the next prompt.
        let answered = matches!(&last, Some(m) if m.stop_reason != StopReason::Aborted);
        let over_threshold = compact_after
            || (answered && !cancel.is_cancelled() && shared.state().over_compaction_threshold());
        let after_reason = if compact_after {
            "overflow"
        } else {
            "threshold"
        };
        // The extensions hear `agent_end` while the session is still busy, as pi's handlers run
        // inside the run: a follow-up or steering message they queue continues it, in a new run
        // (after a compaction past the threshold), and the session settles after that one.
        let end = events::agent_end(&run_messages, false);
        let announce = !run_messages.is_empty() || after_end.is_empty();
        if announce && !cancel.is_cancelled() && shared.hear(&end).await {
            let next = {
                let mut state = shared.state();
                let steering = state.poll_steering();
                if steering.is_empty() {
                    state.poll_follow_up()
                } else {
                    steering
                }
            };
            if next.is_empty() {
                break (over_threshold, after_reason, after_end, run_messages, true);
            }
            if over_threshold {
                let _ = shared.compact(None, after_reason, false).await;
            }
            shared.events.emit(&end);
            for event in after_end {
                shared.emit(&event);
            }
            queued = next;
            continue;
        }
        break (over_threshold, after_reason, after_end, run_messages, false);
    };
    if over_threshold {
        // A prompt arriving now waits for the compaction instead of racing it.
        shared.begin_compaction();
    }
    // New prompts are accepted before `agent_end` goes out (hosts send the next prompt on it);
    // `abort` answers after it. The run's older messages go back to the session file.
    {
        let mut state = shared.state();
        state.set_system_prompt_override(None);
        state.settle_messages();
    }
    shared.accept_prompts();
    if !run_messages.is_empty() || after_end.is_empty() {
        let end = events::agent_end(&run_messages, false);
        if heard {
            // The extensions heard it already: the front-end's frame only.
            shared.events.emit(&end);
        } else {
            shared.emit(&end);
        }
    }
    for event in after_end {
        shared.emit(&event);
    }
    // Nothing can continue this run any more (no retry, compaction or queued message):
    // `agent_settled`, then idle (an `abort` answers after it). A compaction past the threshold
    // runs first; a prompt waits for it and for this `agent_settled`.
    if over_threshold {
        let _ = shared.compact(None, after_reason, false).await;
        shared.compaction_settling();
    }
    shared.emit(&events::agent_settled(cancel.is_cancelled()));
    if over_threshold {
        shared.end_settled_compaction();
    }
    shared.signal_idle();
}

/// Takes the failed answer out of the context and tells the host (`entry_appended`).
fn drop_failed_answer(shared: &Shared) {
    let edit = shared.state().drop_failed_answer();
    if let Some(entry) = edit {
        shared.emit(&SessionEvent::EntryAppended { entry });
    }
}

/// What a finished run's last answer calls for (pi's `_checkCompaction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// A context overflow that failed the answer: compact, then retry.
    Overflow,
    /// An answer cut at `length` below the model's own limit: compact, then retry.
    Truncated,
    /// An overflow that still answered (the reported input passed the window): compact after
    /// the run, no retry.
    CompactAfter,
}

/// The recovery `answer` calls for, if any (only for the session's current model).
fn recovery_for(shared: &Shared, answer: &AssistantMessage) -> Option<Recovery> {
    let mut model = shared.state().model()?.clone();
    // Under a virtual model, the limits are those of the model the request was routed to.
    if model.is_virtual() {
        model = shared
            .models()
            .find(&answer.provider, &answer.model)
            .filter(|physical| !physical.is_virtual())?;
    }
    if model.provider != answer.provider || model.id != answer.model {
        return None;
    }
    if crate::agent::run::overflow::is_context_overflow(answer, model.context_window) {
        return Some(if answer.stop_reason == StopReason::Stop {
            Recovery::CompactAfter
        } else {
            Recovery::Overflow
        });
    }
    let cut_short = answer.tool_calls().next().is_none()
        && crate::agent::run::overflow::is_recoverable_length(answer, model.max_tokens);
    cut_short.then_some(Recovery::Truncated)
}

/// One run, from `agent_start` to `agent_end`; returns its last answer. `retry_attempt` is the
/// retry this run is (0 for a fresh run): its first good answer ends the retry.
async fn run_agent(
    shared: &Arc<Shared>,
    (initial, queued): (Vec<AgentMessage>, Vec<Queued>),
    cancel: &CancellationToken,
    retry_attempt: u32,
    plugin_tools: &PluginTools,
) -> (Option<AssistantMessage>, Vec<AgentMessage>) {
    let shared = shared.clone();
    let cancel = cancel.clone();
    let mut last_answer = None;
    let mut run_messages: Vec<AgentMessage> = Vec::new();
    // The extensions handle the run's and each turn's start and end before the host sees them
    // (pi awaits these handlers inside the run).
    shared.emit_heard(&events::agent_start()).await;
    shared.emit_heard(&events::turn_start()).await;
    record_tool_set(&shared, plugin_tools, &mut run_messages);
    for message in initial {
        deliver(&shared, message, &mut run_messages);
    }
    // Messages an `agent_end` handler queued, or steering queued while idle, are delivered
    // before the first answer.
    let mut pending: Vec<Queued> = if queued.is_empty() {
        shared.state().poll_steering()
    } else {
        queued
    };
    let mut first_turn = true;
    let mut reminders = 0;
    let mut reminder: Option<AgentMessage> = None;
    loop {
        if !first_turn {
            shared.emit_heard(&events::turn_start()).await;
            // Tools that joined or left during the run (an MCP server connected, a search
            // loaded some) are recorded at the turn's start, as pi records them.
            record_tool_set(&shared, plugin_tools, &mut run_messages);
        }
        first_turn = false;
        deliver_queued(&shared, std::mem::take(&mut pending), &mut run_messages);
        if let Some(message) = reminder.take() {
            deliver(&shared, message, &mut run_messages);
        }

        let (assistant, triggered) = stream_turn(&shared, &cancel, plugin_tools).await;
        if !triggered.is_empty() {
            // A streamed rule stopped the answer: it is dropped, the rule goes to the model as
            // a reminder, and the run goes on.
            shared.emit(&events::turn_end(&AgentMessage::Assistant(assistant), &[]));
            let rules: Vec<Value> = triggered.iter().map(|r| r.to_json()).collect();
            shared.emit(&SessionEvent::TtsrTriggered { rules });
            let text: Vec<String> = triggered.iter().map(|r| r.reminder()).collect();
            reminder = Some(AgentMessage::user(&text.join("\n\n"), Vec::new()));
            continue;
        }
        if retry_attempt > 0 && last_answer.is_none() && assistant.stop_reason != StopReason::Error
        {
            shared.emit(&retry::end_event(true, retry_attempt, None));
        }
        last_answer = Some(assistant.clone());
        let assistant_message = AgentMessage::Assistant(assistant.clone());
        run_messages.push(assistant_message.clone());
        if matches!(
            assistant.stop_reason,
            StopReason::Error | StopReason::Aborted
        ) {
            shared
                .emit_heard(&events::turn_end(&assistant_message, &[]))
                .await;
            break;
        }
        let has_calls = assistant.tool_calls().next().is_some();
        let (results, steering) = if has_calls && assistant.stop_reason == StopReason::Length {
            // Calls cut off at the output limit never run; the model is asked again.
            let results = crate::agent::run::tool_calls::fail_truncated_calls(&shared, &assistant);
            (results, Vec::new())
        } else if has_calls {
            crate::agent::run::tool_calls::run_tool_calls(
                &shared,
                &assistant,
                &cancel,
                plugin_tools,
            )
            .await
        } else {
            (Vec::new(), Vec::new())
        };
        run_messages.extend(results.iter().cloned().map(AgentMessage::ToolResult));
        shared
            .emit_heard(&events::turn_end(&assistant_message, &results))
            .await;
        // pi's `terminate`: when every call of the batch asked it, the model is not asked again
        // for these results (steering and follow-ups still go on, as in pi).
        let ids: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
        let has_calls = has_calls && !shared.extensions.batch_terminates(&ids);

        pending = if steering.is_empty() {
            shared.state().poll_steering()
        } else {
            steering
        };
        if has_calls || !pending.is_empty() {
            continue;
        }
        pending = shared.state().poll_follow_up();
        if pending.is_empty() {
            // Incomplete todos keep the run going, a bounded number of times.
            match todo_reminder(&shared, &mut reminders) {
                Some(message) => reminder = Some(message),
                None => break,
            }
        }
    }
    (last_answer, run_messages)
}

/// The reminder for a run that would end with incomplete todos (emitting `todo_reminder`), or
/// `None` when there are none or the run was reminded enough.
fn todo_reminder(shared: &Shared, reminders: &mut u32) -> Option<AgentMessage> {
    let left = todos::incomplete(shared.state().todos());
    if left.is_empty() || *reminders >= todos::MAX_REMINDERS {
        return None;
    }
    *reminders += 1;
    shared.emit(&SessionEvent::TodoReminder {
        todos: left.clone(),
        attempt: *reminders,
        max_attempts: todos::MAX_REMINDERS,
    });
    Some(AgentMessage::user(&todos::reminder_text(&left), Vec::new()))
}

/// Appends a message and emits its `message_start` / `message_end`; the first user message of
/// a run carries the `clientMessageId` its prompt was given.
fn deliver(shared: &Shared, message: AgentMessage, run_messages: &mut Vec<AgentMessage>) {
    let client_id = match &message {
        AgentMessage::User(_) => shared.state().prompt_client_id.take(),
        _ => None,
    };
    deliver_as(shared, message, client_id, run_messages);
}

/// Appends a message and emits its `message_start` (with `client_id`) / `message_end`.
fn deliver_as(
    shared: &Shared,
    message: AgentMessage,
    client_id: Option<String>,
    run_messages: &mut Vec<AgentMessage>,
) {
    shared.emit(&SessionEvent::MessageStart {
        message: message.clone(),
        client_message_id: client_id,
    });
    shared.emit(&events::message_end(&message));
    shared.state().append(message.clone());
    run_messages.push(message);
}

/// Delivers dequeued messages; the queues' new contents are announced first.
fn deliver_queued(shared: &Shared, queued: Vec<Queued>, run_messages: &mut Vec<AgentMessage>) {
    if queued.is_empty() {
        return;
    }
    shared.emit_queue_update();
    for item in queued {
        deliver_as(shared, item.message, item.client_id, run_messages);
    }
}

/// Streams one assistant answer, emitting `message_start`, the updates and `message_end`, and
/// appends it to the conversation — unless a streamed rule triggers: then the answer stops,
/// is not kept, and the rules that matched are returned with it.
async fn stream_turn(
    shared: &Arc<Shared>,
    cancel: &CancellationToken,
    plugin_tools: &PluginTools,
) -> (AssistantMessage, Vec<Rule>) {
    // The conversation is copied out of the state only for what reads or replaces it while
    // the state is not held (a `context` hook, a virtual model's router); otherwise the request
    // is built from the state's own messages. A long session's copy cost more than the rest of
    // the turn.
    let copied = shared.extensions.wants("context")
        || shared
            .state()
            .model()
            .is_some_and(crate::model::Model::is_virtual);
    let (model, thinking, mut messages, session_id, output_limit, max_answer, request_settings) = {
        let state = shared.state();
        (
            state.model().cloned(),
            state.thinking(),
            if copied {
                state.messages().to_vec()
            } else {
                Vec::new()
            },
            state.session_id().to_string(),
            state.output_limit(),
            state.max_answer_bytes(),
            state.request_settings(),
        )
    };
    let mut received = 0usize;
    let began = std::time::Instant::now();
    let retry_failed = shared.state().take_retry_failed();
    let Some(model) = model else {
        let mut failed = AssistantMessage::empty("", "", "");
        failed.stop_reason = StopReason::Error;
        failed.error_message = Some(no_model_message());
        stamp(&mut failed, began, thinking);
        return (finish_turn(shared, failed, false), Vec::new());
    };
    let mut assembler = StreamAssembler::new(&model);
    let resources = shared.resources();
    let fired = shared.state().triggered_rules().clone();
    let mut watch = RuleWatch::new(
        resources
            .rules
            .iter()
            .filter(|r| !fired.contains(&r.key()))
            .collect(),
    );
    let mut triggered: Vec<Rule> = Vec::new();
    if cancel.is_cancelled() {
        let mut aborted =
            assembler.fail(StopReason::Aborted, aborted_message(&model.api).to_string());
        stamp(&mut aborted, began, thinking);
        return (finish_turn(shared, aborted, false), Vec::new());
    }
    let tools = shared.tools_of(plugin_tools);
    let prompt = hooks::system_prompt(shared, &tools);
    hooks::context(shared, &mut messages).await;
    // A virtual model's request goes where the extension that registered it routes it.
    let (model, thinking) = if model.is_virtual() {
        let reason = routing::reason_of(&messages, retry_failed.is_some());
        let routed = tokio::select! {
            routed = routing::route(shared, &model, thinking, &messages, reason, retry_failed) => routed,
            _ = cancel.cancelled() => {
                let mut aborted =
                    assembler.fail(StopReason::Aborted, aborted_message(&model.api).to_string());
                stamp(&mut aborted, began, thinking);
                return (finish_turn(shared, aborted, false), Vec::new());
            }
        };
        match routed {
            Ok(route) => {
                shared.state().set_routed_model(route.model.clone());
                assembler = StreamAssembler::new(&route.model);
                (route.model, route.thinking)
            }
            Err(error) => {
                let mut failed = assembler.fail(StopReason::Error, error);
                stamp(&mut failed, began, thinking);
                return (finish_turn(shared, failed, false), Vec::new());
            }
        }
    } else {
        (model, thinking)
    };
    let registry = shared.models();
    let renewed = registry.refresh_oauth(&model.provider).await;
    // The prefix cache serves the session's own conversation, sent by a first-party provider.
    let provider_hash = shared
        .host
        .provider_for_api(&model.api)
        .filter(|plugin| {
            plugin.origin == crate::plugin_host::discovery::Origin::Embedded
                && crate::agent::run::history_cache::SERVED_APIS.contains(&model.api.as_str())
        })
        .map(|plugin| plugin.hash.clone());
    let build = |auth: crate::agent::models::RequestAuth,
                 messages: &dyn Messages,
                 history: Option<request::History<'_>>,
                 mode: Mode| {
        request::request(
            RequestParts {
                model: &model,
                system_prompt: &prompt,
                messages,
                tools: &tools,
                auth,
                thinking,
                session_id: &session_id,
                output_limit,
                settings: &request_settings,
                history,
            },
            mode,
        )
    };
    let auth = renewed
        .and_then(|()| registry.request_auth(&model.provider))
        .map_err(RequestError::from);
    // A conversation without a cached prefix is learned in steps first.
    if let (false, Ok(auth), Some(provider)) = (copied, &auth, provider_hash.as_deref()) {
        let step = |messages: &dyn Messages, history: request::History<'_>| {
            build(auth.clone(), messages, Some(history), Mode::Learning)
        };
        crate::agent::run::history_learning::learn(shared, provider, cancel, &step).await;
    }
    let request = auth.and_then(|auth| {
        let state;
        let held;
        let (messages, history): (&dyn Messages, _) = if copied {
            (&messages, None)
        } else {
            state = shared.state();
            held = state.messages();
            let history = provider_hash.as_deref().map(|provider| request::History {
                cache: &shared.history_cache,
                generation: state.messages_generation(),
                provider,
                session: state.session_file_path(),
            });
            (&held, history)
        };
        match build(auth, messages, history, Mode::Request) {
            Ok(Some((request, splice))) => Ok((request, splice)),
            Ok(None) => unreachable!("a request is always built"),
            Err(err) => Err(RequestError::from(err)),
        }
    });
    let hooks = crate::agent::extensions::provider_hooks::for_extensions(&shared.extensions);
    match request.and_then(|(request, splice)| Ok(shared.host.complete(request, hooks, splice)?)) {
        Err(error) => {
            assembler.fail(StopReason::Error, error.to_string());
        }
        Ok(mut stream) => 'stream: loop {
            let batch = tokio::select! {
                batch = stream.next() => batch,
                _ = cancel.cancelled() => {
                    drop(stream);
                    assembler.fail(StopReason::Aborted, aborted_message(&model.api).to_string());
                    break;
                }
            };
            match batch {
                None => {
                    if !assembler.finished() {
                        assembler.fail(
                            StopReason::Error,
                            "The provider ended the response without finishing it".to_string(),
                        );
                    }
                    break;
                }
                Some(Err(err)) => {
                    assembler.fail(StopReason::Error, err.to_string());
                    break;
                }
                Some(Ok(batch)) => {
                    for event in batch {
                        // A batch can hold a whole answer: abort is checked at every event.
                        if cancel.is_cancelled() {
                            drop(stream);
                            assembler
                                .fail(StopReason::Aborted, aborted_message(&model.api).to_string());
                            break 'stream;
                        }
                        if let StreamEvent::TextDelta(delta) | StreamEvent::ToolcallDelta(delta) =
                            &event
                        {
                            watch.push(&delta.delta);
                        }
                        if let StreamEvent::TextDelta(delta)
                        | StreamEvent::ThinkingDelta(delta)
                        | StreamEvent::ToolcallDelta(delta) = &event
                        {
                            received += delta.delta.len();
                            if received > max_answer {
                                drop(stream);
                                assembler.fail(
                                    StopReason::Error,
                                    format!(
                                        "The answer passed {} and was stopped (settings answer.maxBytes)",
                                        pith_sdk::text::format_size(max_answer)
                                    ),
                                );
                                break 'stream;
                            }
                        }
                        match assembler.apply(event) {
                            Produced::Started(snapshot) => {
                                shared.emit(&SessionEvent::MessageStart {
                                    message: AgentMessage::Assistant(*snapshot),
                                    client_message_id: None,
                                })
                            }
                            Produced::Update {
                                kind,
                                index,
                                payload,
                            } => {
                                if let Some(snapshot) = assembler.ensure_started() {
                                    shared.emit(&SessionEvent::MessageStart {
                                        message: AgentMessage::Assistant(snapshot),
                                        client_message_id: None,
                                    });
                                }
                                let update = AssistantUpdate {
                                    kind,
                                    content_index: index,
                                    payload: &payload,
                                    message: assembler.message(),
                                };
                                // Waiting on a slow host never holds up an abort.
                                let aborted = tokio::select! {
                                    biased;
                                    _ = cancel.cancelled() => true,
                                    _ = shared.emit_update(&update) => false,
                                };
                                if aborted {
                                    drop(stream);
                                    assembler.fail(
                                        StopReason::Aborted,
                                        aborted_message(&model.api).to_string(),
                                    );
                                    break 'stream;
                                }
                            }
                            Produced::Finished | Produced::Nothing => {}
                        }
                    }
                    if !watch.is_idle() {
                        triggered = watch.check().into_iter().cloned().collect();
                        if !triggered.is_empty() {
                            drop(stream);
                            assembler.fail(StopReason::Aborted, RULE_STOPPED.to_string());
                            break;
                        }
                    }
                    if assembler.finished() {
                        break;
                    }
                }
            }
        },
    }
    let started = assembler.started();
    if !triggered.is_empty() {
        {
            let mut state = shared.state();
            for rule in &triggered {
                state.mark_rule_triggered(rule.key());
            }
        }
        let mut message = assembler.finish();
        stamp(&mut message, began, thinking);
        let agent_message = AgentMessage::Assistant(message.clone());
        if !started {
            shared.emit(&events::message_start(&agent_message));
        }
        shared.emit(&events::message_end(&agent_message));
        return (message, triggered);
    }
    let mut message = assembler.finish();
    stamp(&mut message, began, thinking);
    (finish_turn(shared, message, started), Vec::new())
}

/// Records how the answer went: the wire's stop reason, how long it took since `began`, and
/// the thinking level it was asked with.
fn stamp(message: &mut AssistantMessage, began: std::time::Instant, thinking: ThinkingLevel) {
    message.raw_stop_reason =
        crate::agent::run::stream::raw_stop_reason(&message.api, message.stop_reason)
            .map(str::to_string);
    message.duration_ms = Some(began.elapsed().as_millis() as u64);
    message.thinking_level = Some(thinking.as_str().to_string());
}

/// Emits the end of an answer (and its start, when the stream never started) and appends it.
fn finish_turn(shared: &Shared, message: AssistantMessage, started: bool) -> AssistantMessage {
    let agent_message = AgentMessage::Assistant(message.clone());
    if !started {
        shared.emit(&events::message_start(&agent_message));
    }
    shared.emit(&events::message_end(&agent_message));
    shared.state().append(agent_message);
    message
}
