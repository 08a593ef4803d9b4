//! pi's token estimates of a conversation: characters / 4 per message, and the context's size
//! from the last answer's reported usage plus estimates of what came after it. Compaction,
//! the request's output fitting and the threshold check all count with these.

use crate::agent::conversation::message::{AgentMessage, AssistantBlock};
use crate::agent::conversation::messages::Messages;
use crate::content::Content;

/// pi's token estimate of a message: characters / 4, rounded up.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars: usize = match message {
        // A record for hosts: the prompt is counted with the request, not here.
        AgentMessage::System(_) => 0,
        AgentMessage::User(user) => user
            .content
            .blocks()
            .iter()
            .map(|b| match b {
                Content::Text { text } => text.len(),
                Content::Image { .. } => 4800,
            })
            .sum(),
        AgentMessage::Assistant(a) => a
            .content
            .iter()
            .map(|b| match b {
                AssistantBlock::Text { text, .. } => text.len(),
                AssistantBlock::Thinking { thinking, .. } => thinking.len(),
                AssistantBlock::ToolCall {
                    name, arguments, ..
                } => name.len() + arguments.to_string().len(),
            })
            .sum(),
        AgentMessage::ToolResult(r) => r
            .content
            .iter()
            .map(|b| match b {
                Content::Text { text } => text.len(),
                Content::Image { .. } => 4800,
            })
            .sum(),
        AgentMessage::BashExecution(b) => b.command.len() + b.output.len(),
        AgentMessage::Custom(c) => c.content.to_string().len(),
        AgentMessage::CompactionSummary(s) => s.summary.len(),
        AgentMessage::BranchSummary(s) => s.summary.len(),
    };
    chars.div_ceil(4) as u64
}

/// Context tokens of a conversation: the last answer's reported usage, plus estimates of what
/// came after it (read from the end: a long conversation's earlier messages are not read).
pub fn context_tokens<M: Messages + ?Sized>(messages: &M) -> u64 {
    let mut after = 0;
    for at in (0..messages.len()).rev() {
        let Some(message) = messages.get(at) else {
            continue;
        };
        if let AgentMessage::Assistant(a) = &*message
            && (a.usage.total_tokens > 0 || a.usage.input > 0)
        {
            let reported = if a.usage.total_tokens > 0 {
                a.usage.total_tokens
            } else {
                a.usage.input + a.usage.output + a.usage.cache_read + a.usage.cache_write
            };
            return reported + after;
        }
        after += estimate_tokens(&message);
    }
    after
}
