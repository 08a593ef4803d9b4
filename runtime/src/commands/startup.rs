//! `pith --mode rpc`: builds the session from the arguments and settings, then serves the
//! protocol on stdin/stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::session_config::protocol;
use crate::agent::models::ModelRegistry;
use crate::agent::session::Session;
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::plugin_host::PluginHost;
use crate::plugin_host::watch;
use crate::resources::Resources;
use crate::settings::Settings;

// Re-exported for the binary and the tests, which start sessions through this module.
pub use super::session_config::{run_mode, session_config};

/// The models, with `models.json` and `auth.json`. A `--model` that no loaded plugin offers
/// may be a virtual model of an extension still compiling: then the start waits for the
/// compile first.
async fn registry_for(
    host: &PluginHost,
    args: &Args,
    agent_dir: &AgentDir,
) -> (ModelRegistry, Vec<String>) {
    let load = || ModelRegistry::load(host, &agent_dir.models_file(), &agent_dir.auth_file());
    let loaded = load();
    let Some(pattern) = &args.model else {
        return loaded;
    };
    // `provider/id` is looked up exactly (a part of an id could match another provider's).
    let known = match pattern.split_once('/') {
        Some((provider, id)) => {
            let id = id.rsplit_once(':').map_or(id, |(id, _)| id);
            loaded.0.find(provider, id).is_some()
        }
        None => loaded
            .0
            .resolve(pattern, args.provider.as_deref())
            .is_some(),
    };
    if !host.has_deferred() || known {
        return loaded;
    }
    let report = host.load_deferred().await;
    for error in &report.errors {
        eprintln!("pith: plugin refused: {error}");
    }
    host.deferred_done();
    load()
}

/// Serves until stdin closes.
pub async fn serve(
    host: PluginHost,
    args: &Args,
    settings: &Settings,
    cwd: PathBuf,
    agent_dir: &AgentDir,
) -> ExitCode {
    let (mut models, problems) = registry_for(&host, args, agent_dir).await;
    for problem in problems {
        eprintln!("pith: {problem}");
    }
    let cwd_of_start = cwd.clone();
    let mut config = match session_config(args, settings, &mut models, cwd, agent_dir) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("pith: {message}");
            return ExitCode::FAILURE;
        }
    };
    config.resources = Resources::load(config.resources.dirs.clone(), &host).await;
    // `--listen`: bound before anything is served, so a bad address fails the start.
    let listening = match args.listen.as_deref().map(|text| {
        crate::rpc::listen::Endpoint::parse(text).and_then(|endpoint| {
            crate::rpc::listen::Listener::bind(&endpoint, args.rpc_token_file.as_deref())
        })
    }) {
        None => None,
        Some(Ok(listener)) => Some(listener),
        Some(Err(message)) => {
            eprintln!("pith: {message}");
            return ExitCode::FAILURE;
        }
    };
    let hub = Arc::new(crate::rpc::listen::Hub::default());
    let output: Box<dyn std::io::Write + Send> = match &listening {
        Some(_) => Box::new(hub.output()),
        None => Box::new(std::io::stdout()),
    };
    let (sink, writer) = crate::rpc::writer::spawn(output);
    let events = Arc::new(crate::rpc::events::RpcEvents::new(
        sink.clone(),
        args.legacy_events,
        protocol(args, settings).unwrap_or_default(),
    ));
    let host = Arc::new(host);
    let session = Session::new(host.clone(), events.clone(), models, config);
    let start = crate::workspaces::StartFolder {
        workspace: cwd_of_start,
        args: args.clone(),
        settings: settings.clone(),
        agent_dir: agent_dir.clone(),
        host: host.clone(),
    };
    let sessions =
        crate::rpc::host::SessionHost::new(session, start, events, sink, args.legacy_events);
    let slot = sessions.default_session().slot.clone();
    let reloaded = Arc::downgrade(&sessions);
    let watched = Arc::downgrade(&host);
    let _watching = match watch::watch(host.clone(), move |report| {
        if let Some(sessions) = reloaded.upgrade() {
            sessions.plugins_reloaded(&watched, report);
        }
    }) {
        Ok(watcher) => Some(watcher),
        Err(err) => {
            eprintln!("pith: plugin directories are not watched (no hot reload): {err}");
            None
        }
    };
    if host.has_deferred() {
        // New or changed third-party plugins compile while the host is already served; a run
        // waits for them (`PluginHost::deferred_settled`).
        let slot = slot.clone();
        tokio::spawn(async move {
            let report = host.load_deferred().await;
            for error in &report.errors {
                eprintln!("pith: plugin refused: {error}");
            }
            let session = slot.current();
            if session.runs_on(&Arc::downgrade(&host)) {
                session.deferred_plugins_loaded(report).await;
            }
            host.deferred_done();
        });
    }
    let Some(listener) = listening else {
        drop(slot);
        return crate::rpc::serve(sessions, tokio::io::stdin(), writer).await;
    };
    eprintln!("pith: listening on {}", listener.describe());
    let host_of_sessions = Arc::downgrade(&sessions);
    hub.on_detach(Box::new(move |client| {
        if let Some(sessions) = host_of_sessions.upgrade() {
            sessions.client_left(client);
        }
    }));
    // The clients' commands reach the RPC loop through this pipe; it never ends (the agent
    // outlives its clients): `shutdown` or a signal stops it.
    let (input, feed) = tokio::io::duplex(1 << 16);
    drop(slot);
    let accepting = tokio::spawn(crate::rpc::listen::accept(
        listener,
        hub.clone(),
        sessions.clone(),
        feed,
    ));
    // The clients hold the session weakly, so the loop's flush ends once it lets go; then every
    // client is sent what is queued for it (the answer to `shutdown` included), and the
    // listener and the clients stop (dropping the listener removes the socket).
    let code = crate::rpc::serve(sessions, input, writer).await;
    hub.drain(std::time::Duration::from_secs(1)).await;
    accepting.abort();
    let _ = accepting.await;
    code
}
