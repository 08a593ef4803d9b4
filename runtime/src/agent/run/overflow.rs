//! Context overflow, recognised as pi 1.5.2 recognises it (`isContextOverflow` and
//! `isRecoverableLength` in pi-ai's `utils/overflow.js`): an error whose message matches one
//! of the providers' phrasings (28 of them: Anthropic, OpenAI, LiteLLM, Gemini, xAI, Groq,
//! OpenRouter, Together, llama.cpp, LM Studio, Ollama, vLLM, Mistral, MiniMax, Kimi,
//! DashScope, z.ai, Copilot, Bedrock, a bare 413, …) and none of the rate-limit ones; a
//! successful answer whose reported input passed the window (a server that truncates
//! silently); and a `length` stop with no output at a full window.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};

use crate::agent::conversation::message::{AssistantMessage, StopReason};

/// pi's `OVERFLOW_PATTERNS`, case-insensitive.
const OVERFLOW_PATTERNS: &[&str] = &[
    r"prompt (?:is )?too long",
    r"prompt exceeds max length",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"context window exceeded",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    // HTTP 413: a request-size overflow whatever the body says (the status as the provider's
    // error begins with it, not a 413 mentioned inside a body).
    r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
];

/// pi's `NON_OVERFLOW_PATTERNS`: throttling and rate limits, never an overflow.
const NON_OVERFLOW_PATTERNS: &[&str] = &[
    r"^(Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

/// Cerebras answers an overflow with a 400 or 413 and no body.
const CEREBRAS_BODYLESS: &str = r"^4(?:00|13)\s*(?:status code)?\s*(?:\(no body\))?\s*$";

fn set(patterns: &[&str]) -> RegexSet {
    RegexSet::new(patterns.iter().map(|p| format!("(?i){p}"))).expect("the patterns compile")
}

fn overflow_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| set(OVERFLOW_PATTERNS))
}

fn non_overflow_set() -> &'static RegexSet {
    static SET: OnceLock<RegexSet> = OnceLock::new();
    SET.get_or_init(|| set(NON_OVERFLOW_PATTERNS))
}

fn cerebras_bodyless() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(&format!("(?i){CEREBRAS_BODYLESS}")).expect("compiles"))
}

/// True when an error message (of `provider`) reports a context overflow.
pub fn is_overflow_error(message: &str, provider: &str) -> bool {
    if non_overflow_set().is_match(message) {
        return false;
    }
    overflow_set().is_match(message)
        || (provider == "cerebras" && cerebras_bodyless().is_match(message.trim()))
}

/// True when `answer` shows a context overflow: an overflow error; with the model's
/// `context_window` (0: unknown), also a successful answer whose input passed it, or a
/// `length` stop with no output whose input filled it.
pub fn is_context_overflow(answer: &AssistantMessage, context_window: u64) -> bool {
    if answer.stop_reason == StopReason::Error
        && let Some(message) = answer.error_message.as_deref()
        && is_overflow_error(message, &answer.provider)
    {
        return true;
    }
    if context_window == 0 {
        return false;
    }
    let input = answer.usage.input + answer.usage.cache_read;
    match answer.stop_reason {
        StopReason::Stop => input > context_window,
        StopReason::Length => answer.usage.output == 0 && input * 100 >= context_window * 99,
        _ => false,
    }
}

/// pi's `isRecoverableLength`: a `length` stop below the model's own output limit (a server
/// that cut the answer for lack of room), worth one compact-and-retry.
pub fn is_recoverable_length(answer: &AssistantMessage, max_tokens: u64) -> bool {
    answer.stop_reason == StopReason::Length && max_tokens > 0 && answer.usage.output < max_tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phrasing_pi_knows_is_an_overflow_and_rate_limits_are_not() {
        let overflows = [
            "prompt is too long: 213462 tokens > 200000 maximum",
            r#"413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            "Your input exceeds the context window of this model",
            "Requested token count exceeds the model's maximum context length of 131072 tokens",
            "litellm.ContextWindowExceededError: Context Window exceeded for given call.",
            "Input length (265330) exceeds model's maximum context length (262144).",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens",
            "Input length 9000 exceeds the maximum allowed input length of 8192 tokens.",
            "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
            "400 request (8137 tokens) exceeds the available context size (4096 tokens), try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "prompt token count of 9000 exceeds the limit of 8192",
            r#"github-copilot API error (413): {"message":"failed to parse request","code":""}"#,
            "invalid params, context window exceeds limit",
            "Your request exceeded model token limit: 9000 (requested: 9500)",
            "Prompt has 9,000 tokens, but the configured context size is 8,192 tokens",
            "Prompt contains 9000 tokens and 0 draft tokens, too large for model with 8192 maximum context length",
            r#"{"code":"1261","message":"Prompt too long"}"#,
            r#"{"code":"1261","message":"Prompt exceeds max length"}"#,
            "Range of input length should be [1, 98304]",
            "prompt too long; exceeded max context length by 300 tokens",
            "finish_reason: model_context_window_exceeded",
            "context_length_exceeded",
            "Too many tokens in the request",
            "token limit exceeded",
            "Input is too long for requested model.",
        ];
        for message in overflows {
            assert!(is_overflow_error(message, "any"), "{message}");
        }
        for message in [
            "ThrottlingException: Too many tokens, please wait before trying again. rate limit",
            "Throttling error: Too many tokens, please wait",
            "429 too many requests",
            r#"500 {"error":"internal"}"#,
            r#"400 {"error":"the body mentions 413 somewhere"}"#,
        ] {
            assert!(!is_overflow_error(message, "any"), "{message}");
        }
        assert!(is_overflow_error("400 status code (no body)", "cerebras"));
        assert!(is_overflow_error("413", "cerebras"));
        assert!(!is_overflow_error("400 status code (no body)", "openai"));
    }

    #[test]
    fn silent_overflow_and_a_full_window_length_stop() {
        let mut answer = AssistantMessage::empty("openai-completions", "zai", "glm");
        answer.usage.input = 130_000;
        assert!(is_context_overflow(&answer, 128_000));
        assert!(!is_context_overflow(&answer, 0));
        answer.stop_reason = StopReason::Length;
        answer.usage.input = 127_000;
        assert!(is_context_overflow(&answer, 128_000));
        answer.usage.output = 5;
        assert!(!is_context_overflow(&answer, 128_000));
        assert!(is_recoverable_length(&answer, 4096));
        answer.usage.output = 4096;
        assert!(!is_recoverable_length(&answer, 4096));
    }
}
