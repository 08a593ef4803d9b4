//! `pith --mode acp`: the Agent Client Protocol front-end (JSON-RPC 2.0 over stdio, with the
//! official `agent-client-protocol` crate). Each ACP session is an engine [`Session`] whose sink
//! ([`sink::AcpSink`]) turns its events into `session/update` notifications; prompts, cancels
//! and config changes are the engine's own calls. Nothing of the agent loop is repeated here.
//!
//! The crate's request handlers run inside its dispatch loop: engine work (a prompt, opening a
//! session) runs in spawned tasks that answer through the `Responder` they keep, so that
//! `session/cancel` and permission answers are read while a prompt runs.
//!
//! The client's `fs/*` and `terminal/*` methods are not used: pith's tools run in its own
//! sandbox, on the files on disk.

mod flow;
mod mcp_servers;
mod permissions;
mod places;
mod prompt;
mod sessions;
mod sink;
mod stdio;
mod tools;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, Error, ErrorCode};

use crate::agent::session::Session;
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::plugin_host::{PluginHost, watch};
use crate::settings::Settings;
use crate::workspaces::StartFolder;
use crate::workspaces::hosts::WorkspaceHosts;
use sink::{AcpSink, ClientFeatures};

/// An ACP session: the engine session and its sink.
struct AcpSession {
    session: Session,
    /// The plugin host it runs on (the process's, or its folder's).
    host: Arc<PluginHost>,
    sink: Arc<AcpSink>,
    /// `session/cancel` arrived for the prompt running.
    cancelled: AtomicBool,
    /// A `session/prompt` is being answered (ACP runs one prompt at a time per session).
    prompting: AtomicBool,
    /// True once the client has the session's id and its extensions have started.
    ready: tokio::sync::watch::Sender<bool>,
}

/// What every ACP session is made from, and the sessions open.
struct Server {
    /// The start folder (its host is the process's) and what it was started with.
    start: StartFolder,
    /// The hosts of the other folders sessions work in.
    workspace_hosts: WorkspaceHosts,
    /// The server itself, for the watchers of those hosts.
    this: std::sync::Weak<Server>,
    features: OnceLock<ClientFeatures>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    flow: Arc<flow::Flow>,
}

/// `-32602` with the cause and the fix as its message.
fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

/// `-32002` (resource not found) with what was not found.
fn not_found(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::RESOURCE_NOT_FOUND, message)
}

/// `-32603` with what failed.
fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

/// The error for a session id this process has not opened.
fn unknown_session(id: &acp::SessionId) -> Error {
    not_found(format!(
        "No open session {id}: create one with session/new or open a saved one with session/load"
    ))
}

impl Server {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<AcpSession>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn session(&self, id: &acp::SessionId) -> Option<Arc<AcpSession>> {
        self.sessions().get(&*id.0).cloned()
    }

    fn features(&self) -> ClientFeatures {
        self.features.get().copied().unwrap_or_default()
    }

    /// `initialize`.
    fn initialize(&self, request: &acp::InitializeRequest) -> acp::InitializeResponse {
        let _ = self
            .features
            .set(ClientFeatures::of(&request.client_capabilities));
        // With `--no-session` nothing is saved: nothing to list or load.
        let saved = !self.start.args.no_session;
        let mut sessions =
            acp::SessionCapabilities::new().close(acp::SessionCloseCapabilities::new());
        if saved {
            sessions = sessions.list(acp::SessionListCapabilities::new());
        }
        acp::InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(
                acp::AgentCapabilities::new()
                    .load_session(saved)
                    .prompt_capabilities(
                        acp::PromptCapabilities::new()
                            .image(true)
                            .embedded_context(true),
                    )
                    .session_capabilities(sessions)
                    .mcp_capabilities(acp::McpCapabilities::new().http(true)),
            )
            .agent_info(acp::Implementation::new("pith", env!("CARGO_PKG_VERSION")).title("pith"))
    }

    /// `session/set_config_option`.
    fn set_config_option(
        &self,
        request: &acp::SetSessionConfigOptionRequest,
    ) -> Result<acp::SetSessionConfigOptionResponse, Error> {
        let open = self
            .session(&request.session_id)
            .ok_or_else(|| unknown_session(&request.session_id))?;
        sessions::set_config_option(&open.session, request)?;
        Ok(acp::SetSessionConfigOptionResponse::new(
            sessions::config_options(&open.session),
        ))
    }

    /// Every open engine session (for hot reload and shutdown).
    fn engine_sessions(&self) -> Vec<Session> {
        self.sessions()
            .values()
            .map(|open| open.session.clone())
            .collect()
    }
}

/// Hot reload: a changed plugin directory reaches every open session on the process's host
/// (the hosts of other folders have their own watchers).
fn watch_plugins(server: &Arc<Server>) -> Option<watch::PluginWatcher> {
    let weak = Arc::downgrade(server);
    let host = Arc::downgrade(&server.start.host);
    match watch::watch(server.start.host.clone(), move |report| {
        if let Some(server) = weak.upgrade() {
            server.plugins_reloaded(&host, report);
        }
    }) {
        Ok(watcher) => Some(watcher),
        Err(err) => {
            eprintln!("pith: plugin directories are not watched (no hot reload): {err}");
            None
        }
    }
}

/// Serves ACP on stdin/stdout until the client closes it.
pub async fn serve(
    host: PluginHost,
    args: &Args,
    settings: &Settings,
    workspace: PathBuf,
    agent_dir: &AgentDir,
) -> ExitCode {
    if args.listen.is_some() {
        eprintln!(
            "pith: --listen serves RPC clients; ACP is served on stdin/stdout only (drop --listen, \
             or use --mode rpc)"
        );
        return ExitCode::from(2);
    }
    // Sessions are chosen by the client (`session/new`, `session/load`), not on the command line.
    let mut args = args.clone();
    args.session = None;
    args.continue_session = false;
    args.session_id = None;
    let server = Arc::new_cyclic(|this| Server {
        start: StartFolder {
            workspace,
            args,
            settings: settings.clone(),
            agent_dir: agent_dir.clone(),
            host: Arc::new(host),
        },
        workspace_hosts: WorkspaceHosts::default(),
        this: this.clone(),
        features: OnceLock::new(),
        sessions: Mutex::new(HashMap::new()),
        flow: Arc::new(flow::Flow::default()),
    });
    let _watching = watch_plugins(&server);
    if server.start.host.has_deferred() {
        // New or changed third-party plugins compile while the client is served.
        let server = server.clone();
        tokio::spawn(async move {
            let report = server.start.host.load_deferred().await;
            for error in &report.errors {
                eprintln!("pith: plugin refused: {error}");
            }
            for session in server.engine_sessions() {
                session.deferred_plugins_loaded(report.clone()).await;
            }
            server.start.host.deferred_done();
        });
    }
    let served = connect(server.clone()).await;
    for session in server.engine_sessions() {
        session.cancel_dialogs();
        session.abort().await;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pith: acp: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The ACP connection on stdio, until the client closes it.
async fn connect(server: Arc<Server>) -> Result<(), Error> {
    let (stdio, written) = stdio::transport(server.flow.clone());
    let (init, new, load, list, close, prompt, config, cancel) = (
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server.clone(),
        server,
    );
    let served = Agent
        .v1()
        .name("pith")
        .on_receive_request(
            async move |request: acp::InitializeRequest,
                        responder: Responder<acp::InitializeResponse>,
                        _client| { responder.respond(init.initialize(&request)) },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest, responder, client| {
                let server = new.clone();
                tokio::spawn(async move { server.new_session(request, responder, client).await });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest, responder, client| {
                let server = load.clone();
                tokio::spawn(async move { server.load_session(request, responder, client).await });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::ListSessionsRequest,
                        responder: Responder<acp::ListSessionsResponse>,
                        _client| {
                // Reading the files is not done in the dispatch loop.
                let server = list.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = match server.list_sessions(&request) {
                        Ok(page) => responder.respond(page),
                        Err(err) => responder.respond_with_error(err),
                    };
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::CloseSessionRequest,
                        responder: Responder<acp::CloseSessionResponse>,
                        _client| {
                let server = close.clone();
                tokio::spawn(async move {
                    let _ = match server.close_session(&request.session_id).await {
                        Ok(()) => responder.respond(acp::CloseSessionResponse::new()),
                        Err(err) => responder.respond_with_error(err),
                    };
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest,
                        responder: Responder<acp::PromptResponse>,
                        _client| {
                // Claimed here, in order with `session/cancel`, not in the task.
                match prompt.claim(&request.session_id) {
                    Ok(open) => {
                        let server = prompt.clone();
                        tokio::spawn(async move { server.prompt(open, request, responder).await });
                        Ok(())
                    }
                    Err(err) => responder.respond_with_error(err),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionConfigOptionRequest,
                        responder: Responder<acp::SetSessionConfigOptionResponse>,
                        _client| {
                match config.set_config_option(&request) {
                    Ok(options) => responder.respond(options),
                    Err(err) => responder.respond_with_error(err),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notice: acp::CancelNotification, _client| {
                cancel.cancel(&notice.session_id);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(stdio)
        .await;
    // What is queued is written before the process exits (bounded: a task still holding the
    // writer must not keep pith alive).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), written.finished()).await;
    served
}
