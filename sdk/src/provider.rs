//! Provider plugins: implement [`Provider`] and export it with
//! [`export_provider!`](crate::export_provider).

pub use crate::bindings::imports::pith::plugin0_1_0::types::{
    AssistantBlock, Content, Header, SignedText, StopReason, ThinkingBlock, ThinkingLevel,
    ToolCall, Usage,
};
pub use crate::bindings::provider_world::exports::pith::plugin0_1_0::provider::{
    AssistantMessage, BlockDelta, BlockStart, CacheRetention, InputKind, Message, Model, ModelCost,
    ProviderInfo, Request, StreamEvent, TextEnd, ThinkingEnd, ToolCallEnd, ToolCallStart,
    ToolDefinition, ToolResultMessage,
};

/// The text of the error result made for a tool call left without one.
pub const NO_RESULT: &str = "No result provided";

/// The conversation as a provider should send it (pi's `transformMessages`): answers that
/// failed or were aborted are dropped, and a tool call left without a result gets a synthetic
/// error result (`No result provided`) right after its message.
pub fn context_messages(messages: &[Message]) -> Vec<Message> {
    context_message_refs(messages)
        .into_iter()
        .map(std::borrow::Cow::into_owned)
        .collect()
}

/// [`context_messages`] without copying the conversation: the request's own messages are
/// borrowed, only the synthetic results are made (a long session's conversation is large).
///
/// ```
/// use pith_sdk::provider::*;
///
/// let call = ToolCall { id: "c1".into(), name: "bash".into(), arguments: "{}".into(), thought_signature: None };
/// let asked = Message::Assistant(AssistantMessage {
///     content: vec![AssistantBlock::ToolCall(call)],
///     api: "anthropic-messages".into(), provider: "anthropic".into(), model: "m".into(),
///     stop_reason: StopReason::ToolUse,
/// });
/// let messages = vec![asked, Message::User(vec![Content::Text("go on".into())])];
/// let sent = context_message_refs(&messages);
/// assert_eq!(sent.len(), 3, "the call's missing result is made");
/// assert!(matches!(sent[0], std::borrow::Cow::Borrowed(_)));
/// assert!(matches!(&*sent[1], Message::ToolResult(result) if result.is_error));
/// ```
pub fn context_message_refs(messages: &[Message]) -> Vec<std::borrow::Cow<'_, Message>> {
    use std::borrow::Cow;
    let mut out: Vec<Cow<'_, Message>> = Vec::with_capacity(messages.len());
    let mut open_calls: Vec<(&str, &str)> = Vec::new();
    let close = |out: &mut Vec<Cow<'_, Message>>, open: &mut Vec<(&str, &str)>| {
        for (id, name) in open.drain(..) {
            out.push(Cow::Owned(Message::ToolResult(ToolResultMessage {
                tool_call_id: id.to_string(),
                tool_name: name.to_string(),
                content: vec![Content::Text(NO_RESULT.into())],
                is_error: true,
            })));
        }
    };
    for message in messages {
        match message {
            Message::Assistant(a)
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) =>
            {
                continue;
            }
            Message::Assistant(a) => {
                close(&mut out, &mut open_calls);
                open_calls = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::ToolCall(call) => Some((&*call.id, &*call.name)),
                        _ => None,
                    })
                    .collect();
                out.push(Cow::Borrowed(message));
            }
            Message::ToolResult(result) => {
                open_calls.retain(|(id, _)| *id != result.tool_call_id);
                out.push(Cow::Borrowed(message));
            }
            Message::User(_) => {
                close(&mut out, &mut open_calls);
                out.push(Cow::Borrowed(message));
            }
        }
    }
    out
}

/// A tool's JSON schema as a value (`{"type":"object"}` when the host sent something that is
/// not JSON).
pub fn tool_schema(tool: &ToolDefinition) -> serde_json::Value {
    serde_json::from_str(&tool.parameters).unwrap_or_else(|_| serde_json::json!({"type": "object"}))
}

/// A streaming POST to `url` for `request`, as the OpenAI-style APIs take it: a JSON body, an
/// SSE answer, the key as a Bearer token (when there is one) and the model's own headers.
pub fn bearer_sse_post(url: &str, request: &Request) -> crate::http::Request {
    let mut http = crate::http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    if let Some(key) = request.api_key.as_deref().filter(|k| !k.is_empty()) {
        http = http.header("authorization", &format!("Bearer {key}"));
    }
    for header in &request.model.headers {
        http = http.header(&header.name, &header.value);
    }
    http
}

/// A response being streamed.
pub trait Completion: 'static {
    /// The next batch of events; `None` once the stream has ended (after `done` or `error`).
    fn next(&mut self) -> Option<Vec<StreamEvent>>;
}

/// A provider's reading of a streamed SSE body, driven by [`SseCompletion`].
pub trait SseHandler: 'static {
    /// Events to emit before the body is read (e.g. `Start`).
    fn begin(&mut self, out: &mut Vec<StreamEvent>) {
        let _ = out;
    }

    /// Handles one server-sent event.
    fn event(&mut self, event: crate::sse::SseEvent, out: &mut Vec<StreamEvent>);

    /// The body ended before [`done`](SseHandler::done): emits what completes the answer, or an
    /// error when it is incomplete.
    fn end(&mut self, out: &mut Vec<StreamEvent>);

    /// True once the answer is complete (finished or failed).
    fn done(&self) -> bool;
}

/// A [`Completion`] that reads an SSE response chunk by chunk and hands each event to its
/// handler; every batch carries at least one new event.
pub struct SseCompletion<H> {
    response: crate::http::Response,
    parser: crate::sse::SseParser,
    handler: H,
    begun: bool,
    over: bool,
}

impl<H: SseHandler> SseCompletion<H> {
    /// Reads `response` with `handler`.
    pub fn new(response: crate::http::Response, handler: H) -> SseCompletion<H> {
        SseCompletion {
            response,
            parser: crate::sse::SseParser::default(),
            handler,
            begun: false,
            over: false,
        }
    }
}

impl<H: SseHandler> Completion for SseCompletion<H> {
    fn next(&mut self) -> Option<Vec<StreamEvent>> {
        if self.over || (self.begun && self.handler.done()) {
            return None;
        }
        let mut out = Vec::new();
        if !self.begun {
            self.begun = true;
            self.handler.begin(&mut out);
        }
        let floor = out.len();
        while out.len() == floor && !self.over && !self.handler.done() {
            match self.response.next_chunk() {
                Ok(Some(chunk)) => {
                    for event in self.parser.feed(&chunk) {
                        self.handler.event(event, &mut out);
                    }
                    if let Some(error) = self.parser.error() {
                        out.push(StreamEvent::Error(error));
                        self.over = true;
                    }
                }
                Ok(None) => {
                    if let Some(event) = self.parser.finish() {
                        self.handler.event(event, &mut out);
                    }
                    if !self.handler.done() {
                        self.handler.end(&mut out);
                    }
                    self.over = true;
                }
                Err(err) => {
                    out.push(StreamEvent::Error(err.message()));
                    self.over = true;
                }
            }
        }
        Some(out)
    }
}

/// An LLM wire format.
pub trait Provider {
    /// The wire formats and models this plugin serves.
    fn describe() -> ProviderInfo;

    /// Starts a streamed request.
    fn complete(request: Request) -> Result<Box<dyn Completion>, String>;
}

/// Wraps a [`Completion`] as the WIT resource; used by [`export_provider!`](crate::export_provider).
#[doc(hidden)]
pub struct __CompletionResource(pub std::cell::RefCell<Box<dyn Completion>>);

impl crate::bindings::provider_world::exports::pith::plugin0_1_0::provider::GuestCompletion
    for __CompletionResource
{
    fn next(&self) -> Option<Vec<StreamEvent>> {
        self.0.borrow_mut().next()
    }
}

/// Exports `T: Provider` as this component's `provider` interface.
#[macro_export]
macro_rules! export_provider {
    ($provider:ty) => {
        #[doc(hidden)]
        pub struct __PithProvider;

        impl $crate::bindings::provider_world::exports::pith::plugin0_1_0::provider::Guest for __PithProvider {
            type Completion = $crate::provider::__CompletionResource;

            fn describe() -> $crate::provider::ProviderInfo {
                <$provider as $crate::provider::Provider>::describe()
            }

            fn complete(
                request: $crate::provider::Request,
            ) -> ::std::result::Result<
                $crate::bindings::provider_world::exports::pith::plugin0_1_0::provider::Completion,
                ::std::string::String,
            > {
                let completion = <$provider as $crate::provider::Provider>::complete(request)?;
                Ok($crate::bindings::provider_world::exports::pith::plugin0_1_0::provider::Completion::new(
                    $crate::provider::__CompletionResource(::std::cell::RefCell::new(completion)),
                ))
            }
        }

        $crate::bindings::provider_world::__export_provider_world!(__PithProvider);
    };
}

/// The stop reason of an Anthropic Messages API `stop_reason` (as pi maps it): `end_turn`,
/// `pause_turn` and `stop_sequence` stop, `max_tokens` is the length limit, `tool_use` asks for
/// tools, anything else (`refusal`, …) is an error.
///
/// ```
/// use pith_sdk::provider::{StopReason, anthropic_stop_reason};
///
/// assert_eq!(anthropic_stop_reason("end_turn"), StopReason::Stop);
/// assert_eq!(anthropic_stop_reason("refusal"), StopReason::Error);
/// ```
pub fn anthropic_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}
