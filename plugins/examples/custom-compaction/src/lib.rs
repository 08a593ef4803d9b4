//! A port of pi's `examples/extensions/custom-compaction.ts`: at `session_before_compact` it
//! summarizes every message the compaction drops (pi's `messagesToSummarize` and
//! `turnPrefixMessages`, with the previous summary for context) with `google/gemini-2.5-flash`,
//! through the host's `completion` (the `models` capability, at most 8192 tokens), and gives
//! that summary to the compaction, which keeps the entries from pi's `firstKeptEntryId` on. It
//! notifies `Custom compaction extension triggered`, then `Custom compaction: summarizing <n>
//! messages (<tokens> tokens) with gemini-2.5-flash...`; without that model, or with an empty
//! answer, it warns and leaves the compaction to the built-in summary. The conversation is
//! written out as pi's `serializeConversation(convertToLlm(messages))` writes it.
//!
//! Differences from pi:
//! - pi's compaction result also carries the summary request's `usage`, which pi shows in
//!   `compaction_end` and the `compact` response; pith's `compaction-summary` has no usage
//!   field, so pith's result has none.
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

/// pi's limit on a tool result's characters in a serialized conversation.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// pi's `COMPACTION_SUMMARY_PREFIX` and `_SUFFIX`.
const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's `BRANCH_SUMMARY_PREFIX` and `_SUFFIX`.
const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// pi-ai's `contentText`: a string as it is, else the text blocks joined with `separator`.
fn content_text(content: &Value, separator: &str) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| b.get("text").map(pith_sdk::js::display).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

/// A user message of one text block (what `convertToLlm` turns other messages into).
fn user_text(text: String) -> Value {
    serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

/// pi's `bashExecutionToText`.
fn bash_execution_text(message: &Value) -> String {
    let field = |key: &str| message.get(key).filter(|v| !v.is_null());
    let command = field("command")
        .map(pith_sdk::js::display)
        .unwrap_or_default();
    let mut text = format!("Ran `{command}`\n");
    match field("output")
        .map(pith_sdk::js::display)
        .filter(|o| !o.is_empty())
    {
        Some(output) => text.push_str(&format!("```\n{output}\n```")),
        None => text.push_str("(no output)"),
    }
    let truthy = |key: &str| field(key).is_some_and(|v| v != &Value::Bool(false));
    if truthy("cancelled") {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = field("exitCode").filter(|c| c.as_f64() != Some(0.0)) {
        text.push_str(&format!(
            "\n\nCommand exited with code {}",
            pith_sdk::js::display(code)
        ));
    }
    if truthy("truncated")
        && let Some(path) = field("fullOutputPath")
            .map(pith_sdk::js::display)
            .filter(|p| !p.is_empty())
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

/// pi's `convertToLlm`: the session's own message kinds as the user messages the model sees.
fn convert_to_llm(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter_map(|m| {
            let role = m.get("role").and_then(Value::as_str)?;
            let summary = || {
                m.get("summary")
                    .map(pith_sdk::js::display)
                    .unwrap_or_default()
            };
            match role {
                "bashExecution" => {
                    if m.get("excludeFromContext")
                        .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
                    {
                        None
                    } else {
                        Some(user_text(bash_execution_text(m)))
                    }
                }
                "custom" => {
                    let content = match m.get("content") {
                        Some(Value::String(s)) => serde_json::json!([{"type": "text", "text": s}]),
                        Some(other) => other.clone(),
                        None => Value::Null,
                    };
                    Some(serde_json::json!({"role": "user", "content": content}))
                }
                "branchSummary" => Some(user_text(format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    summary()
                ))),
                "compactionSummary" => Some(user_text(format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    summary()
                ))),
                "system" | "user" | "assistant" | "toolResult" => Some(m.clone()),
                _ => None,
            }
        })
        .collect()
}

/// pi's `truncateForSummary`, counting UTF-16 code units as JavaScript does and never cutting a
/// character in two.
fn truncate_for_summary(text: &str, max_chars: usize) -> String {
    let length: usize = text.chars().map(char::len_utf16).sum();
    if length <= max_chars {
        return text.to_string();
    }
    let mut units = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        if units + c.len_utf16() > max_chars {
            break;
        }
        units += c.len_utf16();
        end = at + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        length - max_chars
    )
}

/// pi's `serializeConversation`: `[User]: …`, `[Assistant]: …`, `[Assistant tool calls]: …` and
/// `[Tool result]: …` parts, separated by blank lines; thinking is left out.
fn serialize_conversation(messages: &[Value]) -> String {
    let mut parts = Vec::new();
    for message in messages {
        let content = message.get("content").unwrap_or(&Value::Null);
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let text = content_text(content, "");
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Some("assistant") => {
                let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
                let is =
                    |b: &Value, kind: &str| b.get("type").and_then(Value::as_str) == Some(kind);
                let calls: Vec<String> = blocks
                    .iter()
                    .filter(|b| is(b, "toolCall"))
                    .map(|b| {
                        let arguments = match b.get("arguments") {
                            Some(Value::Object(map)) => pith_sdk::js::entries(map)
                                .into_iter()
                                .map(|(k, v)| format!("{k}={}", pith_sdk::js::stringify(v)))
                                .collect::<Vec<_>>()
                                .join(", "),
                            _ => String::new(),
                        };
                        let name = b.get("name").map(pith_sdk::js::display).unwrap_or_default();
                        format!("{name}({arguments})")
                    })
                    .collect();
                if blocks.iter().any(|b| is(b, "text")) {
                    parts.push(format!("[Assistant]: {}", content_text(content, "\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let text = content_text(content, "");
                if !text.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

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

    let preparation: Value = serde_json::from_str(&event.preparation).unwrap_or_default();
    let messages = |key: &str| -> Vec<Value> {
        preparation
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            // pi's preparation holds no system messages (prompt state, not conversation).
            .filter(|m| m.get("role").and_then(Value::as_str) != Some("system"))
            .cloned()
            .collect()
    };
    let tokens_before = preparation.get("tokensBefore").cloned().unwrap_or_default();
    let first_kept_entry_id = preparation
        .get("firstKeptEntryId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let previous_summary = preparation
        .get("previousSummary")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());

    let Some(model) = models::find(PROVIDER, MODEL) else {
        notify(
            "Could not find Gemini Flash model, using default compaction",
            ui::NotifyKind::Warning,
        );
        return None;
    };

    let mut all_messages = messages("messagesToSummarize");
    all_messages.extend(messages("turnPrefixMessages"));

    notify(
        &format!(
            "Custom compaction: summarizing {} messages ({} tokens) with {}...",
            all_messages.len(),
            pith_sdk::js::locale_number(&tokens_before),
            model.id
        ),
        ui::NotifyKind::Info,
    );

    let conversation = serialize_conversation(&convert_to_llm(&all_messages));
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
    let summary = match completion::complete(&request) {
        Ok(answer) => answer.text,
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
            String::new()
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
        tokens_before: tokens_before.as_u64().unwrap_or_default(),
        details: None,
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
