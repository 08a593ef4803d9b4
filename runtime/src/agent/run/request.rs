//! The request sent to a provider: the conversation as the model sees it (pi's
//! `convertToLlm`), the tools, the thinking level and the key.

use crate::agent::conversation::message::{AgentMessage, AssistantBlock, StopReason, UserContent};
use crate::agent::conversation::messages::Messages;
use crate::agent::model::{Model, ThinkingLevel};
use crate::agent::models::KeyError;
use crate::agent::models::errors::WireError;
use crate::agent::run::history_cache::{self, HistoryCache, Mode, Plan};
use crate::agent::run::tool_output::{OutputLimit, content_for_model};
use crate::agent::tools::SessionTool;
use crate::content::Content;
use crate::plugin_host::CallError;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::bindings::provider_world::exports::pith::plugin0_1_0::provider as pwit;
use crate::plugin_host::history_splice::HistorySplice;
use crate::plugin_host::provider::ProviderRequest;
use std::sync::Arc;

/// What a request is built from.
pub struct RequestParts<'a> {
    /// The model.
    pub model: &'a Model,
    /// The system prompt.
    pub system_prompt: &'a str,
    /// The conversation (read on demand: a request reads the messages it hands over).
    pub messages: &'a dyn Messages,
    /// The tools.
    pub tools: &'a [SessionTool],
    /// The provider's credentials (its key, or headers that carry one).
    pub auth: crate::agent::models::RequestAuth,
    /// The thinking level (already clamped).
    pub thinking: ThinkingLevel,
    /// The session id.
    pub session_id: &'a str,
    /// The limit on one tool result's text (results already in the session may be larger).
    pub output_limit: crate::agent::run::tool_output::OutputLimit,
    /// `images.blockImages` (every image becomes pi's "Image reading is disabled." first) and
    /// `thinkingBudgets`.
    pub settings: &'a crate::agent::session::policies::RequestSettings,
    /// The session's prefix cache, when the request may use it: `messages` are the session's
    /// own, of this generation, and the provider is first-party (its hash).
    pub history: Option<History<'a>>,
}

/// What a request needs of the session's prefix cache.
pub struct History<'a> {
    /// The cache.
    pub cache: &'a HistoryCache,
    /// The session's message generation.
    pub generation: u64,
    /// The provider plugin's hash.
    pub provider: &'a str,
    /// The session file (its prefix is kept on disk beside the cache).
    pub session: Option<&'a std::path::Path>,
}

/// Why a turn's request could not be sent: its credentials, its model's environment, or the
/// provider plugin. The text is what the failed answer carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The credentials did not resolve or renew.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The model's environment lacks what it needs.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The provider plugin refused the call.
    #[error(transparent)]
    Provider(#[from] CallError),
}

/// A provider request, and what its body is spliced with (the session's cached prefix).
pub type Built = (ProviderRequest, Option<Arc<HistorySplice>>);

/// Builds the provider request, and what its body is spliced with when the session's prefix
/// cache serves it. Errored and aborted answers are passed with their stop reason; each
/// provider drops them from what it sends, as pi does.
///
/// With [`Mode::Learning`], the request is a learning step of a conversation whose prefix is
/// not cached (its body teaches the cache a step of the conversation and is not sent), or
/// `None` when the request itself is close enough to the cached prefix; with
/// [`Mode::Request`] it is always built.
pub fn request(parts: RequestParts<'_>, mode: Mode) -> Result<Option<Built>, WireError> {
    let convert = |range: std::ops::Range<usize>, out: &mut Vec<pwit::Message>| {
        for message in parts.messages.range(range) {
            if let Some(mut message) = to_wit(&message, &parts.output_limit) {
                if parts.settings.block_images {
                    block_images(&mut message);
                }
                as_the_model_takes_it(&mut message, parts.model);
                out.push(message);
            }
        }
    };
    let wire = wire_model(&parts)?;
    let plan = parts.history.as_ref().and_then(|history| {
        let key = history_cache::key(&(
            (&parts.model.api, &parts.model.provider, &parts.model.id),
            (&wire.base_url, &wire.compat),
            (parts.thinking as u8, parts.settings.block_images),
            (parts.output_limit.max_bytes, parts.output_limit.max_lines),
            history.provider,
            std::env::var("PI_CACHE_RETENTION").ok(),
        ));
        history.cache.plan(
            key,
            history.generation,
            parts.messages,
            mode,
            history.session,
        )
    });
    // A learning step hands the conversation over up to its boundary's prompt.
    let count = match (mode, &plan) {
        (Mode::Request, _) => parts.messages.len(),
        (
            Mode::Learning,
            Some(Plan {
                boundary: Some(at), ..
            }),
        ) => at + 1,
        (Mode::Learning, _) => return Ok(None),
    };
    let mut messages = Vec::new();
    let marker = |text: &str| pwit::Message::User(vec![wit::Content::Text(text.to_string())]);
    match &plan {
        None => convert(0..count, &mut messages),
        Some(plan) => {
            messages.push(marker(&plan.splice.splice_marker));
            match (plan.boundary, &plan.splice.end_marker) {
                (Some(at), Some(end)) => {
                    convert(plan.from..at, &mut messages);
                    messages.push(marker(end));
                    convert(at..count, &mut messages);
                }
                _ => convert(plan.from..count, &mut messages),
            }
        }
    }
    let request = ProviderRequest {
        model: wire,
        system_prompt: Some(parts.system_prompt.to_string()),
        messages,
        tools: parts
            .tools
            .iter()
            .map(|t| pwit::ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters().to_string(),
            })
            .collect(),
        api_key: parts.auth.api_key,
        thinking: wit::ThinkingLevel::from(parts.thinking),
        thinking_budgets: parts.settings.thinking_budgets.clone(),
        max_tokens: fitted_output(
            parts.model,
            crate::agent::conversation::tokens::context_tokens(parts.messages),
            parts.model.max_tokens,
        ),
        temperature: None,
        session_id: Some(parts.session_id.to_string()),
        cache_retention: cache_retention(),
    };
    Ok(Some((request, plan.map(|plan| plan.splice))))
}

/// The model as the provider gets it: its headers and environment resolved, the request's
/// credentials and the tools' constrained-sampling requests in.
fn wire_model(parts: &RequestParts<'_>) -> Result<pwit::Model, WireError> {
    let mut wire = crate::agent::models::provider_env::with_headers(
        crate::agent::models::provider_env::wire_model(parts.model)?,
        &parts.auth.headers,
    );
    if let Some(base_url) = &parts.auth.base_url {
        wire.base_url = base_url.clone();
    }
    let constrained: serde_json::Map<String, serde_json::Value> = parts
        .tools
        .iter()
        .filter_map(|t| Some((t.name().to_string(), t.constrained_sampling()?)))
        .collect();
    if !constrained.is_empty() {
        wire = crate::agent::models::provider_env::with_compat(
            wire,
            "toolConstrainedSampling",
            serde_json::Value::Object(constrained),
        );
    }
    if parts.model.provider == "github-copilot" {
        wire = crate::agent::models::provider_env::with_headers(
            wire,
            &copilot_headers(parts.messages),
        );
    }
    Ok(wire)
}

/// pi's prompt-cache retention: `long` when `PI_CACHE_RETENTION=long` (an hour on Anthropic,
/// a day on OpenAI's Responses API), else the provider's short default.
pub fn cache_retention() -> pwit::CacheRetention {
    match std::env::var("PI_CACHE_RETENTION").as_deref() {
        Ok("long") => pwit::CacheRetention::Long,
        _ => pwit::CacheRetention::Short,
    }
}

/// pi's note for an image a model without image input is not sent, in a prompt.
const USER_IMAGE_OMITTED: &str = "(image omitted: model does not support images)";
/// The same in a tool result.
const TOOL_IMAGE_OMITTED: &str = "(tool image omitted: model does not support images)";

/// pi's text for an image `images.blockImages` keeps from the model.
const IMAGE_BLOCKED: &str = "Image reading is disabled.";

/// A prompt's or a tool result's images replaced by pi's text (a run of them by one), as pi's
/// `blockImages` wrapper of `convertToLlm` does.
fn block_images(message: &mut pwit::Message) {
    let content = match message {
        pwit::Message::User(content) => content,
        pwit::Message::ToolResult(result) => &mut result.content,
        pwit::Message::Assistant(_) => return,
    };
    replace_images(content, IMAGE_BLOCKED);
}

/// Each run of images in `content` becomes one `note` (a note right after the same note is
/// not repeated).
fn replace_images(content: &mut Vec<wit::Content>, note: &str) {
    let mut kept = Vec::with_capacity(content.len());
    let mut after_note = false;
    for block in content.drain(..) {
        match block {
            wit::Content::Image(_) => {
                if !after_note {
                    kept.push(wit::Content::Text(note.to_string()));
                }
                after_note = true;
            }
            wit::Content::Text(text) => {
                after_note = text == note;
                kept.push(wit::Content::Text(text));
            }
        }
    }
    *content = kept;
}

/// A message as `model` may take it (pi's `transformMessages`): for a model without image
/// input, each run of images becomes pi's note; an answer of another model (provider, API or
/// id) loses its thinking (its signatures are only valid for the model that made it, and read
/// as text it would pass for the visible answer) and its tool calls' thought signatures.
fn as_the_model_takes_it(message: &mut pwit::Message, model: &Model) {
    let sees_images = model.input.iter().any(|kind| kind == "image");
    let without_images = replace_images;
    match message {
        pwit::Message::User(content) if !sees_images => {
            without_images(content, USER_IMAGE_OMITTED);
        }
        pwit::Message::ToolResult(result) if !sees_images => {
            without_images(&mut result.content, TOOL_IMAGE_OMITTED);
        }
        pwit::Message::Assistant(answer)
            if answer.provider != model.provider
                || answer.api != model.api
                || answer.model != model.id =>
        {
            answer
                .content
                .retain(|block| !matches!(block, wit::AssistantBlock::Thinking(_)));
            for block in answer.content.iter_mut() {
                if let wit::AssistantBlock::ToolCall(call) = block {
                    call.thought_signature = None;
                }
            }
        }
        _ => {}
    }
}

/// The headers GitHub Copilot's API reads on each request (pi's `buildCopilotDynamicHeaders`):
/// who started this request, what it is for, and whether it carries images.
fn copilot_headers(messages: &dyn Messages) -> Vec<(String, String)> {
    let last_is_user = matches!(messages.last().as_deref(), Some(AgentMessage::User(_)));
    let mut headers = vec![
        (
            "X-Initiator".to_string(),
            if last_is_user { "user" } else { "agent" }.to_string(),
        ),
        (
            "Openai-Intent".to_string(),
            "conversation-edits".to_string(),
        ),
    ];
    let has_image = messages.range(0..messages.len()).iter().any(|m| match &**m {
        AgentMessage::User(user) => matches!(&user.content, UserContent::Blocks(blocks) if blocks.iter().any(|c| matches!(c, Content::Image { .. }))),
        AgentMessage::ToolResult(result) => {
            result.content.iter().any(|c| matches!(c, Content::Image { .. }))
        }
        _ => false,
    });
    if has_image {
        headers.push(("Copilot-Vision-Request".into(), "true".into()));
    }
    headers
}

/// The fixed part of the room left for the input being counted higher than estimated.
const CONTEXT_SAFETY_TOKENS: u64 = 4096;
/// The output below which only the fixed margin is kept (a small or nearly full window).
const MIN_OUTPUT_WITH_RATIO_MARGIN: i64 = 32768;

/// pi's `clampMaxTokensToContext`: `max_tokens` fitted into the model's window over `input`
/// estimated tokens, leaving a margin of 4,096 tokens or 15% of the input (only the fixed one
/// when that leaves less than 32,768), and at least 1.
pub fn fit_to_window(context_window: u64, input: u64, max_tokens: u64) -> u64 {
    if context_window == 0 {
        return max_tokens.max(1);
    }
    let (window, input) = (context_window as i64, input as i64);
    let margin = (CONTEXT_SAFETY_TOKENS as i64).max((input * 15 + 99) / 100);
    let mut room = window - input - margin;
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN {
        room = MIN_OUTPUT_WITH_RATIO_MARGIN.min(window - input - CONTEXT_SAFETY_TOKENS as i64);
    }
    max_tokens.min(room.max(1) as u64)
}

/// The output limit a request asks for: `None` (the provider's own default, the model's
/// limit) unless the window leaves less, then what fits (see [`fit_to_window`]).
pub fn fitted_output(model: &Model, input: u64, max_tokens: u64) -> Option<u32> {
    let fitted = fit_to_window(model.context_window, input, max_tokens);
    (max_tokens > 0 && fitted < max_tokens).then(|| fitted.min(u32::MAX as u64) as u32)
}

fn user(content: Vec<Content>) -> pwit::Message {
    pwit::Message::User(content.into_iter().map(wit::Content::from).collect())
}

fn text(text: String) -> pwit::Message {
    user(vec![Content::text(text)])
}

/// An answer's block as plugins get it.
pub fn wit_block(block: &AssistantBlock) -> wit::AssistantBlock {
    match block {
        AssistantBlock::Text { text, signature } => wit::AssistantBlock::Text(wit::SignedText {
            text: text.clone(),
            signature: signature.clone(),
        }),
        AssistantBlock::Thinking {
            thinking,
            signature,
            redacted,
        } => wit::AssistantBlock::Thinking(wit::ThinkingBlock {
            thinking: thinking.clone(),
            signature: signature.clone(),
            redacted: *redacted,
        }),
        AssistantBlock::ToolCall {
            id,
            name,
            arguments,
            thought_signature,
        } => wit::AssistantBlock::ToolCall(wit::ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.to_string(),
            thought_signature: thought_signature.clone(),
        }),
    }
}

/// Why an answer stopped, as plugins get it.
pub fn wit_stop_reason(reason: StopReason) -> wit::StopReason {
    match reason {
        StopReason::Stop => wit::StopReason::Stop,
        StopReason::Length => wit::StopReason::Length,
        StopReason::ToolUse => wit::StopReason::ToolUse,
        StopReason::Error => wit::StopReason::Error,
        StopReason::Aborted => wit::StopReason::Aborted,
    }
}

/// One message as the model sees it; `None` for messages kept out of the context.
fn to_wit(message: &AgentMessage, limit: &OutputLimit) -> Option<pwit::Message> {
    Some(match message {
        // The prompt goes as the request's system prompt.
        AgentMessage::System(_) => return None,
        AgentMessage::User(user_message) => user(user_message.content.blocks()),
        AgentMessage::Assistant(assistant) => pwit::Message::Assistant(pwit::AssistantMessage {
            content: assistant.content.iter().map(wit_block).collect(),
            api: assistant.api.clone(),
            provider: assistant.provider.clone(),
            model: assistant.model.clone(),
            stop_reason: wit_stop_reason(assistant.stop_reason),
        }),
        AgentMessage::ToolResult(result) => pwit::Message::ToolResult(pwit::ToolResultMessage {
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            content: content_for_model(limit, &result.content)
                .into_iter()
                .map(wit::Content::from)
                .collect(),
            is_error: result.is_error,
        }),
        AgentMessage::BashExecution(bash) => {
            if bash.exclude_from_context == Some(true) {
                return None;
            }
            let mut body = format!("Ran `{}`\n", bash.command);
            if bash.output.is_empty() {
                body.push_str("(no output)");
            } else {
                body.push_str(&format!("```\n{}\n```", bash.output));
            }
            if bash.cancelled {
                body.push_str("\n\n(command cancelled)");
            } else if let Some(code) = bash.exit_code.filter(|c| *c != 0) {
                body.push_str(&format!("\n\nCommand exited with code {code}"));
            }
            if bash.truncated
                && let Some(path) = &bash.full_output_path
            {
                body.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
            }
            text(body)
        }
        AgentMessage::Custom(custom) => match &custom.content {
            serde_json::Value::String(s) => text(s.clone()),
            other => match serde_json::from_value::<UserContent>(other.clone()) {
                Ok(content) => user(content.blocks()),
                Err(_) => text(other.to_string()),
            },
        },
        AgentMessage::CompactionSummary(summary) => text(format!(
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n{}\n</summary>",
            summary.summary
        )),
        AgentMessage::BranchSummary(summary) => text(format!(
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{}</summary>",
            summary.summary
        )),
    })
}
