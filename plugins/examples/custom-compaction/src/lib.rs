//! A port of pi's `examples/extensions/custom-compaction.ts`: at `session_before_compact` it
//! summarizes every message the compaction drops (pi's `messagesToSummarize` and
//! `turnPrefixMessages`, with the previous summary for context) with `google/gemini-2.5-flash`,
//! through the host's `completion` (the `models` capability, at most 8192 tokens), and gives
//! that summary to the compaction, which keeps the entries from pi's `firstKeptEntryId` on. It
//! notifies `Custom compaction extension triggered`, then `Custom compaction: summarizing <n>
//! messages (<tokens> tokens) with gemini-2.5-flash...`; without that model, or with an empty
//! answer, it warns and leaves the compaction to the built-in summary. The conversation is
//! written out as pi's `serializeConversation(convertToLlm(messages))` writes it
//! (`pith_sdk::conversation::serialize`).
//!
//! Differences from pi:
//! - pi passes the compaction's abort `signal` to the request and stays quiet about an empty
//!   summary once aborted; no abort signal reaches a pith extension, so the request runs to
//!   its end and the warning is always given.
//! - pi's request options `cacheRetention: "none"` and a fresh `sessionId` have no counterpart
//!   in pith's `completion-request`.
//! - pi's `modelRegistry.complete` does not throw when the provider fails (the answer has no
//!   text), so a failed request gives the empty-summary warning; so does the port, logging the
//!   error. A plugin not granted `models` (pith's grant) gets pi's `Compaction failed: <reason>`.
//! - `<tokens>` is grouped as pi's `toLocaleString()` groups it under `LANG=C.UTF-8` (`6,100`).

use pith_sdk::extension::*;
use serde_json::Value;

const PROVIDER: &str = "google";
const MODEL: &str = "gemini-2.5-flash";

/// The extension's summary request.
fn summary_request_text(previous_summary: Option<&str>, conversation: &str) -> String {
    let previous_context = previous_summary
        .map(|summary| format!("\n\nPrevious session summary for context:\n{summary}"))
        .unwrap_or_default();
    format!(
        "You are a conversation summarizer. Create a comprehensive summary of this conversation that captures:{previous_context}

1. The main goals and objectives discussed
2. Key decisions made and their rationale
3. Important code changes, file modifications, or technical details
4. Current state of any ongoing work
5. Any blockers, issues, or open questions
6. Next steps that were planned or suggested

Be thorough but concise. The summary will replace the ENTIRE conversation history, so include all information needed to continue the work effectively.

Format the summary as structured markdown with clear sections.

<conversation>
{conversation}
</conversation>"
    )
}

fn notify(message: &str, kind: ui::NotifyKind) {
    ui::notify(message, Some(kind));
}

/// pi's `session_before_compact` handler: the compaction to use, or `None` for pith's own.
fn custom_compaction(event: &BeforeCompactEvent) -> Option<CompactionSummary> {
    notify(
        "Custom compaction extension triggered",
        ui::NotifyKind::Info,
    );

    let preparation = &event.preparation;
    let tokens_before = preparation.tokens_before;
    let first_kept_entry_id = preparation.first_kept_entry_id.clone();
    let previous_summary = preparation
        .previous_summary
        .as_deref()
        .filter(|s| !s.is_empty());

    let Some(model) = models::find(PROVIDER, MODEL) else {
        notify(
            "Could not find Gemini Flash model, using default compaction",
            ui::NotifyKind::Warning,
        );
        return None;
    };

    // pi's preparation holds no system records (prompt state, not conversation).
    let all_messages: Vec<entries::AgentMessage> = preparation
        .messages_to_summarize
        .iter()
        .chain(&preparation.turn_prefix_messages)
        .filter(|m| !matches!(m, entries::AgentMessage::System(_)))
        .cloned()
        .collect();

    notify(
        &format!(
            "Custom compaction: summarizing {} messages ({} tokens) with {}...",
            all_messages.len(),
            pith_sdk::js::locale_number(&Value::from(tokens_before)),
            model.id
        ),
        ui::NotifyKind::Info,
    );

    let conversation = pith_sdk::conversation::serialize(&all_messages);
    let request = completion::CompletionRequest {
        provider: model.provider,
        model: model.id,
        system_prompt: None,
        messages: vec![completion::ChatMessage::User(vec![Content::Text(
            summary_request_text(previous_summary, &conversation),
        )])],
        max_tokens: Some(8192),
        thinking: None,
    };
    let (provider, model_id) = (request.provider.clone(), request.model.clone());
    let (summary, usage) = match completion::complete(&request) {
        Ok(answer) => (
            answer.text,
            Some(SummaryUsage {
                provider,
                model: model_id,
                tokens: answer.usage,
            }),
        ),
        Err(completion::CompletionError::Denied(reason)) => {
            notify(
                &format!("Compaction failed: {reason}"),
                ui::NotifyKind::Error,
            );
            return None;
        }
        // pi's `complete` answers a failed request with a message without text.
        Err(error) => {
            pith_sdk::host::warn(&format!("compaction summary request failed: {error:?}"));
            (String::new(), None)
        }
    };

    if pith_sdk::js::trim(&summary).is_empty() {
        notify(
            "Compaction summary was empty, using default compaction",
            ui::NotifyKind::Warning,
        );
        return None;
    }

    Some(CompactionSummary {
        summary,
        first_kept_entry_id,
        tokens_before,
        details: None,
        usage,
    })
}

struct CustomCompaction;

impl Extension for CustomCompaction {
    fn new() -> Self {
        CustomCompaction
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("custom-compaction").on(&["session_before_compact"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        let Event::SessionBeforeCompact(compact) = event else {
            return Ok(EventResult::Continue);
        };
        Ok(match custom_compaction(&compact) {
            Some(summary) => EventResult::Compaction(summary),
            None => EventResult::Continue,
        })
    }
}

pith_sdk::export_extension!(CustomCompaction);
