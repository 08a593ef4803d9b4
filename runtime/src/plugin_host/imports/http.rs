//! `pith:plugin/http`: outbound HTTP with reqwest, only to the plugin's granted URL prefixes.
//! Redirects are not followed (a redirect could leave the allowlist); the guest sees the 3xx.

use std::time::Duration;

use futures_util::StreamExt;
use wasmtime::component::Resource;

use crate::plugin_host::bindings::imports::pith::plugin0_1_0::http::{
    Host, HostResponse, HttpError, Request,
};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::Header;
use crate::plugin_host::http_client::HttpResponse;
pub use crate::plugin_host::http_client::{HttpClient, HttpTimeouts, client};
use crate::plugin_host::sandbox::StoreState;

/// What a provider hears instead of a response to a learning step's body (it is not sent).
const LEARNED: &str = "the conversation's prefix was learned; this body is not sent";

impl Host for StoreState {
    async fn send(&mut self, req: Request) -> Result<Resource<HttpResponse>, HttpError> {
        let url = reqwest::Url::parse(&req.url)
            .map_err(|err| HttpError::InvalidRequest(format!("bad URL {:?}: {err}", req.url)))?;
        if !self.spec.capabilities.allows_url(&url) {
            return Err(HttpError::Denied(req.url));
        }
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| HttpError::InvalidRequest(format!("bad method {:?}", req.method)))?;
        let mut builder = self.spec.http.get().request(method, url);
        for header in &req.headers {
            let name =
                reqwest::header::HeaderName::from_bytes(header.name.as_bytes()).map_err(|_| {
                    HttpError::InvalidRequest(format!("bad header name {:?}", header.name))
                })?;
            let value = reqwest::header::HeaderValue::from_str(&header.value).map_err(|_| {
                HttpError::InvalidRequest(format!("bad value for header {}", header.name))
            })?;
            // The length is the body's as sent (a spliced body is longer than the guest's).
            if name != reqwest::header::CONTENT_LENGTH {
                builder = builder.header(name, value);
            }
        }
        let _host_time = self.clock.enter_host();
        let mut body = req.body;
        let mut spliced = None;
        // The session's cached conversation prefix goes into a provider's body.
        if let Some(splice) = &self.history_splice
            && let Some(sent) = body.take_if(|sent| splice.concerns(sent))
        {
            let whole = splice.apply(sent).map_err(|err| {
                HttpError::InvalidRequest(format!(
                    "{err}; the session's next request hands the whole conversation over"
                ))
            })?;
            tracing::debug!(target: "pith::history_cache", bytes = whole.len(), "spliced");
            if splice.learn_only {
                // A learning step: the body taught the prefix; nothing goes out.
                return Err(HttpError::Connection(LEARNED.to_string()));
            }
            spliced = Some(whole);
        }
        // A provider's JSON body goes past the session's extensions, which may replace it.
        if let Some(hooks) = &self.provider_hooks {
            if let Some(whole) = spliced.take() {
                body = Some(whole.to_vec().map_err(|err| {
                    HttpError::Connection(format!(
                        "cannot read the conversation's cached prefix: {err}"
                    ))
                })?);
            }
            if let Some(sent) = &body
                && let Ok(text) = std::str::from_utf8(sent)
                && text.trim_start().starts_with('{')
                && let Some(replacement) = hooks.before_request(text.to_string()).await
            {
                body = Some(replacement.into_bytes());
            }
        }
        if let Some(whole) = spliced {
            // Written piece by piece: the cached prefix is shared or read from its file, never
            // copied into one buffer.
            let length = whole.len();
            let refused = self
                .history_splice
                .as_ref()
                .map(|splice| splice.refused.clone())
                .unwrap_or_default();
            let pieces = whole.into_stream(refused);
            builder = builder
                .header(reqwest::header::CONTENT_LENGTH, length)
                .body(reqwest::Body::wrap_stream(pieces));
        } else if let Some(body) = body {
            builder = builder.body(body);
        }
        let sent = builder.send();
        let first_byte = self.spec.http.timeouts.first_byte_timeout_ms.max(1);
        let limit = req
            .timeout_ms
            .map_or(first_byte, |ms| u64::from(ms).min(first_byte));
        let response = tokio::time::timeout(Duration::from_millis(limit), sent)
            .await
            .map_err(|_| HttpError::Timeout)?
            .map_err(|err| {
                if err.is_timeout() {
                    HttpError::Timeout
                } else {
                    HttpError::Connection(error_chain(&err))
                }
            })?;
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        // reqwest's header names are in lower case already, as the hooks get them.
        if let Some(hooks) = &self.provider_hooks {
            hooks.after_response(status, headers.clone()).await;
        }
        let body = Box::pin(response.bytes_stream());
        self.table()
            .push(HttpResponse {
                status,
                headers,
                body,
                done: false,
            })
            .map_err(|err| HttpError::Connection(err.to_string()))
    }
}

impl HostResponse for StoreState {
    async fn status(&mut self, this: Resource<HttpResponse>) -> u16 {
        self.table().get(&this).map_or(0, |r| r.status)
    }

    async fn headers(&mut self, this: Resource<HttpResponse>) -> Vec<Header> {
        self.table()
            .get(&this)
            .map(|r| {
                r.headers
                    .iter()
                    .map(|(name, value)| Header {
                        name: name.clone(),
                        value: value.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn next_chunk(
        &mut self,
        this: Resource<HttpResponse>,
    ) -> Result<Option<Vec<u8>>, HttpError> {
        let _host_time = self.clock.enter_host();
        let idle = self.spec.http.timeouts.idle_timeout_ms.max(1);
        let response = self
            .table()
            .get_mut(&this)
            .map_err(|err| HttpError::Body(err.to_string()))?;
        if response.done {
            return Ok(None);
        }
        let Ok(next) =
            tokio::time::timeout(Duration::from_millis(idle), response.body.next()).await
        else {
            response.done = true;
            return Err(HttpError::Body(format!(
                "the response stalled: no data for {idle} ms (settings httpIdleTimeoutMs or http.idleTimeoutMs)"
            )));
        };
        match next {
            Some(Ok(chunk)) => Ok(Some(chunk.to_vec())),
            Some(Err(err)) => {
                response.done = true;
                Err(HttpError::Body(error_chain(&err)))
            }
            None => {
                response.done = true;
                Ok(None)
            }
        }
    }

    async fn drop(&mut self, this: Resource<HttpResponse>) -> wasmtime::Result<()> {
        self.table().delete(this)?;
        Ok(())
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
