//! Compaction as the session runs it: the `compact` command, the extensions'
//! `session_before_compact` hook, the summary request and the compaction entry (the
//! algorithm is in [`crate::agent::conversation::compaction`]).

use super::*;
use crate::agent::conversation::message::Usage;
use crate::agent::session::answers::CompactionResult;

impl Session {
    /// `compact`: aborts any run, then summarizes the older conversation; the compaction result.
    pub async fn compact(
        &self,
        instructions: Option<&str>,
    ) -> Result<CompactionResult, SessionError> {
        self.abort().await;
        self.shared.compact(instructions, "manual", false).await
    }

    /// An extension's `compact` (pi's `ctx.compact`): as [`Session::compact`], but one refused
    /// before it starts (no model, nothing to compact, already compacted) is told as pi tells
    /// it there, a `compaction_start` and a `compaction_end` with the error, so the extension
    /// hears it.
    pub async fn compact_for_extension(
        &self,
        instructions: Option<&str>,
    ) -> Result<CompactionResult, SessionError> {
        let outcome = self.compact(instructions).await;
        if let Err(
            err @ (SessionError::NoModelSelected
            | SessionError::NothingToCompact
            | SessionError::AlreadyCompacted),
        ) = &outcome
        {
            compaction_start(&self.shared, "manual");
            compaction_end(
                &self.shared,
                "manual",
                false,
                None,
                false,
                Some(format!("Compaction failed: {err}")),
            );
        }
        outcome
    }
}

impl Shared {
    /// Compacts the session (`reason`: manual, threshold or overflow), emitting `compaction_start`
    /// and `compaction_end` (`willRetry` when `retry` and it succeeded: the run goes on after it;
    /// an automatic compaction with nothing to summarize emits nothing); returns the result
    /// (`summary`, `firstKeptEntryId`, `tokensBefore`, `details`).
    pub async fn compact(
        self: &Arc<Self>,
        instructions: Option<&str>,
        reason: &str,
        retry: bool,
    ) -> Result<CompactionResult, SessionError> {
        let shared = self;
        use crate::agent::conversation::compaction;
        let (model, messages, ids, policy) = {
            let state = shared.state();
            let Some(model) = state.model.clone() else {
                return Err(SessionError::NoModelSelected);
            };
            if state.messages.is_empty() && state.store.held_context().messages.is_empty() {
                return Err(SessionError::NothingToCompact);
            }
            if state.store.leaf_type() == Some("compaction") {
                return Err(SessionError::AlreadyCompacted);
            }
            (
                model,
                // Read whole: the conversation is summarized.
                crate::agent::conversation::messages::Messages::to_vec(&state.messages()),
                state.entry_ids.clone(),
                state.compaction_policy(),
            )
        };
        // The system messages first (a record for hosts, kept in front), then the previous
        // summary, if any, then the conversation.
        let records = messages
            .iter()
            .take_while(|m| matches!(m, AgentMessage::System(_)))
            .count();
        let previous = match messages.get(records) {
            Some(AgentMessage::CompactionSummary(summary)) => Some(summary.summary.clone()),
            _ => None,
        };
        let skip = records + usize::from(previous.is_some());
        let (body, body_ids) = (&messages[skip..], &ids[skip..]);
        // `older` is summarized; with pi 1.5's split turns, `prefix` (the start of the turn the
        // cut falls in) is summarized as the turn's context, and the tail is kept.
        let window = routed_window(shared, &model, &messages);
        let (older_end, kept_from, first_kept) = if reason == "overflow" {
            // The cut must leave less than before, or the overflow repeats.
            let cut = compaction::overflow_cut_point(body, policy.keep_recent_tokens, window);
            // Keeping nothing: an id not on the branch keeps no entry before the compaction.
            (cut, cut, body_ids.get(cut).cloned().unwrap_or_default())
        } else if shared.behaviour.split_turn_compaction {
            // Past the threshold the context is near the window: the kept tail is at most a
            // quarter of it, so that the compaction makes room.
            let keep = match (reason, window) {
                ("manual", _) | (_, 0) => policy.keep_recent_tokens,
                (_, window) => policy.keep_recent_tokens.min(window / 4),
            };
            let (turn, kept) = compaction::split_cut_point(body, keep);
            let first_kept = body_ids.get(kept).or(body_ids.last()).cloned();
            (turn, kept, first_kept.unwrap_or_default())
        } else {
            let cut = compaction::cut_point(body, policy.keep_recent_tokens);
            let first_kept = body_ids.get(cut).or(body_ids.last()).cloned();
            (cut, cut, first_kept.unwrap_or_default())
        };
        let older = &body[..older_end];
        let prefix = &body[older_end..kept_from];
        let tokens_before = crate::agent::conversation::tokens::context_tokens(&messages);
        let nothing =
            kept_from == 0 && reason != "overflow" && shared.behaviour.split_turn_compaction;
        if nothing && reason != "manual" {
            // An automatic compaction with nothing to summarize does not start (pi 1.5 sends
            // no frames for it).
            return Err(SessionError::NothingToCompact);
        }
        shared.begin_compaction();
        compaction_start(shared, reason);
        // The compaction ends after its event, so a prompt waiting for it comes after both the
        // compaction entry and `compaction_end`.
        let fail = |error: SessionError| {
            compaction_end(shared, reason, retry, None, false, Some(error.to_string()));
            shared.end_compaction();
            Err(error)
        };
        if nothing {
            // Everything is within the kept tail: there is nothing to summarize.
            let error = SessionError::NothingToCompact;
            compaction_end(
                shared,
                reason,
                retry,
                None,
                false,
                Some(format!("Compaction failed: {error}")),
            );
            shared.end_compaction();
            return Err(error);
        }
        // An extension may cancel the compaction or supply the summary.
        let cut = Cut {
            older,
            prefix,
            previous: previous.as_deref(),
        };
        let supplied = match before_compact(
            shared,
            instructions,
            &cut,
            &first_kept,
            tokens_before,
            (reason, retry),
        )
        .await
        {
            Err(cancelled) => {
                // A cancellation is an abort, as pi reports it (no error message in the event).
                compaction_end(shared, reason, retry, None, true, None);
                shared.end_compaction();
                return Err(cancelled);
            }
            Ok(supplied) => supplied,
        };
        if let Some(result) = supplied {
            let mut state = shared.state();
            let fields = entry_fields(&state, &result, None, true);
            let id = state.store.append("compaction", fields);
            let context = state.store.held_context();
            state.load_context(context);
            drop(state);
            compaction_end(shared, reason, retry, Some(&result), false, None);
            session_compact(shared, (&id, &result), true, reason, retry);
            shared.end_compaction();
            return Ok(result);
        }
        // A virtual model's summary goes where its router sends a `direct` request.
        let model = if model.is_virtual() {
            let thinking = shared.state().thinking();
            let direct = crate::agent::extensions::hooks::RouteReason::Direct;
            match crate::agent::run::routing::route(
                shared, &model, thinking, &messages, direct, None,
            )
            .await
            {
                Ok(route) => route.model,
                Err(err) => return fail(SessionError::SummarizationFailed(err)),
            }
        } else {
            model
        };
        let outcome = summarize_cut(shared, reason, &model, cut, instructions, policy).await;
        let (summary, usage) = match outcome {
            Ok(outcome) => outcome,
            Err(err) => return fail(SessionError::SummarizationFailed(err)),
        };
        let mut state = shared.state();
        let details = compaction::file_details(&body[..kept_from]);
        let mut summary = summary;
        for (key, tag) in [
            ("readFiles", "read-files"),
            ("modifiedFiles", "modified-files"),
        ] {
            let files: Vec<&str> = details[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !files.is_empty() {
                summary.push_str(&format!("\n\n<{tag}>\n{}\n</{tag}>", files.join("\n")));
            }
        }
        let mut result = CompactionResult {
            summary,
            first_kept_entry_id: first_kept,
            tokens_before,
            estimated_tokens_after: None,
            usage: None,
            details,
        };
        let fields = entry_fields(&state, &result, Some(json!(usage)), false);
        let id = state.store.append("compaction", fields);
        let context = state.store.held_context();
        state.load_context(context);
        let tokens_after = crate::agent::conversation::tokens::context_tokens(&state.messages());
        drop(state);
        // pi 1.5's result: the estimate of what is left, and the summary request's usage.
        result.estimated_tokens_after = Some(tokens_after);
        result.usage = Some(usage);
        compaction_end(shared, reason, retry, Some(&result), false, None);
        session_compact(shared, (&id, &result), false, reason, retry);
        shared.end_compaction();
        Ok(result)
    }
}

/// The window the context must fit: the selected model's, or under a virtual model that of
/// the physical model that answered (or failed) last, where its requests went.
fn routed_window(shared: &Shared, model: &Model, messages: &[AgentMessage]) -> u64 {
    if !model.is_virtual() {
        return model.context_window;
    }
    let registry = shared.models();
    messages
        .iter()
        .rev()
        .find_map(|message| match message {
            AgentMessage::Assistant(answer) => registry
                .find(&answer.provider, &answer.model)
                .filter(|physical| !physical.is_virtual()),
            _ => None,
        })
        .map_or(model.context_window, |physical| physical.context_window)
}

/// pi's `session_compact` to the extensions: the compaction `result` was written as entry `id`.
fn session_compact(
    shared: &Shared,
    (id, result): (&str, &CompactionResult),
    from_extension: bool,
    reason: &str,
    retry: bool,
) {
    use crate::agent::extensions::hooks::{Event, SessionCompactEvent};
    shared.extensions.observe_typed("session_compact", || {
        Event::SessionCompact(SessionCompactEvent {
            entry_id: id.to_string(),
            summary: result.summary.clone(),
            first_kept_entry_id: result.first_kept_entry_id.clone(),
            tokens_before: result.tokens_before,
            from_extension,
            reason: compaction_reason(reason),
            will_retry: retry,
        })
    });
}

/// A compaction's reason (`manual`, `threshold`, `overflow`) as the extensions get it.
fn compaction_reason(reason: &str) -> crate::agent::extensions::hooks::CompactionReason {
    use crate::agent::extensions::hooks::CompactionReason;
    match reason {
        "threshold" => CompactionReason::Threshold,
        "overflow" => CompactionReason::Overflow,
        _ => CompactionReason::Manual,
    }
}

/// What a compaction summarizes.
struct Cut<'a> {
    /// The conversation before the turn the cut falls in.
    older: &'a [AgentMessage],
    /// The start of that turn, when the cut splits it.
    prefix: &'a [AgentMessage],
    /// The summary of an earlier compaction, which the new one continues.
    previous: Option<&'a str>,
}

/// A compaction entry's fields, as pi 1.5.2 writes them: the result (`summary`,
/// `firstKeptEntryId`, `tokensBefore`, `details`), the summary requests' `usage`, `fromHook`,
/// and `systemMessage`, the system message in force (the compacted context's leading one).
fn entry_fields(
    state: &State,
    result: &CompactionResult,
    usage: Option<Value>,
    from_hook: bool,
) -> serde_json::Map<String, Value> {
    let mut fields = match serde_json::to_value(result) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    if let Some(usage) = usage.filter(|u| !u.is_null()) {
        fields.insert("usage".into(), usage);
    }
    fields.insert("fromHook".into(), json!(from_hook));
    // What the system messages leave in force, as one message (pi's `getCurrentSystemMessage`).
    let system = crate::agent::conversation::system_record::InForce::replay(&state.messages())
        .and_then(|in_force| serde_json::to_value(AgentMessage::System(in_force.message())).ok());
    if let Some(mut system) = system {
        system["timestamp"] = json!(crate::time::now_millis());
        fields.insert("systemMessage".into(), system);
    }
    fields
}

/// The summary of what a cut leaves out, and the usage of its requests: `older` summarized
/// (after `previous`, the summary it continues), then, when the cut split a turn, the turn's
/// start summarized as its context (pi 1.5's "Turn Context (split turn)").
async fn summarize_cut(
    shared: &Arc<Shared>,
    reason: &str,
    model: &Model,
    cut: Cut<'_>,
    instructions: Option<&str>,
    policy: crate::agent::session::policies::CompactionPolicy,
) -> Result<(String, Usage), String> {
    let Cut {
        older,
        prefix,
        previous,
    } = cut;
    use crate::agent::conversation::compaction::summarize;
    let key = || shared.models().api_key(&model.provider);
    let run = |messages, previous| {
        with_retries(shared, reason, move || {
            summarize(
                &shared.host,
                model,
                key(),
                messages,
                previous,
                instructions,
                policy,
            )
        })
    };
    if prefix.is_empty() {
        return run(older, previous).await;
    }
    let (history, mut usage) = if older.is_empty() {
        let kept = previous.unwrap_or("No prior history.").to_string();
        (kept, Usage::default())
    } else {
        run(older, previous).await?
    };
    let (turn, turn_usage) = run(prefix, None).await?;
    usage.add(&turn_usage);
    Ok((
        format!("{history}\n\n---\n\n**Turn Context (split turn):**\n\n{turn}"),
        usage,
    ))
}

/// Runs a summary request, retrying a transient failure as runs are retried (the session's
/// retry settings), with pi 1.5's `summarization_retry_*` events.
async fn with_retries<F, Fut>(
    shared: &Arc<Shared>,
    reason: &str,
    mut request: F,
) -> Result<(String, Usage), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(String, Usage), String>>,
{
    let (enabled, policy) = shared.state().retry_settings();
    let mut attempt = 0u32;
    loop {
        match request().await {
            Err(error)
                if enabled
                    && attempt < policy.max_retries
                    && crate::agent::run::retry::is_retryable(&error) =>
            {
                attempt += 1;
                let delay_ms = policy.delay_ms(attempt);
                shared.emit(&SessionEvent::SummarizationRetryScheduled {
                    attempt,
                    max_attempts: policy.max_retries,
                    delay_ms,
                    error_message: error,
                });
                tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
                shared.emit(&SessionEvent::SummarizationRetryAttemptStart {
                    source: "compaction".into(),
                    reason: reason.to_string(),
                });
            }
            outcome => {
                if attempt > 0 {
                    shared.emit(&SessionEvent::SummarizationRetryFinished);
                }
                return outcome;
            }
        }
    }
}

/// `compaction_start`, after `auto_compaction_start` for an automatic compaction (pi 0.73's
/// frame; the 1.5 profile leaves it out).
fn compaction_start(shared: &Shared, reason: &str) {
    if reason != "manual" {
        shared.emit(&SessionEvent::AutoCompactionStart {
            reason: reason.to_string(),
        });
    }
    shared.emit(&SessionEvent::CompactionStart {
        reason: reason.to_string(),
    });
}

/// `compaction_end`, then `auto_compaction_end` for an automatic compaction; `willRetry` when
/// the run retries after it (`retry`) and it succeeded, as pi's overflow recovery.
fn compaction_end(
    shared: &Shared,
    reason: &str,
    retry: bool,
    result: Option<&CompactionResult>,
    aborted: bool,
    error_message: Option<String>,
) {
    let result = result.and_then(|result| serde_json::to_value(result).ok());
    let will_retry = retry && result.is_some();
    let automatic = reason != "manual";
    let auto = automatic.then(|| SessionEvent::AutoCompactionEnd {
        result: result.clone(),
        aborted,
        will_retry,
        error_message: error_message.clone(),
    });
    shared.emit(&SessionEvent::CompactionEnd {
        reason: reason.to_string(),
        result,
        aborted,
        will_retry,
        error_message,
    });
    if let Some(auto) = auto {
        shared.emit(&auto);
    }
}

/// `session_before_compact`: `Err` when an extension cancelled, `Ok(Some(result))` when one
/// supplied the summary.
async fn before_compact(
    shared: &Shared,
    instructions: Option<&str>,
    cut: &Cut<'_>,
    first_kept: &str,
    tokens_before: u64,
    (reason, will_retry): (&str, bool),
) -> Result<Option<CompactionResult>, SessionError> {
    use crate::agent::extensions::hooks::{BeforeCompactEvent, CompactionPreparation, EventResult};
    use crate::agent::extensions::typed;
    if !shared.extensions.wants("session_before_compact") {
        return Ok(None);
    }
    const KIND: &str = "session_before_compact";
    let (event, pi_json) = {
        let state = shared.state();
        let branch = state.store.branch_entries();
        let event = HookEvent::SessionBeforeCompact(BeforeCompactEvent {
            custom_instructions: instructions.map(str::to_string),
            preparation: CompactionPreparation {
                first_kept_entry_id: first_kept.to_string(),
                messages_to_summarize: cut.older.iter().map(typed::message).collect(),
                turn_prefix_messages: cut.prefix.iter().map(typed::message).collect(),
                is_split_turn: !cut.prefix.is_empty(),
                tokens_before,
                previous_summary: cut.previous.map(str::to_string),
            },
            branch_entries: branch
                .iter()
                .filter_map(Value::as_object)
                .map(typed::entry)
                .collect(),
            reason: compaction_reason(reason),
            will_retry,
        });
        // An extension built for 0.1 gets pi's JSON: the preparation and the branch, on two
        // lines (JSON text holds no raw line break), passed on as they are.
        let pi_json = shared.extensions.json_for_v1(KIND, &event, || {
            let preparation = json!({
                "firstKeptEntryId": first_kept,
                "messagesToSummarize": cut.older,
                "turnPrefixMessages": cut.prefix,
                "tokensBefore": tokens_before,
                "previousSummary": cut.previous,
                "isSplitTurn": !cut.prefix.is_empty(),
            });
            format!("{preparation}\n{}", json!(branch))
        });
        (event, pi_json)
    };
    let outcome = shared.extensions.hook_as(KIND, event, pi_json).await;
    if outcome.cancelled() {
        return Err(SessionError::CompactionCancelled);
    }
    Ok(outcome
        .results
        .into_iter()
        .find_map(|(_, result)| match result {
            EventResult::Compaction(summary) => {
                let details = summary
                    .details
                    .and_then(|d| serde_json::from_str::<Value>(&d).ok())
                    .unwrap_or(Value::Null);
                // Priced at the rates of the model that answered (none when it is unknown).
                let usage = summary.usage.map(|spent| {
                    match shared.models().find(&spent.provider, &spent.model) {
                        Some(model) => {
                            crate::agent::run::stream::usage_with_cost(&spent.tokens, &model)
                        }
                        None => crate::agent::run::stream::unpriced(&spent.tokens),
                    }
                });
                Some(CompactionResult {
                    summary: summary.summary,
                    first_kept_entry_id: summary.first_kept_entry_id,
                    tokens_before: summary.tokens_before,
                    estimated_tokens_after: None,
                    usage,
                    details,
                })
            }
            _ => None,
        }))
}
