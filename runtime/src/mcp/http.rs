//! Streamable HTTP for the MCP client over pith's own HTTP client (reqwest 0.12, rustls): the
//! SDK's transport worker does the protocol (sessions, the standalone stream, re-initialising an
//! expired session); this module does the requests as the SDK's own client does them. The
//! initialize request has a deadline of its own (a server that never answers cannot hold a
//! worker), and a server that refuses the POST of `initialize` is told apart so that a legacy
//! SSE server can be named as one.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

/// How long the initialize request may take.
pub const INITIALIZE_DEADLINE: Duration = Duration::from_secs(30);

/// The HTTP client of one MCP server.
#[derive(Clone)]
pub struct McpHttp {
    client: reqwest::Client,
}

/// What went wrong on the client's side.
#[derive(Debug, thiserror::Error)]
pub enum McpHttpError {
    /// The request failed (connection, TLS, body).
    #[error("{0}")]
    Request(#[from] reqwest::Error),
    /// The server refused the POST of `initialize` (a legacy SSE endpoint does).
    #[error("the server refused the initialize request (HTTP {status})")]
    InitializeRefused {
        /// The status it answered.
        status: u16,
    },
    /// The initialize request had no answer in time.
    #[error("the server did not answer the initialize request within {} s", INITIALIZE_DEADLINE.as_secs())]
    InitializeTimedOut,
}

type HttpResult<T> = Result<T, StreamableHttpError<McpHttpError>>;

fn client_error(err: reqwest::Error) -> StreamableHttpError<McpHttpError> {
    StreamableHttpError::Client(McpHttpError::Request(err))
}

impl McpHttp {
    /// A client; `connect_timeout` bounds each connection.
    pub fn new() -> Result<McpHttp, String> {
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map(|client| McpHttp { client })
            .map_err(|err| format!("cannot build the HTTP client: {err}"))
    }

    /// The underlying client (for the legacy-SSE probe).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session_id: Option<&str>,
    auth_token: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    request = request.header(
        ACCEPT,
        format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
    );
    if let Some(token) = auth_token {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom_headers {
        request = request.header(name, value);
    }
    if let Some(id) = session_id {
        request = request.header(HEADER_SESSION_ID, id);
    }
    request
}

/// The answer's media type without parameters, lowercased.
fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase(),
    )
}

/// The errors every answer is checked for: a sign-in the server asks for, too many requests,
/// a server error.
fn refusal(response: &reqwest::Response) -> Option<StreamableHttpError<McpHttpError>> {
    let status = response.status();
    if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        let header = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("")
            .to_string();
        return Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            header,
        )));
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Some(StreamableHttpError::HttpStatus(HttpStatusError::new(
            status.as_u16(),
            None,
        )));
    }
    None
}

fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

impl StreamableHttpClient for McpHttp {
    type Error = McpHttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let initialize = matches!(
            &message,
            JsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::InitializeRequest(_))
        );
        let awaits_answer = matches!(&message, JsonRpcMessage::Request(_));
        let body = serde_json::to_vec(&message)?;
        let request = with_headers(
            self.client.post(uri.as_ref()),
            session_id.as_deref(),
            auth_token,
            custom_headers,
        )
        .header(CONTENT_TYPE, JSON_MIME_TYPE)
        .body(body);
        let response = if initialize {
            match tokio::time::timeout(INITIALIZE_DEADLINE, request.send()).await {
                Ok(sent) => sent.map_err(client_error)?,
                Err(_) => {
                    return Err(StreamableHttpError::Client(
                        McpHttpError::InitializeTimedOut,
                    ));
                }
            }
        } else {
            request.send().await.map_err(client_error)?
        };
        let status = response.status();
        if let Some(error) = refusal(&response) {
            return Err(error);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if initialize
            && matches!(
                status,
                StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
            )
        {
            return Err(StreamableHttpError::Client(
                McpHttpError::InitializeRefused {
                    status: status.as_u16(),
                },
            ));
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let media = media_type(&response);
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            // A JSON-RPC error in the body is the server's answer.
            if let Ok(message @ JsonRpcMessage::Error(_)) =
                serde_json::from_str::<ServerJsonRpcMessage>(&text)
            {
                return Ok(StreamableHttpPostResponse::Json(message, session));
            }
            let text: String = text.chars().take(500).collect();
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {text}"),
            )));
        }
        match media.as_deref() {
            Some(EVENT_STREAM_MIME_TYPE) => {
                Ok(StreamableHttpPostResponse::Sse(sse(response), session))
            }
            Some(JSON_MIME_TYPE) => {
                let bytes = response.bytes().await.map_err(client_error)?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&bytes) {
                    Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
                    Err(_) if !awaits_answer => Ok(StreamableHttpPostResponse::Accepted),
                    Err(err) => Err(StreamableHttpError::Deserialize(err)),
                }
            }
            _ if !awaits_answer => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let response = with_headers(
            self.client.delete(uri.as_ref()),
            Some(&session_id),
            auth_token,
            custom_headers,
        )
        .send()
        .await
        .map_err(client_error)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        response.error_for_status().map_err(client_error)?;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let mut request = with_headers(
            self.client.get(uri.as_ref()),
            session_id.as_deref(),
            auth_token,
            custom_headers,
        );
        if let Some(id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, id);
        }
        let response = request.send().await.map_err(client_error)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(error) = refusal(&response) {
            return Err(error);
        }
        let response = response.error_for_status().map_err(client_error)?;
        match media_type(&response).as_deref() {
            Some(EVENT_STREAM_MIME_TYPE | JSON_MIME_TYPE) => Ok(sse(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }
}

/// True when `url` is a legacy (2024-11-05) SSE endpoint: a GET opens an event stream whose
/// first event is `endpoint`.
pub async fn is_legacy_sse(http: &McpHttp, url: &str, headers: &[(String, String)]) -> bool {
    let probe = async {
        let mut request = http.client.get(url).header(ACCEPT, EVENT_STREAM_MIME_TYPE);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success()
            || media_type(&response).as_deref() != Some(EVENT_STREAM_MIME_TYPE)
        {
            return None;
        }
        let mut events = sse(response);
        for _ in 0..3 {
            if events.next().await?.ok()?.event.as_deref() == Some("endpoint") {
                return Some(true);
            }
        }
        Some(false)
    };
    tokio::time::timeout(Duration::from_secs(5), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
