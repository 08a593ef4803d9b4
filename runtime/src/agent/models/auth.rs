//! A provider's credentials as the registry holds them (`auth.json`'s entries) and as a
//! request gets them.

use crate::agent::models::oauth;

/// An `auth.json` entry (pi's shape).
#[derive(Debug, Clone)]
pub(super) enum Stored {
    /// `{"type": "api_key", "key": "…", "env": {…}}`: the key in pi's value forms, its
    /// variables looked up in `env` first.
    ApiKey {
        key: Option<String>,
        env: serde_json::Map<String, serde_json::Value>,
    },
    /// `{"type": "oauth", "access": "…", "refresh": "…", "expires": …}` from pi's `/login`.
    OAuth(oauth::OAuthCredential),
    /// Any other type: the provider is not configured (pi does not fall back to variables).
    Unknown,
}

/// A request's credentials: the key handed to the provider plugin, and headers that carry
/// one instead (`ANTHROPIC_AUTH_TOKEN`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestAuth {
    /// The API key.
    pub api_key: Option<String>,
    /// Headers added to the model's.
    pub headers: Vec<(String, String)>,
    /// A base URL that replaces the model's (GitHub Copilot's, from its token).
    pub base_url: Option<String>,
}
