//! Automatic retry of transient provider errors (pi-behaviour §11): when a run ends with an
//! answer that failed for a transient reason (overloaded, rate limit, 5xx, a dropped
//! connection — not a context overflow), the failed answer is taken out of the context, pith
//! waits 2 s, 4 s, 8 s… (`auto_retry_start`) and continues the conversation; the first good
//! answer emits `auto_retry_end` with `success: true`, running out of attempts or a cancel
//! (`abort`, `abort_retry`) emits it with `success: false`.

use crate::agent::event::SessionEvent;

/// Retry settings (`retry` in settings.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts after the first failure.
    pub max_retries: u32,
    /// The first delay; each attempt doubles it.
    pub base_delay_ms: u64,
    /// The longest delay (`retry.maxAgentDelayMs`).
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay_ms: 2000,
            max_delay_ms: 60_000,
        }
    }
}

impl RetryPolicy {
    /// The delay before attempt `attempt` (1-based): the base doubled each attempt, at most
    /// the longest delay.
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        self.base_delay_ms
            .saturating_mul(1u64 << attempt.saturating_sub(1).min(20))
            .min(self.max_delay_ms)
    }
}

/// True when an error message is one pi retries.
pub fn is_retryable(message: &str) -> bool {
    // A context overflow is compacted away, not retried (see `crate::agent::run::overflow`).
    if crate::agent::run::overflow::is_overflow_error(message, "") {
        return false;
    }
    let lower = message.to_ascii_lowercase();
    let words = [
        "overloaded",
        "rate limit",
        "ratelimit",
        "rate_limit",
        "too many requests",
        "429",
        "500",
        "502",
        "503",
        "504",
        "service unavailable",
        "service_unavailable",
        "server error",
        "server_error",
        "internal error",
        "internal_error",
        "connection error",
        "connection refused",
        "connection closed",
        // openai-completions' cut stream, in pi's words (pi does not retry it; a cut stream is
        // worth another try).
        "stream ended without finish_reason",
        "connection reset",
        "other side closed",
        "fetch failed",
        "upstream connect",
        "reset before headers",
        "terminated",
        "retry delay",
        // A prefix file pith could not read as it sent a body: the session's cache is off from
        // then on, so another attempt hands the whole conversation over.
        "the conversation's prefix file",
        // Stalls (pith's HTTP timeouts): pi has none, a stall is worth another try.
        "request timed out",
        "the response stalled",
    ];
    words.iter().any(|w| lower.contains(w))
}

/// `auto_retry_start`
pub fn start_event(attempt: u32, max: u32, delay_ms: u64, error: &str) -> SessionEvent {
    SessionEvent::AutoRetryStart {
        attempt,
        max_attempts: max,
        delay_ms,
        error_message: error.to_string(),
    }
}

/// `auto_retry_end`
pub fn end_event(success: bool, attempt: u32, final_error: Option<&str>) -> SessionEvent {
    SessionEvent::AutoRetryEnd {
        success,
        attempt,
        final_error: final_error.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_pi() {
        assert!(is_retryable(
            r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
        ));
        assert!(is_retryable("429 Too Many Requests"));
        assert!(is_retryable(
            "The connection closed before the response was complete"
        ));
        assert!(!is_retryable(
            "400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum"
        ));
        assert!(!is_retryable("401 invalid x-api-key"));
        assert_eq!(RetryPolicy::default().delay_ms(1), 2000);
        assert_eq!(RetryPolicy::default().delay_ms(3), 8000);
        // pi's `retry.maxAgentDelayMs` caps each delay (60 s by default).
        assert_eq!(RetryPolicy::default().delay_ms(8), 60_000);
        let capped = RetryPolicy {
            max_delay_ms: 5000,
            ..RetryPolicy::default()
        };
        assert_eq!(capped.delay_ms(3), 5000);
    }
}
