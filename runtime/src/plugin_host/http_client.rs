//! Plugin HTTP's shared client, its timeouts, and a response being received (the
//! representation of `pith:plugin/http`'s `response` resource; see [`super::imports::http`]).

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;

/// A response being received.
pub struct HttpResponse {
    pub(super) status: u16,
    /// Name and value of each header.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    pub(super) done: bool,
}

/// How long plugin HTTP may wait (settings `http`). A stalled provider ends as a retryable
/// error instead of holding the run forever.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct HttpTimeouts {
    /// Connecting (TCP and TLS): 30 s, as browsers give up.
    pub connect_timeout_ms: u64,
    /// From the request to the response's headers: 5 min, room for a model that thinks before
    /// it answers.
    pub first_byte_timeout_ms: u64,
    /// Between two chunks of a response body: 5 min, as Codex's stream idle timeout.
    pub idle_timeout_ms: u64,
}

impl Default for HttpTimeouts {
    fn default() -> Self {
        HttpTimeouts {
            connect_timeout_ms: 30_000,
            first_byte_timeout_ms: 300_000,
            idle_timeout_ms: 300_000,
        }
    }
}

/// The shared client (no redirects, HTTP/1 and HTTP/2, rustls) and its timeouts. The client
/// (its TLS configuration above all) is built on the first request: a run that never calls a
/// provider or a plugin's HTTP import never pays for it.
#[derive(Clone)]
pub struct HttpClient {
    client: std::sync::Arc<std::sync::OnceLock<reqwest::Client>>,
    pub(super) timeouts: HttpTimeouts,
    /// pi's `httpProxy`: the proxy every request goes through.
    proxy: Option<String>,
}

/// Idle connections kept per host for the next request.
pub const IDLE_CONNECTIONS_PER_HOST: usize = 16;

impl HttpClient {
    /// The client, built on first use.
    pub(super) fn get(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            let mut builder = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                // A multi-session host's many streams to one provider leave at most this many
                // idle connections behind (each closes after 90 s idle).
                .pool_max_idle_per_host(IDLE_CONNECTIONS_PER_HOST)
                .connect_timeout(Duration::from_millis(
                    self.timeouts.connect_timeout_ms.max(1),
                ));
            if let Some(url) = &self.proxy {
                match reqwest::Proxy::all(url) {
                    Ok(proxy) => builder = builder.proxy(proxy),
                    Err(err) => tracing::warn!("settings httpProxy {url:?} is not used: {err}"),
                }
            }
            builder.build().unwrap_or_default()
        })
    }
}

/// The shared client with these timeouts, through `proxy` when one is set.
pub fn client(timeouts: HttpTimeouts, proxy: Option<String>) -> HttpClient {
    HttpClient {
        client: std::sync::Arc::default(),
        timeouts,
        proxy,
    }
}
