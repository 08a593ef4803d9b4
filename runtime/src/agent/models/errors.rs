//! Why the model registry could not read one of its files or resolve a request's
//! credentials, and why a model could not be handed to its provider; the texts are pi's.

/// Why the registry could not read one of its files or resolve a request's credentials; the
/// text is pi's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// A file that does not read or parse, or lacks what it must hold (it is left out).
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// `models.json`'s `apiKey` did not resolve (never sent as it is).
    #[error("API key auth failed for provider {provider}: {detail}")]
    Unresolved {
        /// The provider.
        provider: String,
        /// What did not resolve (pi's "Failed to resolve …").
        detail: String,
    },
    /// An OAuth token could not be renewed.
    #[error(
        "OAuth refresh failed for {provider}: {cause} (log in again with pi's /login {provider})"
    )]
    OAuthRefresh {
        /// The provider.
        provider: String,
        /// Why.
        cause: String,
    },
}

impl KeyError {
    /// A file's error.
    pub(crate) fn file(path: &std::path::Path, reason: impl std::fmt::Display) -> KeyError {
        KeyError::File {
            path: path.display().to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Why a model could not be handed to its provider plugin: the environment lacks what it needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A header value in pi's forms (`$NAME`, `!command`) did not resolve (pi's "Failed to
    /// resolve …").
    #[error("{0}")]
    Header(String),
    /// An Azure model with no endpoint.
    #[error(
        "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or give the model a baseUrl in models.json."
    )]
    AzureBaseUrlMissing,
    /// An Azure endpoint that is no URL.
    #[error("Invalid Azure OpenAI base URL: {0}")]
    AzureBaseUrlInvalid(String),
}
