//! Outbound HTTP through the host. Only URLs under the plugin's granted prefixes are allowed.

use crate::bindings::imports::pith::plugin0_1_0::http as wit;
use crate::bindings::imports::pith::plugin0_1_0::types::Header;

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
    /// LLM clients report it. A 2xx HTML page (a proxy's login page, a wrong base URL) is an
    /// error that says so, not a stream that ends early.
    pub fn send_ok(self) -> Result<Response, String> {
        let response = self.send().map_err(|err| err.message())?;
        let status = response.status();
        if (200..300).contains(&status) {
            if response.content_type().contains("text/html") {
                let page = response.text().unwrap_or_default();
                return Err(html_answer(status, &page));
            }
            return Ok(response);
        }
        let body = response.text().unwrap_or_default();
        Err(format!("{status} {}", body.trim()))
    }
}

/// The error for an HTML page where an API answer was expected, naming the page's title.
fn html_answer(status: u16, page: &str) -> String {
    let lower = page.to_ascii_lowercase();
    let title = lower
        .find("<title>")
        .and_then(|start| {
            let start = start + "<title>".len();
            let end = lower[start..].find("</title>")? + start;
            page.get(start..end)
        })
        .map(|t| format!(" (\"{}\")", t.trim()))
        .unwrap_or_default();
    format!(
        "The server answered {status} with an HTML page{title}, not the API's event stream: check the model's baseUrl and any proxy in between"
    )
}

impl Response {
    /// The `content-type` header, lower-cased (empty when absent).
    pub fn content_type(&self) -> String {
        self.headers()
            .into_iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| h.value.to_ascii_lowercase())
            .unwrap_or_default()
    }

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
