//! What a session hears of its providers' HTTP traffic (pi's `before_provider_request` and
//! `after_provider_response`): a provider plugin's requests pass through these hooks, which
//! may replace a JSON body, and its responses' status and headers are told before the body
//! is read.

use super::session_context::BoxFuture;

/// The hooks of one provider request's calls.
pub trait ProviderHooks: Send + Sync {
    /// The JSON body a provider is about to send; `Some` is the body to send instead.
    fn before_request(&self, payload: String) -> BoxFuture<Option<String>>;
    /// A response's status and headers (names in lower case), before its body is read.
    fn after_response(&self, status: u16, headers: Vec<(String, String)>) -> BoxFuture<()>;
}
