//! The Messages API `messages` array, written straight from the request: tool results merged
//! into user turns, the last user block cached, thinking replayed to the model that wrote it.
//! The blocks borrow the request's texts and are serialized once, in the key order pi's
//! requests have: no tree of JSON values is built for a conversation that may be many
//! megabytes long.

use std::borrow::Cow;

use pith_sdk::compat::Compat;
use pith_sdk::provider::*;
use pith_sdk::serde_json::{self, Value};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::request::tool_id;

/// A message of the body.
pub struct OutMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

/// A content block of the body; `cache` marks the one block that ends the cached prefix.
enum Block<'a> {
    Text(&'a str, Cache),
    /// An image: its MIME type and base64 data.
    Image(&'a str, &'a str, Cache),
    Thinking {
        thinking: &'a str,
        signature: &'a str,
        cache: Cache,
    },
    Redacted(&'a str, Cache),
    ToolUse {
        id: String,
        name: Cow<'a, str>,
        input: Value,
        cache: Cache,
    },
    ToolResult {
        id: String,
        content: ResultContent<'a>,
        is_error: bool,
        cache: Cache,
    },
}

/// A tool result's content: its texts joined with newlines (written as one string, never
/// copied into one), or its blocks when it holds an image.
enum ResultContent<'a> {
    Texts(Vec<&'a str>),
    Blocks(Vec<Block<'a>>),
}

/// Texts joined with newlines, as `Display` (for `collect_str`).
struct Joined<'a>(&'a [&'a str]);

impl std::fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, text) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            f.write_str(text)?;
        }
        Ok(())
    }
}

/// A cache breakpoint on a block: none, Anthropic's default, or an hour (`long`).
#[derive(Clone, Copy, PartialEq)]
enum Cache {
    Off,
    Short,
    Long,
}

impl Block<'_> {
    fn cache_mut(&mut self) -> &mut Cache {
        match self {
            Block::Text(_, cache)
            | Block::Image(_, _, cache)
            | Block::Redacted(_, cache)
            | Block::Thinking { cache, .. }
            | Block::ToolUse { cache, .. }
            | Block::ToolResult { cache, .. } => cache,
        }
    }

    fn is_tool_result(&self) -> bool {
        matches!(self, Block::ToolResult { .. })
    }
}

fn content_block(content: &Content) -> Block<'_> {
    match content {
        Content::Text(text) => Block::Text(text, Cache::Off),
        Content::Image(image) => Block::Image(&image.mime_type, &image.data, Cache::Off),
    }
}

fn assistant_blocks<'a>(
    message: &'a AssistantMessage,
    model: &Model,
    claude_code: bool,
) -> Vec<Block<'a>> {
    let same_model = message.provider == model.provider && message.model == model.id;
    let allow_empty_signature = Compat::of(model).flag("allowEmptySignature") == Some(true);
    message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantBlock::Text(text) if text.text.is_empty() => None,
            AssistantBlock::Text(text) => Some(Block::Text(&text.text, Cache::Off)),
            AssistantBlock::Thinking(thinking) if !same_model => (!thinking.redacted
                && !thinking.thinking.is_empty())
            .then(|| Block::Text(&thinking.thinking, Cache::Off)),
            AssistantBlock::Thinking(thinking) if thinking.redacted => Some(Block::Redacted(
                thinking.signature.as_deref().unwrap_or(""),
                Cache::Off,
            )),
            AssistantBlock::Thinking(thinking) => match &thinking.signature {
                Some(signature) if !signature.is_empty() || allow_empty_signature => {
                    Some(Block::Thinking {
                        thinking: &thinking.thinking,
                        signature,
                        cache: Cache::Off,
                    })
                }
                None if allow_empty_signature => Some(Block::Thinking {
                    thinking: &thinking.thinking,
                    signature: "",
                    cache: Cache::Off,
                }),
                _ => (!thinking.thinking.is_empty())
                    .then(|| Block::Text(&thinking.thinking, Cache::Off)),
            },
            AssistantBlock::ToolCall(call) => Some(Block::ToolUse {
                id: tool_id(&call.id),
                name: if claude_code {
                    Cow::Owned(crate::oauth::to_claude_code(&call.name))
                } else {
                    Cow::Borrowed(&call.name)
                },
                input: serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|_| Value::Object(Default::default())),
                cache: Cache::Off,
            }),
        })
        .collect()
}

fn tool_result(result: &ToolResultMessage) -> Block<'_> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text(t) => Some(t.as_str()),
            Content::Image(_) => None,
        })
        .collect();
    let content = if texts.len() == result.content.len() {
        ResultContent::Texts(texts)
    } else {
        ResultContent::Blocks(result.content.iter().map(content_block).collect())
    };
    Block::ToolResult {
        id: tool_id(&result.tool_call_id),
        content,
        is_error: result.is_error,
        cache: Cache::Off,
    }
}

/// The messages of `request`, tool results merged into user turns, the last user block
/// cached as `retention` says; `claude_code` gives tool calls Claude Code's names.
pub fn messages<'a>(
    request: &'a Request,
    retention: CacheRetention,
    claude_code: bool,
) -> Vec<OutMessage<'a>> {
    let mut out: Vec<OutMessage<'a>> = Vec::new();
    for message in context_message_refs(&request.messages) {
        // A made result (a call left without one) is pi's fixed text: it borrows nothing.
        let blocks_of = |message: &Message| -> (&'static str, Vec<Block<'static>>) {
            match message {
                Message::ToolResult(result) => (
                    "user",
                    vec![Block::ToolResult {
                        id: tool_id(&result.tool_call_id),
                        content: ResultContent::Texts(vec![NO_RESULT]),
                        is_error: result.is_error,
                        cache: Cache::Off,
                    }],
                ),
                _ => ("user", Vec::new()),
            }
        };
        let (role, blocks): (&'static str, Vec<Block<'a>>) = match message {
            Cow::Borrowed(Message::User(content)) => {
                ("user", content.iter().map(content_block).collect())
            }
            Cow::Borrowed(Message::Assistant(assistant)) => (
                "assistant",
                assistant_blocks(assistant, &request.model, claude_code),
            ),
            Cow::Borrowed(Message::ToolResult(result)) => ("user", vec![tool_result(result)]),
            Cow::Owned(made) => blocks_of(&made),
        };
        let merge = blocks.first().is_some_and(Block::is_tool_result)
            && out.last().is_some_and(|last| {
                last.role == "user" && last.content.iter().all(Block::is_tool_result)
            });
        match out.last_mut() {
            Some(last) if merge => last.content.extend(blocks),
            _ if !blocks.is_empty() => out.push(OutMessage {
                role,
                content: blocks,
            }),
            _ => {}
        }
    }
    let mark = match retention {
        CacheRetention::None => Cache::Off,
        CacheRetention::Short => Cache::Short,
        CacheRetention::Long => Cache::Long,
    };
    if let Some(block) = out
        .iter_mut()
        .rev()
        .find(|m| m.role == "user")
        .and_then(|last| last.content.last_mut())
    {
        *block.cache_mut() = mark;
    }
    out
}

/// Appends the messages as JSON to `body`.
pub fn write_json(body: &mut Vec<u8>, messages: &[OutMessage<'_>]) {
    // Writing borrowed strings and plain values into memory cannot fail.
    if serde_json::to_writer(&mut *body, messages).is_err() {
        body.extend_from_slice(b"[]");
    }
}

/// About the size of the messages' JSON, for sizing the body's buffer up front (a doubling
/// buffer leaves the guest's memory holding every smaller copy): their texts with a tenth for
/// escapes, and room for each message's keys.
pub fn size_estimate(request: &Request) -> usize {
    let content = |blocks: &[Content]| -> usize {
        blocks
            .iter()
            .map(|block| match block {
                Content::Text(text) => text.len() + 64,
                Content::Image(image) => image.data.len() + 128,
            })
            .sum()
    };
    let texts: usize = request
        .messages
        .iter()
        .map(|message| match message {
            Message::User(blocks) => content(blocks),
            Message::ToolResult(result) => content(&result.content) + 128,
            Message::Assistant(answer) => answer
                .content
                .iter()
                .map(|block| match block {
                    AssistantBlock::Text(text) => text.text.len() + 64,
                    AssistantBlock::Thinking(thinking) => {
                        thinking.thinking.len()
                            + thinking.signature.as_ref().map_or(0, String::len)
                            + 96
                    }
                    AssistantBlock::ToolCall(call) => call.arguments.len() + call.id.len() + 96,
                })
                .sum(),
        } + 32)
        .sum();
    texts + texts / 10 + 4096
}

impl Serialize for OutMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("role", self.role)?;
        map.serialize_entry("content", &self.content)?;
        map.end()
    }
}

/// `{"type": "ephemeral"}`, with an hour's `ttl` for `long`.
struct Control(Cache);

impl Serialize for Control {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let long = self.0 == Cache::Long;
        let mut map = serializer.serialize_map(Some(if long { 2 } else { 1 }))?;
        map.serialize_entry("type", "ephemeral")?;
        if long {
            map.serialize_entry("ttl", "1h")?;
        }
        map.end()
    }
}

/// An image's `source`.
struct Source<'a>(&'a str, &'a str);

impl Serialize for Source<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", "base64")?;
        map.serialize_entry("media_type", self.0)?;
        map.serialize_entry("data", self.1)?;
        map.end()
    }
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResultContent::Texts(texts) => serializer.collect_str(&Joined(texts)),
            ResultContent::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl Serialize for Block<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let cache = match self {
            Block::Text(text, cache) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                cache
            }
            Block::Image(mime_type, data, cache) => {
                map.serialize_entry("type", "image")?;
                map.serialize_entry("source", &Source(mime_type, data))?;
                cache
            }
            Block::Thinking {
                thinking,
                signature,
                cache,
            } => {
                map.serialize_entry("type", "thinking")?;
                map.serialize_entry("thinking", thinking)?;
                map.serialize_entry("signature", signature)?;
                cache
            }
            Block::Redacted(data, cache) => {
                map.serialize_entry("type", "redacted_thinking")?;
                map.serialize_entry("data", data)?;
                cache
            }
            Block::ToolUse {
                id,
                name,
                input,
                cache,
            } => {
                map.serialize_entry("type", "tool_use")?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("input", input)?;
                cache
            }
            Block::ToolResult {
                id,
                content,
                is_error,
                cache,
            } => {
                map.serialize_entry("type", "tool_result")?;
                map.serialize_entry("tool_use_id", id)?;
                map.serialize_entry("content", content)?;
                map.serialize_entry("is_error", is_error)?;
                cache
            }
        };
        if *cache != Cache::Off {
            map.serialize_entry("cache_control", &Control(*cache))?;
        }
        map.end()
    }
}
