//! Outbound HTTP through the host. Only URLs under the plugin's granted prefixes are allowed.

use crate::bindings::imports::pith::plugin::http as wit;
use crate::bindings::imports::pith::plugin::types::Header;

pub use wit::{HttpError, Response};

/// Builds and sends a request.
#[derive(Debug, Clone)]
pub struct Request {
    inner: wit::Request,
}

impl Request {
    /// A request with the given method and URL.
    pub fn new(method: &str, url: &str) -> Self {
        Request {
            inner: wit::Request {
                method: method.to_string(),
                url: url.to_string(),
                headers: Vec::new(),
                body: None,
                timeout_ms: None,
            },
        }
    }

    /// A `GET` request.
    pub fn get(url: &str) -> Self {
        Self::new("GET", url)
    }

    /// A `POST` request.
    pub fn post(url: &str) -> Self {
        Self::new("POST", url)
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.inner.headers.push(Header {
            name: name.to_string(),
            value: value.to_string(),
        });
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.inner.body = Some(body.into());
        self
    }

    /// Sets a JSON body and its content type.
    pub fn json(self, value: &serde_json::Value) -> Self {
        self.header("content-type", "application/json")
            .body(value.to_string())
    }

    /// Gives up when the response's headers take longer than this.
    pub fn timeout_ms(mut self, ms: u32) -> Self {
        self.inner.timeout_ms = Some(ms);
        self
    }

    /// Sends the request; returns once the headers have arrived.
    pub fn send(self) -> Result<Response, HttpError> {
        wit::send(&self.inner)
    }

    /// Sends the request and fails unless the status is 2xx, with `"<status> <body>"` as
    /// LLM clients report it.
    pub fn send_ok(self) -> Result<Response, String> {
        let response = self.send().map_err(|err| err.message())?;
        let status = response.status();
        if (200..300).contains(&status) {
            return Ok(response);
        }
        let body = response.text().unwrap_or_default();
        Err(format!("{status} {}", body.trim()))
    }
}

impl Response {
    /// Reads the whole body.
    pub fn bytes(&self) -> Result<Vec<u8>, HttpError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk()? {
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Reads the whole body as (lossy) UTF-8 text.
    pub fn text(&self) -> Result<String, HttpError> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }
}

impl HttpError {
    /// A message for people and models (the generated `Display` is debug-like).
    pub fn message(&self) -> String {
        match self {
            HttpError::Denied(url) => format!("http denied: {url} is not under a granted prefix"),
            HttpError::InvalidRequest(reason) => format!("invalid request: {reason}"),
            HttpError::Connection(reason) => format!("connection failed: {reason}"),
            HttpError::Timeout => "request timed out".to_string(),
            HttpError::Body(reason) => format!("reading the body failed: {reason}"),
        }
    }
}
