//! One configured MCP server over its life: connected in the background when the session
//! starts, its tools kept (and refreshed on `list_changed`), calls made with pi's texts for
//! every failure, a dropped connection shown as disconnected and made again on the next call,
//! a failed one tried again on the next call or `/mcp reconnect`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::client::{Channel, ConnectError, Connection, Notice, Progress, RequestError};
use super::config::{SandboxLoosening, ServerConfig, Transport};
use super::log::McpLog;
use super::process::{Launch, ServerProcess};
use super::results::{Origin, tool_output};
use crate::agent::models::credentials::{Lookup, resolve};
use crate::content::{Content, ToolOutput};
use crate::sandbox::SandboxPolicy;

/// What every server of a session shares.
pub struct ServerContext {
    /// The session's directory (the servers' default directory and root).
    pub cwd: PathBuf,
    /// The sandbox the session's shell runs under (stdio servers run under it too).
    pub policy: Arc<SandboxPolicy>,
    /// `<agent dir>/mcp.log`.
    pub log: Arc<McpLog>,
    /// The user's `mcp.json` (where a server's sandbox may be loosened).
    pub user_file: PathBuf,
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// `enabled: false`.
    Disabled,
    /// Connecting.
    Starting,
    /// Connected.
    Connected,
    /// The last attempt failed (pi's text).
    Failed(String),
    /// The connection dropped; made again on the next call.
    Disconnected(String),
    /// It asks for a sign-in pith cannot do.
    NeedsSignIn,
    /// Shut down with the session.
    Closed,
}

/// One server.
pub struct McpServer {
    /// Its configuration.
    pub config: ServerConfig,
    context: Arc<ServerContext>,
    status: Mutex<Status>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    tools: Mutex<Vec<Tool>>,
    has_resources: AtomicBool,
    instructions: Mutex<Option<String>>,
    /// True once the first attempt to connect has ended.
    settled: watch::Sender<bool>,
    /// Bumped whenever the tool list changes.
    pub changed: watch::Sender<u64>,
}

impl McpServer {
    /// A server, not connected yet.
    pub fn new(config: ServerConfig, context: Arc<ServerContext>) -> Arc<McpServer> {
        let status = if config.enabled {
            Status::Starting
        } else {
            Status::Disabled
        };
        Arc::new(McpServer {
            settled: watch::channel(!config.enabled).0,
            config,
            context,
            status: Mutex::new(status),
            connection: tokio::sync::Mutex::new(None),
            tools: Mutex::new(Vec::new()),
            has_resources: AtomicBool::new(false),
            instructions: Mutex::new(None),
            changed: watch::channel(0).0,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Where it stands.
    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_status(&self, status: Status) {
        *self.status.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }

    /// Its tools as last listed.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// True when it offers resources.
    pub fn has_resources(&self) -> bool {
        self.has_resources.load(Ordering::Relaxed)
    }

    /// Its `instructions`.
    pub fn instructions(&self) -> Option<String> {
        self.instructions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Waits until the first attempt to connect has ended.
    pub async fn wait_settled(&self) {
        let mut settled = self.settled.subscribe();
        let _ = settled.wait_for(|s| *s).await;
    }

    /// The live connection, made (again) when there is none or it dropped.
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if connection.alive() {
                return Ok(connection.clone());
            }
            if let Some(dropped) = slot.take() {
                let tail = dropped.stderr_tail();
                self.set_status(Status::Disconnected(super::client::with_tail(
                    "Connection closed".into(),
                    &tail,
                )));
                if let Ok(dropped) = Arc::try_unwrap(dropped) {
                    tokio::spawn(dropped.close());
                }
            }
        }
        if matches!(self.status(), Status::Closed) {
            return Err(format!("MCP server \"{}\" is shut down", self.name()));
        }
        self.set_status(Status::Starting);
        let result = self.open().await;
        let outcome = match result {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = connection.tools.clone();
                self.has_resources
                    .store(connection.has_resources, Ordering::Relaxed);
                *self.instructions.lock().unwrap_or_else(|p| p.into_inner()) =
                    connection.instructions.clone();
                self.set_status(Status::Connected);
                self.changed.send_modify(|n| *n += 1);
                *slot = Some(connection.clone());
                Ok(connection)
            }
            Err(ConnectError::NeedsSignIn) => {
                self.set_status(Status::NeedsSignIn);
                Err(format!(
                    "MCP server \"{}\" requires sign-in, which pith does not do: put a token in its \"headers\" (\"Authorization\": \"Bearer ${{TOKEN_VAR}}\")",
                    self.name()
                ))
            }
            Err(ConnectError::Failed(text)) => {
                self.context.log.write(
                    self.name(),
                    "error",
                    None,
                    &Value::String(format!("failed to connect: {text}")),
                );
                self.set_status(Status::Failed(text.clone()));
                Err(text)
            }
        };
        self.settled.send_replace(true);
        outcome
    }

    /// Connects once (the background start, `/mcp reconnect`).
    pub async fn connect(self: &Arc<Self>) -> Result<(), String> {
        if !self.config.enabled {
            return Err(format!("MCP server \"{}\" is disabled.", self.name()));
        }
        self.connection().await.map(|_| ())
    }

    /// Closes the connection for good.
    pub async fn shut_down(&self) {
        self.set_status(Status::Closed);
        if let Some(connection) = self.connection.lock().await.take()
            && let Ok(connection) = Arc::try_unwrap(connection)
        {
            connection.close().await;
        }
    }

    /// Makes the channel and the connection.
    async fn open(self: &Arc<Self>) -> Result<Connection, ConnectError> {
        let channel = self.channel().await.map_err(ConnectError::Failed)?;
        let (notices, mut incoming) = mpsc::unbounded_channel();
        let connection = Connection::open(
            channel,
            self.context.cwd.clone(),
            self.config.timeout,
            notices,
        )
        .await?;
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Some(notice) = incoming.recv().await {
                let Some(server) = weak.upgrade() else { return };
                server.on_notice(notice).await;
            }
        });
        Ok(connection)
    }

    async fn on_notice(self: &Arc<Self>, notice: Notice) {
        match notice {
            Notice::Log(level, logger, data) => {
                self.context
                    .log
                    .write(self.name(), &level, logger.as_deref(), &data);
            }
            Notice::ToolsChanged => {
                let connection = self.connection.lock().await.clone();
                if let Some(connection) = connection
                    && let Ok(tools) = connection.list_tools(self.config.timeout).await
                {
                    *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = tools;
                    self.changed.send_modify(|n| *n += 1);
                }
            }
        }
    }

    /// The stdio process or the HTTP endpoint, values resolved.
    async fn channel(&self) -> Result<Channel, String> {
        let name = self.name().to_string();
        match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let env = resolve_all(env, self.config.literal_values, move |key| {
                    format!("MCP server \"{name}\" env \"{key}\"")
                })
                .await?;
                let dir = match cwd {
                    Some(cwd) => self.context.cwd.join(cwd),
                    None => self.context.cwd.clone(),
                };
                let policy = self.policy();
                let launch = Launch {
                    server: self.name(),
                    command,
                    args,
                    env: &env,
                    cwd: &dir,
                    policy: &policy,
                };
                let (process, stdout, stdin) =
                    ServerProcess::spawn(&launch, self.context.log.clone())
                        .map_err(|err| err.to_string())?;
                Ok(Channel::Stdio(Box::new(process), stdout, stdin))
            }
            Transport::Http { url, headers } => {
                let headers = resolve_all(headers, self.config.literal_values, move |key| {
                    format!("MCP server \"{name}\" header \"{key}\"")
                })
                .await?;
                Ok(Channel::Http {
                    url: url.clone(),
                    headers,
                    http: super::http::McpHttp::new()?,
                })
            }
        }
    }

    /// The sandbox of a stdio server: the session's, loosened as the user's file says.
    pub fn policy(&self) -> SandboxPolicy {
        let mut policy = (*self.context.policy).clone();
        match &self.config.sandbox {
            None => {}
            Some(SandboxLoosening::Mode(mode)) => policy.mode = *mode,
            Some(SandboxLoosening::Widen {
                writable_roots,
                network,
            }) => {
                policy.writable_roots.extend(writable_roots.iter().cloned());
                if let Some(network) = network {
                    policy.network = *network;
                }
            }
        }
        policy
    }

    fn origin(&self) -> Origin<'_> {
        Origin {
            server: self.name(),
            has_resources: self.has_resources(),
        }
    }

    /// Calls the server's tool `tool`; every failure is an error result with pi's text.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        updates: Option<mpsc::UnboundedSender<ToolOutput>>,
    ) -> ToolOutput {
        let failed = |text: String| ToolOutput {
            details: Some(json!({})),
            ..ToolOutput::error(text)
        };
        if !self.config.enabled {
            return failed(format!("MCP server \"{}\" is disabled.", self.name()));
        }
        let was_failed = matches!(self.status(), Status::Failed(_));
        let connection = tokio::select! {
            connection = self.connection() => connection,
            _ = cancel.cancelled() => return failed(RequestError::Aborted.to_string()),
        };
        let connection = match connection {
            Ok(connection) => connection,
            Err(text) if was_failed || !text.starts_with("MCP server") => {
                return failed(format!(
                    "MCP server \"{}\" failed to connect: {text}",
                    self.name()
                ));
            }
            Err(text) => return failed(text),
        };
        if !connection.tools.iter().any(|t| t.name == tool)
            && !self.tools().iter().any(|t| t.name == tool)
        {
            return failed(format!(
                "MCP tool \"{}/{tool}\" is no longer available.",
                self.name()
            ));
        }
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
        let details = json!({"server": self.name(), "tool": tool});
        let forward = updates.map(|updates| {
            let details = details.clone();
            tokio::spawn(async move {
                while let Some((progress, total, message)) = progress_rx.recv().await {
                    let text = message.unwrap_or_else(|| match total {
                        Some(total) => format!("Progress {}/{}", number(progress), number(total)),
                        None => format!("Progress {}", number(progress)),
                    });
                    let _ = updates.send(ToolOutput {
                        content: vec![Content::text(text)],
                        details: Some(details.clone()),
                        is_error: false,
                        structured: None,
                    });
                }
            })
        });
        let answer = connection
            .call_tool(
                tool,
                arguments,
                self.config.timeout,
                cancel,
                Some(progress_tx),
            )
            .await;
        if let Some(forward) = forward {
            forward.abort();
        }
        match answer {
            Ok(result) => {
                let mut output = tool_output(&result, &self.origin(), tool);
                if output.is_error
                    && matches!(self.config.transport, Transport::Stdio { .. })
                    && let Some(note) = super::refusal::note(
                        self.name(),
                        &self.policy(),
                        &output.text(),
                        &self.context.user_file,
                    )
                {
                    output.content.push(Content::text(note));
                }
                output
            }
            Err(RequestError::Closed) => {
                let tail = connection.stderr_tail();
                self.set_status(Status::Disconnected(super::client::with_tail(
                    "Connection closed".into(),
                    &tail,
                )));
                failed(RequestError::Closed.to_string())
            }
            Err(err) => failed(err.to_string()),
        }
    }

    /// A live connection for the resource tools.
    pub async fn resources_connection(self: &Arc<Self>) -> Result<Arc<Connection>, String> {
        self.connection().await
    }
}

/// A progress number as JavaScript prints it (`1`, `0.5`).
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}

/// Resolves `${VAR}`, `$VAR` and `!command` values (pi's forms), off the async threads.
async fn resolve_all(
    pairs: &[(String, String)],
    literal: bool,
    what: impl Fn(&str) -> String + Send + 'static,
) -> Result<Vec<(String, String)>, String> {
    let pairs = pairs.to_vec();
    if literal {
        return Ok(pairs);
    }
    tokio::task::spawn_blocking(move || {
        pairs
            .into_iter()
            .map(|(key, value)| {
                resolve(&value, &Lookup::PROCESS, false)
                    .map(|resolved| (key.clone(), resolved))
                    .map_err(|unresolved| unresolved.message(&what(&key)))
            })
            .collect()
    })
    .await
    .map_err(|err| err.to_string())?
}
