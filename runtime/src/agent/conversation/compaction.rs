//! Compaction (pi-behaviour §10): the older part of the conversation is summarized by the
//! current model and replaced, in the context, by the summary; the newest ~20,000 tokens are
//! kept. The summary is made through the model's provider plugin like any answer.

use serde_json::{Value, json};

use crate::agent::conversation::message::{AgentMessage, AssistantBlock, Usage};
use crate::agent::conversation::tokens::estimate_tokens;
use crate::agent::model::{Model, ThinkingLevel};
use crate::agent::session::policies::CompactionPolicy;
use crate::content::Content;
use crate::plugin_host::PluginHost;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::bindings::provider_world::exports::pith::plugin0_1_0::provider as pwit;
use crate::plugin_host::provider::ProviderRequest;

/// The system prompt of a summary request.
pub const SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

const FORMAT: &str = "Use this EXACT format:\n\n## Goal\n[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]\n\n## Constraints & Preferences\n- [Any constraints, preferences, or requirements mentioned by user]\n- [Or \"(none)\" if none were mentioned]\n\n## Progress\n### Done\n- [x] [Completed tasks/changes]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- [Issues preventing progress, if any]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [Ordered list of what should happen next]\n\n## Critical Context\n- [Any data, examples, or references needed to continue]\n- [Or \"(none)\" if not applicable]\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.";

/// The instruction after the conversation, for a first summary.
pub fn summary_prompt() -> String {
    format!(
        "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\n{FORMAT}"
    )
}

/// The instruction when a previous summary exists.
pub fn update_prompt() -> String {
    format!(
        "The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.\n\nUpdate the existing structured summary with new information. PRESERVE all existing information from the previous summary, ADD new progress, decisions and context from the new messages, and UPDATE the Progress section (move items from In Progress to Done when completed).\n\n{FORMAT}"
    )
}

/// Where to cut: the index of the first kept message. Walks back from the end until
/// `keep_recent` tokens are covered, then moves to the start of that turn (a user message);
/// tool results are never the first kept message.
pub fn cut_point(messages: &[AgentMessage], keep_recent: u64) -> usize {
    let mut index = budget_start(messages, keep_recent);
    // Keep whole turns: back to the user message (or bash record) that started this one.
    while index > 0
        && !matches!(
            messages[index],
            AgentMessage::User(_)
                | AgentMessage::BashExecution(_)
                | AgentMessage::CompactionSummary(_)
        )
    {
        index -= 1;
    }
    index
}

/// pi 1.5's cut: `(turn, kept)`, where the kept tail starts (the newest `keep_recent` tokens,
/// moved back from a tool result to its call) and where the turn it falls in starts; equal
/// when the cut falls between turns. `kept` is 0 when everything fits the budget.
pub fn split_cut_point(messages: &[AgentMessage], keep_recent: u64) -> (usize, usize) {
    let mut kept = budget_start(messages, keep_recent);
    while kept > 0 && matches!(messages[kept], AgentMessage::ToolResult(_)) {
        kept -= 1;
    }
    (cut_point(messages, keep_recent).min(kept), kept)
}

/// The index where the newest `keep_recent` tokens begin (0 when the whole conversation is
/// under the budget).
fn budget_start(messages: &[AgentMessage], keep_recent: u64) -> usize {
    let mut total = 0;
    for (i, message) in messages.iter().enumerate().rev() {
        total += estimate_tokens(message);
        if total >= keep_recent {
            return i;
        }
    }
    0
}

/// Where to cut when the context overflowed: like [`cut_point`] (keeping at most a quarter of
/// the model's window, `window` tokens, 0 when unknown), but when the newest turn alone is over
/// the budget — pi's cut would keep it whole and the overflow would repeat — the cut goes
/// inside the turn, at the first message after the budget's start that is not a tool result
/// (results stay with their calls); `messages.len()` when none is left: then only the summary
/// is kept. A conversation under the budget is cut as pi cuts it.
pub fn overflow_cut_point(messages: &[AgentMessage], keep_recent: u64, window: u64) -> usize {
    let keep = if window > 0 {
        keep_recent.min(window / 4)
    } else {
        keep_recent
    };
    let cut = cut_point(messages, keep);
    let total: u64 = messages.iter().map(estimate_tokens).sum();
    if cut > 0 || total < keep {
        return cut;
    }
    let start = budget_start(messages, keep);
    (start + 1..messages.len())
        .find(|&i| !matches!(messages[i], AgentMessage::ToolResult(_)))
        .unwrap_or(messages.len())
}

/// pi's serialization of messages for the summarizer.
pub fn serialize(messages: &[AgentMessage]) -> String {
    let mut parts = Vec::new();
    for message in messages {
        match message {
            AgentMessage::System(_) => {}
            AgentMessage::User(user) => parts.push(format!("[User]: {}", user.content.text())),
            AgentMessage::Assistant(a) => {
                for block in &a.content {
                    if let AssistantBlock::Thinking { thinking, .. } = block {
                        parts.push(format!("[Assistant thinking]: {thinking}"));
                    }
                }
                let text = a.text();
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {text}"));
                }
                let calls: Vec<String> = a
                    .tool_calls()
                    .map(|(_, name, args)| {
                        let list: Vec<String> = args
                            .as_object()
                            .map(|o| o.iter().map(|(k, v)| format!("{k}={v}")).collect())
                            .unwrap_or_default();
                        format!("{name}({})", list.join(", "))
                    })
                    .collect();
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            AgentMessage::ToolResult(result) => {
                let text: String = result
                    .content
                    .iter()
                    .filter_map(|c| {
                        if let Content::Text { text } = c {
                            Some(text.as_str())
                        } else {
                            None
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let shown = if text.chars().count() > 2000 {
                    let head: String = text.chars().take(2000).collect();
                    format!(
                        "{head}\n\n[... {} more characters truncated]",
                        text.chars().count() - 2000
                    )
                } else {
                    text
                };
                parts.push(format!("[Tool result]: {shown}"));
            }
            AgentMessage::BashExecution(b) => {
                parts.push(format!("[User ran]: {}\n{}", b.command, b.output))
            }
            AgentMessage::Custom(c) => parts.push(format!(
                "[User]: {}",
                c.content
                    .as_str()
                    .map_or_else(|| c.content.to_string(), str::to_string)
            )),
            AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_) => {}
        }
    }
    parts.join("\n\n")
}

/// The files the summarized tool calls read and changed: `{readFiles, modifiedFiles}`.
pub fn file_details(messages: &[AgentMessage]) -> Value {
    let (mut read, mut modified) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    for message in messages {
        if let AgentMessage::Assistant(a) = message {
            for (_, name, args) in a.tool_calls() {
                if let Some(path) = args.get("path").and_then(Value::as_str) {
                    match name {
                        "read" => {
                            read.insert(path.to_string());
                        }
                        "write" | "edit" => {
                            modified.insert(path.to_string());
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let read: Vec<String> = read.into_iter().filter(|p| !modified.contains(p)).collect();
    json!({"readFiles": read, "modifiedFiles": modified.into_iter().collect::<Vec<_>>()})
}

/// Asks the model for a summary of `older` (with the previous summary, if any).
pub async fn summarize(
    host: &std::sync::Arc<PluginHost>,
    model: &Model,
    api_key: Option<String>,
    older: &[AgentMessage],
    previous: Option<&str>,
    instructions: Option<&str>,
    policy: CompactionPolicy,
) -> Result<(String, Usage), String> {
    let mut text = format!("<conversation>\n{}\n</conversation>\n\n", serialize(older));
    if let Some(previous) = previous {
        text.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    text.push_str(&if previous.is_some() {
        update_prompt()
    } else {
        summary_prompt()
    });
    if let Some(instructions) = instructions.filter(|i| !i.trim().is_empty()) {
        text.push_str(&format!("\n\nAdditional focus: {instructions}"));
    }
    let thinking = if model.reasoning {
        ThinkingLevel::High.clamp(model)
    } else {
        ThinkingLevel::Off
    };
    // pi's 80% of the reserve, fitted into the window over the request's text.
    let wanted = policy.reserve_tokens * 8 / 10;
    let max_tokens =
        crate::agent::run::request::fitted_output(model, (text.len() as u64).div_ceil(4), wanted)
            .unwrap_or(wanted as u32);
    let request = ProviderRequest {
        model: crate::agent::models::provider_env::wire_model(model)
            .map_err(|err| err.to_string())?,
        system_prompt: Some(SYSTEM_PROMPT.to_string()),
        messages: vec![pwit::Message::User(vec![wit::Content::Text(text)])],
        tools: Vec::new(),
        api_key,
        thinking: match thinking {
            ThinkingLevel::Off => wit::ThinkingLevel::Off,
            ThinkingLevel::Xhigh | ThinkingLevel::Max => wit::ThinkingLevel::Xhigh,
            _ => wit::ThinkingLevel::High,
        },
        thinking_budgets: None,
        max_tokens: Some(max_tokens),
        temperature: None,
        session_id: None,
        cache_retention: crate::agent::run::request::cache_retention(),
    };
    let answer = crate::agent::models::ask::ask(host, model, request).await?;
    if answer.text.is_empty() && !answer.finished {
        Err("the model gave no summary".into())
    } else {
        Ok((answer.text, answer.usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::agent::conversation::message::{AssistantMessage, ToolResultMessage};

    fn result(chars: usize) -> AgentMessage {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "t".into(),
            content: vec![Content::text("r".repeat(chars))],
            details: None,
            is_error: false,
            duration_ms: None,
            timestamp: 0,
            nested_calls: None,
        })
    }

    fn answer(text: &str) -> AgentMessage {
        let mut a = AssistantMessage::empty("api", "p", "m");
        a.content.push(AssistantBlock::Text {
            text: text.into(),
            signature: None,
        });
        AgentMessage::Assistant(a)
    }

    #[test]
    fn an_oversized_single_turn_is_cut_inside_on_overflow() {
        // One turn: a prompt, a call, a 2 MB result, a short answer.
        let messages = vec![
            AgentMessage::user("go", Vec::new()),
            answer("calling"),
            result(2_000_000),
            answer("done"),
        ];
        // pi's cut keeps the whole turn: nothing to summarize.
        assert_eq!(cut_point(&messages, 20_000), 0);
        // The overflow cut summarizes the oversized result and keeps what follows it.
        assert_eq!(overflow_cut_point(&messages, 20_000, 200_000), 3);
    }

    #[test]
    fn an_oversized_last_result_leaves_only_the_summary() {
        let messages = vec![
            AgentMessage::user("go", Vec::new()),
            answer("calling"),
            result(2_000_000),
        ];
        assert_eq!(overflow_cut_point(&messages, 20_000, 200_000), 3);
    }

    #[test]
    fn the_overflow_cut_keeps_whole_turns_when_it_can() {
        let messages = vec![
            AgentMessage::user("one", Vec::new()),
            answer(&"a".repeat(200_000)),
            AgentMessage::user("two", Vec::new()),
            answer("short"),
        ];
        assert_eq!(overflow_cut_point(&messages, 20_000, 200_000), 2);
    }

    #[test]
    fn pi_1_5_splits_the_turn_the_budget_falls_in() {
        let messages = vec![
            AgentMessage::user("question one", Vec::new()),
            answer("First answer."),
            AgentMessage::user("question two", Vec::new()),
            answer("Second answer."),
        ];
        // 11 tokens reach back into the first answer: the turn's start is summarized alone.
        assert_eq!(split_cut_point(&messages, 10), (0, 1));
        // Everything fits: nothing to summarize.
        assert_eq!(split_cut_point(&messages, 20_000), (0, 0));
        // A budget ending at a turn's start does not split it.
        assert_eq!(split_cut_point(&messages, 7), (2, 2));
        // A tool result is never the first kept message.
        let with_result = vec![
            AgentMessage::user("go", Vec::new()),
            answer("calling"),
            result(400),
        ];
        assert_eq!(split_cut_point(&with_result, 50), (0, 1));
    }

    #[test]
    fn a_small_conversation_is_cut_as_pi_cuts_it() {
        let messages = vec![AgentMessage::user("huge", Vec::new())];
        assert_eq!(overflow_cut_point(&messages, 20_000, 200_000), 0);
        // A small window lowers the budget: a large prompt alone is summarized.
        let messages = vec![AgentMessage::user(&"p".repeat(40_000), Vec::new())];
        assert_eq!(overflow_cut_point(&messages, 20_000, 0), 0);
        assert_eq!(overflow_cut_point(&messages, 20_000, 8_192), 1);
    }
}
