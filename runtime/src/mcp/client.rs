//! One connection to an MCP server, on the official SDK (`rmcp`): the handshake (protocol
//! 2025-11-25, the session's directory as the one root), the tool list, and requests with a
//! deadline that progress re-arms and that an abort cancels on the server
//! (`notifications/cancelled`). Server notifications (a changed tool list, progress, log
//! messages) are forwarded to the server's owner.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[allow(deprecated)]
// roots and logging: deprecated by the draft revision, in use by servers of 2025-11-25
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, Implementation, ListRootsResult, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    Root, RootsCapabilities, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::process::ServerProcess;

/// What a server told pith on its own.
#[derive(Debug)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/message`: `(level, logger, data)`.
    Log(String, Option<String>, Value),
}

/// A progress report of a running call: `(progress, total, message)`.
pub type Progress = (f64, Option<f64>, Option<String>);

type ProgressRoutes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Progress>>>>;

/// The client side of the connection.
pub struct Handler {
    root: PathBuf,
    notices: mpsc::UnboundedSender<Notice>,
    progress: ProgressRoutes,
}

fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("pith", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let root = Root::new(format!("file://{}", self.root.display())).with_name(name);
        Ok(ListRootsResult::new(vec![root]))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.notices.send(Notice::ToolsChanged);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = token_key(&params.progress_token);
        let route = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        if let Some(route) = route {
            let _ = route.send((params.progress, params.total, params.message));
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "info".into());
        let _ = self
            .notices
            .send(Notice::Log(level, params.logger, params.data));
    }
}

/// How a request failed, in pi's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    /// No answer within the deadline (re-armed by progress).
    #[error("MCP request timed out after {0}ms")]
    TimedOut(u128),
    /// The caller aborted it.
    #[error("MCP request aborted")]
    Aborted,
    /// The connection is gone.
    #[error("MCP connection closed")]
    Closed,
    /// The server answered with an error.
    #[error("{0}")]
    Server(String),
}

impl RequestError {
    fn from_service(err: ServiceError, timeout: Duration) -> RequestError {
        match err {
            ServiceError::McpError(data) => RequestError::Server(data.message.into_owned()),
            ServiceError::Timeout { .. } => RequestError::TimedOut(timeout.as_millis()),
            ServiceError::Cancelled { .. } => RequestError::Aborted,
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => RequestError::Closed,
            other => RequestError::Server(other.to_string()),
        }
    }
}

/// A live connection.
pub struct Connection {
    service: RunningService<RoleClient, Handler>,
    process: Mutex<Option<ServerProcess>>,
    progress: ProgressRoutes,
    /// The server's tools when connected (updated on `list_changed` by the owner).
    pub tools: Vec<Tool>,
    /// True when the server offers resources.
    pub has_resources: bool,
    /// The server's `instructions`, trimmed.
    pub instructions: Option<String>,
}

/// How the transport is reached.
pub enum Channel {
    /// A process's stdout and stdin.
    Stdio(
        Box<ServerProcess>,
        tokio::process::ChildStdout,
        tokio::process::ChildStdin,
    ),
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers (resolved).
        headers: Vec<(String, String)>,
        /// The client.
        http: super::http::McpHttp,
    },
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The handshake failed or timed out; the text is pi's.
    #[error("{0}")]
    Failed(String),
    /// The server asks for a sign-in.
    #[error("needs sign-in")]
    NeedsSignIn,
}

impl Connection {
    /// Connects over `channel` within `timeout`, then lists the tools.
    pub async fn open(
        channel: Channel,
        root: PathBuf,
        timeout: Duration,
        notices: mpsc::UnboundedSender<Notice>,
    ) -> Result<Connection, ConnectError> {
        let progress: ProgressRoutes = Arc::default();
        let handler = Handler {
            root,
            notices,
            progress: progress.clone(),
        };
        let timed_out =
            || ConnectError::Failed(RequestError::TimedOut(timeout.as_millis()).to_string());
        let (service, process) = match channel {
            Channel::Stdio(mut process, stdout, stdin) => {
                let started =
                    tokio::time::timeout(timeout, rmcp::serve_client(handler, (stdout, stdin)))
                        .await;
                match started {
                    Ok(Ok(service)) => (service, Some(*process)),
                    Ok(Err(err)) => {
                        // Give the process a moment to finish writing why it stopped.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let tail = process.stderr_tail();
                        let running = process.running();
                        tokio::spawn(process.stop());
                        let text = match err {
                            rmcp::service::ClientInitializeError::ConnectionClosed(_) => {
                                RequestError::Closed.to_string()
                            }
                            _ if !running => RequestError::Closed.to_string(),
                            other => other.to_string(),
                        };
                        return Err(ConnectError::Failed(with_tail(text, &tail)));
                    }
                    Err(_) => {
                        tokio::spawn(process.stop());
                        return Err(timed_out());
                    }
                }
            }
            Channel::Http { url, headers, http } => {
                let mut custom = HashMap::new();
                for (name, value) in &headers {
                    let (Ok(name), Ok(value)) = (
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                        reqwest::header::HeaderValue::from_str(value),
                    ) else {
                        return Err(ConnectError::Failed(format!(
                            "header \"{name}\" is not a valid HTTP header"
                        )));
                    };
                    custom.insert(name, value);
                }
                let config =
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.clone())
                        .custom_headers(custom);
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    http.clone(),
                    config,
                );
                let started =
                    tokio::time::timeout(timeout, rmcp::serve_client(handler, transport)).await;
                match started {
                    Ok(Ok(service)) => (service, None),
                    Ok(Err(err)) => return Err(http_failure(err, &http, &url, &headers).await),
                    Err(_) => return Err(timed_out()),
                }
            }
        };
        service
            .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
            .await;
        let info = service.peer_info();
        let capabilities = info.as_ref().map(|i| i.capabilities.clone());
        let has_tools = capabilities.as_ref().is_some_and(|c| c.tools.is_some());
        let has_resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
        let instructions = info
            .as_ref()
            .and_then(|i| i.instructions.as_deref())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        let mut connection = Connection {
            service,
            process: Mutex::new(process),
            progress,
            tools: Vec::new(),
            has_resources,
            instructions,
        };
        if has_tools {
            connection.tools = connection
                .list_tools(timeout)
                .await
                .map_err(|err| ConnectError::Failed(err.to_string()))?;
        }
        Ok(connection)
    }

    /// Every page of `tools/list`.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Tool>, RequestError> {
        match tokio::time::timeout(timeout, self.service.list_all_tools()).await {
            Ok(result) => result.map_err(|err| RequestError::from_service(err, timeout)),
            Err(_) => Err(RequestError::TimedOut(timeout.as_millis())),
        }
    }

    /// True while the connection can carry requests.
    pub fn alive(&self) -> bool {
        if self.service.is_transport_closed() {
            return false;
        }
        let mut process = self.process.lock().unwrap_or_else(|p| p.into_inner());
        process.as_mut().is_none_or(ServerProcess::running)
    }

    /// The last lines the server wrote to its standard error.
    pub fn stderr_tail(&self) -> String {
        self.process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(ServerProcess::stderr_tail)
            .unwrap_or_default()
    }

    /// `tools/call`: the result as JSON. Progress goes to `progress`; `cancel` aborts the call
    /// (and tells the server).
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<Value, RequestError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout).reset_timeout_on_progress();
        let handle = self
            .service
            .send_request_with_option(request, options)
            .await
            .map_err(|err| RequestError::from_service(err, timeout))?;
        let key = token_key(&handle.progress_token);
        if let Some(progress) = progress {
            self.progress
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.clone(), progress);
        }
        let id = handle.id.clone();
        let answer = tokio::select! {
            answer = handle.await_response() => answer.map_err(|err| RequestError::from_service(err, timeout)),
            _ = cancel.cancelled() => {
                let notice = CancelledNotificationParam::new(Some(id), Some("AbortError: This operation was aborted".into()));
                let _ = self.service.notify_cancelled(notice).await;
                Err(RequestError::Aborted)
            }
        };
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
        match answer? {
            ServerResult::CallToolResult(result) => {
                serde_json::to_value(result).map_err(|err| RequestError::Server(err.to_string()))
            }
            other => {
                serde_json::to_value(other).map_err(|err| RequestError::Server(err.to_string()))
            }
        }
    }

    /// One page of `resources/list` (or `resources/templates/list` when `templates`), as JSON.
    pub async fn list_resources(
        &self,
        templates: bool,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        let params = Some(PaginatedRequestParams::default().with_cursor(cursor));
        let listed = async {
            if templates {
                self.service
                    .list_resource_templates(params)
                    .await
                    .and_then(|r| {
                        serde_json::to_value(r).map_err(|_| ServiceError::UnexpectedResponse)
                    })
            } else {
                self.service.list_resources(params).await.and_then(|r| {
                    serde_json::to_value(r).map_err(|_| ServiceError::UnexpectedResponse)
                })
            }
        };
        match tokio::time::timeout(timeout, listed).await {
            Ok(result) => result.map_err(|err| RequestError::from_service(err, timeout)),
            Err(_) => Err(RequestError::TimedOut(timeout.as_millis())),
        }
    }

    /// `resources/read`, as JSON.
    pub async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Value, RequestError> {
        let read = self
            .service
            .read_resource(ReadResourceRequestParams::new(uri.to_string()));
        match tokio::time::timeout(timeout, read).await {
            Ok(Ok(result)) => {
                serde_json::to_value(result).map_err(|err| RequestError::Server(err.to_string()))
            }
            Ok(Err(err)) => Err(RequestError::from_service(err, timeout)),
            Err(_) => Err(RequestError::TimedOut(timeout.as_millis())),
        }
    }

    /// Closes the connection: the SDK closes stdin (or ends the HTTP session), then the
    /// process is stopped.
    pub async fn close(self) {
        let process = self
            .process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.service.cancel()).await;
        if let Some(process) = process {
            process.stop().await;
        }
    }
}

/// pi's text of a failure with the server's last standard-error lines.
pub fn with_tail(text: String, tail: &str) -> String {
    if tail.trim().is_empty() {
        text
    } else {
        let tail: String = tail
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{text}\n{tail}")
    }
}

/// Why an HTTP handshake failed: a sign-in, a legacy SSE endpoint, or the error as it is.
async fn http_failure(
    err: rmcp::service::ClientInitializeError,
    http: &super::http::McpHttp,
    url: &str,
    headers: &[(String, String)],
) -> ConnectError {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = &err
        && let Some(http_error) = error
            .error
            .downcast_ref::<StreamableHttpError<super::http::McpHttpError>>()
    {
        match http_error {
            StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => {
                return ConnectError::NeedsSignIn;
            }
            StreamableHttpError::Client(super::http::McpHttpError::InitializeRefused {
                status,
            }) => {
                if super::http::is_legacy_sse(http, url, headers).await {
                    return ConnectError::Failed(
                        "this server uses the legacy SSE transport, which pith does not support: use its streamable HTTP URL (often the same address ending in /mcp)".into(),
                    );
                }
                return ConnectError::Failed(format!(
                    "MCP HTTP request failed with status {status}"
                ));
            }
            StreamableHttpError::Client(inner) => {
                return ConnectError::Failed(inner.to_string());
            }
            other => return ConnectError::Failed(other.to_string()),
        }
    }
    ConnectError::Failed(err.to_string())
}
