//! ACP sessions over pith's engine sessions: `session/new`, `session/load` (the saved
//! conversation replayed as updates), `session/list` over the pi-format session files, the
//! config options for the model and the thinking level, and the command list.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use tokio::sync::mpsc;

use super::sink::{AcpSink, Follow};
use super::{AcpSession, Server};
use crate::agent::model::ThinkingLevel;
use crate::agent::session::Session;
use crate::agent::session::file::SessionFile;
use crate::agent::session::index as session_index;
use crate::workspaces::Place;

/// The config option naming the model (`provider/id`).
const MODEL: &str = "model";
/// The config option naming the thinking level.
const THINKING: &str = "thinking";
/// The MCP servers a client handed over, and notices of those left out.
type McpGiven = (Vec<crate::mcp::ServerConfig>, Vec<String>);

/// Sessions per `session/list` page.
const PAGE: usize = 50;

/// The model and thinking level as ACP config options.
pub(super) fn config_options(session: &Session) -> Vec<acp::SessionConfigOption> {
    let (model, thinking) = session.model_and_thinking();
    let name = |m: &crate::agent::model::Model| format!("{}/{}", m.provider, m.id);
    let mut models: Vec<acp::SessionConfigSelectOption> = session
        .usable_models()
        .iter()
        .map(|m| acp::SessionConfigSelectOption::new(name(m), m.name.clone()))
        .collect();
    let current = model.as_ref().map(name).unwrap_or_default();
    if let Some(model) = &model
        && !models.iter().any(|o| *o.value.0 == *current)
    {
        models.insert(
            0,
            acp::SessionConfigSelectOption::new(current.clone(), model.name.clone()),
        );
    }
    let levels: Vec<acp::SessionConfigSelectOption> = match &model {
        Some(model) if model.reasoning => ThinkingLevel::available(model),
        _ => vec![ThinkingLevel::Off],
    }
    .into_iter()
    .map(|level| acp::SessionConfigSelectOption::new(level.as_str(), level.as_str()))
    .collect();
    vec![
        acp::SessionConfigOption::select(MODEL, "Model", current, models)
            .category(acp::SessionConfigOptionCategory::Model),
        acp::SessionConfigOption::select(THINKING, "Thinking", thinking.as_str(), levels)
            .category(acp::SessionConfigOptionCategory::ThoughtLevel),
    ]
}

/// Applies `session/set_config_option`.
pub(super) fn set_config_option(
    session: &Session,
    request: &acp::SetSessionConfigOptionRequest,
) -> Result<(), Error> {
    let Some(value) = request.value.as_value_id().map(|v| v.0.to_string()) else {
        return Err(super::invalid(format!(
            "{} takes one of its listed values, not a boolean",
            request.config_id
        )));
    };
    match &*request.config_id.0 {
        MODEL => {
            let Some((provider, id)) = value.split_once('/') else {
                return Err(super::invalid(format!(
                    "model {value:?} is not provider/id (pick one of the listed values)"
                )));
            };
            session
                .set_model(provider, id)
                .map(drop)
                .map_err(|err| super::invalid(err.to_string()))
        }
        THINKING => match ThinkingLevel::parse(&value) {
            Some(level) => {
                session.set_thinking_level(level);
                Ok(())
            }
            None => Err(super::invalid(format!(
                "unknown thinking level {value:?} (pick one of the listed values)"
            ))),
        },
        other => Err(super::invalid(format!(
            "pith has no config option {other:?}: the options are {MODEL} and {THINKING}"
        ))),
    }
}

/// The commands a prompt may start with: `/compact`, extension commands, templates, skills.
pub(super) fn commands(session: &Session) -> Vec<acp::AvailableCommand> {
    let hint = |text: &str| {
        acp::AvailableCommandInput::Unstructured(acp::UnstructuredCommandInput::new(text))
    };
    let mut list = vec![
        acp::AvailableCommand::new(
            "compact",
            "Summarise the conversation so far to free context",
        )
        .input(hint("what the summary should keep")),
    ];
    for command in session.commands().commands {
        list.push(
            acp::AvailableCommand::new(command.name, command.description).input(hint("arguments")),
        );
    }
    list
}

/// Sends the session's follow-up updates as its sink asks for them; ends with the session (the
/// sink holds the only sender).
async fn follow(
    session: crate::agent::session::front_end::WeakSession,
    sink: std::sync::Weak<AcpSink>,
    mut work: mpsc::UnboundedReceiver<Follow>,
) {
    // The options the client has (from the session/new or session/load answer): an update is
    // sent only when they differ (a model an extension switched to, a level, a new provider).
    let mut known = session.upgrade().map(|session| config_options(&session));
    while let Some(item) = work.recv().await {
        let (Some(session), Some(sink)) = (session.upgrade(), sink.upgrade()) else {
            return;
        };
        match item {
            Follow::ConfigOptions => {
                let options = config_options(&session);
                if known.as_ref() != Some(&options) {
                    known = Some(options.clone());
                    sink.send(acp::SessionUpdate::ConfigOptionUpdate(
                        acp::ConfigOptionUpdate::new(options),
                    ));
                }
            }
            Follow::Commands => sink.send(acp::SessionUpdate::AvailableCommandsUpdate(
                acp::AvailableCommandsUpdate::new(commands(&session)),
            )),
        }
    }
}

impl Server {
    /// The session's place (its directory checked) and the MCP servers a client handed over
    /// (with notices of those left out).
    fn check_place(
        &self,
        cwd: &std::path::Path,
        mcp_servers: &[acp::McpServer],
    ) -> Result<(Place, McpGiven), Error> {
        let place = self.place(cwd)?;
        let ignore = place
            .settings
            .get("acp")
            .and_then(|acp| acp.get("mcpServers"))
            .and_then(serde_json::Value::as_str)
            == Some("ignore");
        Ok((place, super::mcp_servers::servers(mcp_servers, ignore)))
    }

    /// Builds an engine session (resuming `file` when given) with its ACP sink.
    async fn open(
        &self,
        client: ConnectionTo<Client>,
        file: Option<SessionFile>,
        (place, mcp): (Place, McpGiven),
    ) -> Result<Arc<AcpSession>, Error> {
        // Plugins still compiling after start-up (new third-party ones) are part of the session,
        // as they are of every RPC command but the liveness ones.
        self.start.host.deferred_settled().await;
        let (host, plugin_notices) = self.host_for(&place).await;
        let (mut config, models) = self
            .start
            .session_config(&place, &host)
            .await
            .map_err(super::internal)?;
        // The client's servers join the user's (a client's server replaces one of its name).
        let (given, mut notices) = mcp;
        config.mcp.give(given);
        notices.extend(place.notices);
        notices.extend(plugin_notices);
        let resumed = file.is_some();
        if resumed {
            config.session = file;
        }
        let id = match &config.session {
            Some(file) if resumed => file.id().to_string(),
            _ => uuid::Uuid::now_v7().to_string(),
        };
        if !resumed {
            config.session_id = Some(id.clone());
        }
        let (sink, work) = AcpSink::new(
            client,
            acp::SessionId::new(id.clone()),
            place.cwd.clone(),
            self.features(),
            self.flow.clone(),
        );
        let session = Session::new(host.clone(), sink.clone(), models, config);
        let cost = session.total_cost();
        sink.attach(&session, cost);
        tokio::spawn(follow(session.downgrade(), Arc::downgrade(&sink), work));
        let opened = Arc::new(AcpSession {
            session,
            host,
            sink,
            cancelled: AtomicBool::new(false),
            prompting: AtomicBool::new(false),
            ready: tokio::sync::watch::Sender::new(false),
        });
        if !notices.is_empty() {
            // Told once the client has the session (after its response).
            let told = opened.clone();
            tokio::spawn(async move {
                let mut ready = told.ready.subscribe();
                let _ = ready.wait_for(|ready| *ready).await;
                for notice in notices {
                    told.session.notify(&notice, "warning");
                }
            });
        }
        self.sessions().insert(id, opened.clone());
        Ok(opened)
    }

    /// After a session is opened and the client has its id: the commands, then the extensions'
    /// `session_start` (which may open a dialog that names the session).
    async fn started(&self, opened: &AcpSession) {
        opened
            .sink
            .send(acp::SessionUpdate::AvailableCommandsUpdate(
                acp::AvailableCommandsUpdate::new(commands(&opened.session)),
            ));
        opened.session.start_extensions().await;
        opened.ready.send_replace(true);
    }

    /// `session/new`.
    pub(super) async fn new_session(
        &self,
        request: acp::NewSessionRequest,
        responder: Responder<acp::NewSessionResponse>,
        client: ConnectionTo<Client>,
    ) {
        let placed = match self.check_place(&request.cwd, &request.mcp_servers) {
            Ok(placed) => placed,
            Err(err) => {
                let _ = responder.respond_with_error(err);
                return;
            }
        };
        let opened = match self.open(client, None, placed).await {
            Ok(opened) => opened,
            Err(err) => {
                let _ = responder.respond_with_error(err);
                return;
            }
        };
        let response = acp::NewSessionResponse::new(opened.sink.session_id().clone())
            .config_options(config_options(&opened.session));
        if responder.respond(response).is_ok() {
            self.started(&opened).await;
        }
    }

    /// The session files of the folder `cwd`, newest first.
    fn session_files(&self, cwd: &std::path::Path) -> Vec<(i64, std::path::PathBuf)> {
        let dir = crate::commands::session_config::sessions_dir(
            &self.start.args,
            &self.start.agent_dir,
            cwd,
            &self.start.settings,
        );
        session_index::session_files(&dir.into_iter().collect::<Vec<_>>())
    }

    /// The summary of a session file when it was saved in `cwd` (a sessions directory shared by
    /// every folder, `--session-dir`, holds others'; a file without a directory counts).
    fn summary_in(
        path: &std::path::Path,
        modified: i64,
        cwd: &std::path::Path,
    ) -> Option<session_index::SessionSummary> {
        let summary = session_index::summarize(path, modified)?;
        let saved = std::path::Path::new(&summary.cwd);
        let same = summary.cwd.is_empty()
            || saved.canonicalize().unwrap_or_else(|_| saved.to_path_buf()) == cwd;
        same.then_some(summary)
    }

    /// `session/load`: opens the saved session and replays it before answering.
    pub(super) async fn load_session(
        &self,
        request: acp::LoadSessionRequest,
        responder: Responder<acp::LoadSessionResponse>,
        client: ConnectionTo<Client>,
    ) {
        let placed = match self.check_place(&request.cwd, &request.mcp_servers) {
            Ok(placed) => placed,
            Err(err) => {
                let _ = responder.respond_with_error(err);
                return;
            }
        };
        let cwd = placed.0.cwd.clone();
        let wanted = request.session_id.0.to_string();
        if let Some(open) = self.session(&request.session_id) {
            if open.sink.cwd() != cwd {
                let _ = responder.respond_with_error(super::invalid(format!(
                    "session {wanted} works in {}: load it with that cwd",
                    open.sink.cwd().display()
                )));
                return;
            }
            // Open already (an editor reopening a thread): replayed from the engine, never a
            // second engine on the same file.
            self.replay(&open);
            let response =
                acp::LoadSessionResponse::new().config_options(config_options(&open.session));
            let _ = responder.respond(response);
            return;
        }
        let files = self.session_files(&cwd);
        // pith and pi name files `<time>_<id>.jsonl`: those are looked at first.
        let named = format!("_{wanted}.jsonl");
        let (likely, others): (Vec<_>, Vec<_>) = files.into_iter().partition(|(_, path)| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&named))
        });
        let found = likely
            .into_iter()
            .chain(others)
            .find_map(|(modified, path)| {
                Self::summary_in(&path, modified, &cwd).filter(|s| s.id == wanted)
            });
        let Some(summary) = found else {
            let _ = responder.respond_with_error(super::not_found(format!(
                "No saved session {wanted} for {}: session/list shows the sessions there",
                cwd.display()
            )));
            return;
        };
        let file = match SessionFile::open(&summary.path) {
            Ok((file, problems)) => {
                for problem in problems {
                    tracing::warn!("{problem}");
                }
                file
            }
            Err(err) => {
                let _ = responder.respond_with_error(super::internal(format!(
                    "Cannot read {}: {err}",
                    summary.path.display()
                )));
                return;
            }
        };
        let opened = match self.open(client, Some(file), placed).await {
            Ok(opened) => opened,
            Err(err) => {
                let _ = responder.respond_with_error(err);
                return;
            }
        };
        self.replay(&opened);
        let response =
            acp::LoadSessionResponse::new().config_options(config_options(&opened.session));
        if responder.respond(response).is_ok() {
            self.started(&opened).await;
        }
    }

    /// Sends the session's conversation as updates.
    fn replay(&self, open: &AcpSession) {
        let replayed = open
            .session
            .with_messages(|messages| super::updates::replay(messages, open.sink.cwd()));
        for update in replayed {
            open.sink.send(update);
        }
    }

    /// `session/close`: cancels the session's work and frees it.
    pub(super) async fn close_session(&self, id: &acp::SessionId) -> Result<(), Error> {
        let open = self.sessions().remove(&*id.0);
        let Some(open) = open else {
            return Err(super::unknown_session(id));
        };
        self.cancel_work(&open);
        open.session.abort().await;
        open.session.quit().await;
        // Its MCP servers go with it.
        open.session.shut_down_mcp().await;
        Ok(())
    }

    /// `session/list`: the saved sessions of the folder asked for (the start folder by default),
    /// newest first, 50 a page.
    pub(super) fn list_sessions(
        &self,
        request: &acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse, Error> {
        let cwd = match &request.cwd {
            Some(cwd) => self.place(cwd)?.cwd,
            None => crate::workspaces::canonical(&self.start.workspace),
        };
        let start = match &request.cursor {
            None => 0,
            Some(text) => text.parse::<usize>().map_err(|_| {
                super::invalid(format!(
                    "Invalid cursor {text:?}: pass the nextCursor of the previous page"
                ))
            })?,
        };
        let files = self.session_files(&cwd);
        let mut sessions = Vec::new();
        let mut next = None;
        for (index, (modified, path)) in files.iter().enumerate().skip(start) {
            if sessions.len() == PAGE {
                next = Some(index.to_string());
                break;
            }
            let Some(summary) = Self::summary_in(path, *modified, &cwd) else {
                continue;
            };
            let title = summary.name.clone().or(summary.first_message.clone());
            sessions.push(
                acp::SessionInfo::new(summary.id, cwd.clone())
                    .title(title)
                    .updated_at(crate::time::iso(summary.modified)),
            );
        }
        Ok(acp::ListSessionsResponse::new(sessions).next_cursor(next))
    }
}
