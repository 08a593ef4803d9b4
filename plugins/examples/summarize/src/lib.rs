//! A port of pi's `examples/extensions/summarize.ts`: `/summarize` writes the current branch's
//! user and assistant messages (their text, and a `Tool <name> was called with args <json>` line
//! per tool call) into a prompt and asks `openai/gpt-5.2` (reasoning effort `high`) for a
//! summary, through the host's `completion` (the `models` capability). It warns
//! `No conversation text found` on an empty conversation, and notifies `Preparing summary...`
//! before the request.
//!
//! Differences from pi:
//! - pi shows the summary only in its terminal (`ctx.ui.custom` with a Markdown view, and only
//!   when `ctx.mode` is `tui`); over RPC it shows and stores nothing. pith has no TUI, so the
//!   port asks for the summary and drops it, as pi does over RPC; the view is left out.
//! - pi's request options `cacheRetention: "none"` and a fresh `sessionId` have no counterpart
//!   in pith's `completion-request`: the host applies its own cache retention and no session
//!   id. The request carries no system prompt and no `max-tokens`, as pi's.
//! - pi's `modelRegistry.complete` does not throw when the provider fails (the answer is an
//!   error message without text), so a failed request ends the command silently; the port
//!   does the same and logs the error. An extension not granted `models` (pith's grant, which
//!   pi has not) fails the command with the host's reason.

use pith_sdk::extension::*;
use pith_sdk::types::{AssistantBlock, ThinkingLevel};
use serde_json::Value;

const PROVIDER: &str = "openai";
const MODEL: &str = "gpt-5.2";

/// pi's `buildConversationText`: per user or assistant message, `User: <text>` or
/// `Assistant: <text>` (its text blocks, joined and trimmed) and, for an answer, a line per tool
/// call; messages separated by a blank line.
fn conversation_text(branch: &[entries::SessionEntry]) -> String {
    use entries::{AgentMessage, EntryBody};
    let mut sections = Vec::new();
    for entry in branch {
        let EntryBody::Message(message) = &entry.body else {
            continue;
        };
        let (label, texts, calls): (&str, Vec<&str>, Vec<String>) = match message {
            AgentMessage::User(user) => (
                "User",
                user.content
                    .iter()
                    .filter_map(|part| match part {
                        Content::Text(text) => Some(text.as_str()),
                        Content::Image(_) => None,
                    })
                    .collect(),
                Vec::new(),
            ),
            AgentMessage::Assistant(answer) => (
                "Assistant",
                answer
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect(),
                answer
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantBlock::ToolCall(call) => {
                            // `block.arguments ?? {}`.
                            let arguments = serde_json::from_str::<Value>(&call.arguments)
                                .ok()
                                .filter(|a| !a.is_null())
                                .unwrap_or_else(|| Value::Object(Default::default()));
                            Some(format!(
                                "Tool {} was called with args {}",
                                call.name,
                                pith_sdk::js::stringify(&arguments)
                            ))
                        }
                        _ => None,
                    })
                    .collect(),
            ),
            _ => continue,
        };
        let mut lines = Vec::new();
        if !texts.is_empty() {
            let text = texts.join("\n");
            let text = pith_sdk::js::trim(&text);
            if !text.is_empty() {
                lines.push(format!("{label}: {text}"));
            }
        }
        lines.extend(calls);
        if !lines.is_empty() {
            sections.push(lines.join("\n"));
        }
    }
    sections.join("\n\n")
}

/// pi's `buildSummaryPrompt`.
fn summary_prompt(conversation: &str) -> String {
    [
        "Summarize this conversation so I can resume it later.",
        "Include goals, key decisions, progress, open questions, and next steps.",
        "Keep it concise and structured with headings.",
        "",
        "<conversation>",
        conversation,
        "</conversation>",
    ]
    .join("\n")
}

/// pi's `showSummaryUi`: a Markdown view in pi's terminal, shown only when `ctx.mode` is
/// `tui`. pith has no TUI mode, so it shows nothing (as pi over RPC).
fn show_summary_ui(_summary: &str) {}

fn notify_if_ui(message: &str, kind: ui::NotifyKind) {
    if session_read::has_ui() {
        ui::notify(message, Some(kind));
    }
}

struct Summarize;

impl Extension for Summarize {
    fn new() -> Self {
        Summarize
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("summarize").command(
            "summarize",
            "Summarize the current conversation in a custom UI",
        )
    }

    fn run_command(&mut self, name: &str, _args: &str) -> Result<(), String> {
        if name != "summarize" {
            return Err(format!("Unknown command: {name}"));
        }
        let conversation = conversation_text(&session_read::branch());
        if pith_sdk::js::trim(&conversation).is_empty() {
            notify_if_ui("No conversation text found", ui::NotifyKind::Warning);
            return Ok(());
        }
        notify_if_ui("Preparing summary...", ui::NotifyKind::Info);

        let Some(model) = models::find(PROVIDER, MODEL) else {
            notify_if_ui(
                &format!("Model {PROVIDER}/{MODEL} not found"),
                ui::NotifyKind::Warning,
            );
            return Ok(());
        };
        if !models::has_configured_auth(&model.provider) {
            notify_if_ui(
                &format!("No authentication configured for {PROVIDER}/{MODEL}"),
                ui::NotifyKind::Warning,
            );
            return Ok(());
        }

        let request = completion::CompletionRequest {
            provider: model.provider,
            model: model.id,
            system_prompt: None,
            messages: vec![completion::ChatMessage::User(vec![Content::Text(
                summary_prompt(&conversation),
            )])],
            max_tokens: None,
            thinking: Some(ThinkingLevel::High),
        };
        match completion::complete(&request) {
            Ok(answer) => show_summary_ui(&answer.text),
            Err(completion::CompletionError::Denied(reason)) => return Err(reason),
            Err(error) => pith_sdk::host::warn(&format!("summary request failed: {error:?}")),
        }
        Ok(())
    }
}

pith_sdk::export_extension!(Summarize);
