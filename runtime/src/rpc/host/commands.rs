//! The host's own commands: `get_protocol_info`, `open_session`, `close_session`,
//! `park_session` and `list_sessions {"scope": "host"}`. Their responses are not tagged (they are the host's),
//! and name the session in `data.sessionId`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::OwnedSemaphorePermit;

use super::{Leaving, Open, Routed, SessionHost, lock, lookup, reload_to};
use crate::agent::session::Session;
use crate::agent::session::file::SessionFile;
use crate::cli::Args;
use crate::rpc::envelope::response;
use crate::rpc::events::RpcEvents;
use crate::rpc::fields::Fields;
use crate::rpc::slot::SessionSlot;
use crate::rpc::writer::FrameSink;

/// The commands the host answers itself (and `list_sessions` with `"scope": "host"`: without
/// it, the command lists the saved session files, as before).
pub const HOST_COMMANDS: &[&str] = &[
    "get_protocol_info",
    "open_session",
    "close_session",
    "park_session",
];

/// True for a frame the host answers itself.
pub fn is_host_command(kind: &str, frame: &Map<String, Value>) -> bool {
    HOST_COMMANDS.contains(&kind)
        || (kind == "list_sessions" && frame.get("scope").and_then(Value::as_str) == Some("host"))
}

/// Answers `frame` with an error (on `out`: tagged when it names a session).
pub(super) fn refuse(out: &FrameSink, frame: &Map<String, Value>, error: String) {
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    out.send(&response(frame.get("id"), kind, Err(error)));
}

/// Runs one of the host's commands and writes its response (holding `place` until then).
pub async fn run(
    host: Arc<SessionHost>,
    frame: Map<String, Value>,
    leaving: Option<Leaving>,
    place: Option<OwnedSemaphorePermit>,
) {
    let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
    let fields = Fields(&frame);
    let result = match kind {
        "get_protocol_info" => Ok(protocol_info(&host)),
        "open_session" => open_session(&host, &fields).await,
        "close_session" | "park_session" => match fields.string("sessionId") {
            Ok(id) => {
                let park = kind == "park_session";
                let result = let_go(&host, id, leaving.as_ref(), park).await;
                if let Some(leaving) = leaving {
                    host.end_leaving(leaving).await;
                }
                result
            }
            Err(error) => Err(error),
        },
        "list_sessions" => Ok(list_sessions(&host)),
        _ => Err(format!("Unknown command: {kind}")),
    };
    let frame = response(frame.get("id"), kind, result.map(Some));
    match place {
        Some(place) => host.out.send_holding(&frame, place),
        None => host.out.send(&frame),
    }
}

/// `get_protocol_info`: the protocol served, and the multi-session host's commands and caps.
fn protocol_info(host: &SessionHost) -> Value {
    json!({
        "protocol": host.default.events.protocol().as_str(),
        "version": env!("CARGO_PKG_VERSION"),
        "multiSession": true,
        "envelope": "sessionId",
        "hostCommands": HOST_COMMANDS,
        "listSessionsScope": "host",
        "limits": limits(host),
    })
}

fn limits(host: &SessionHost) -> Value {
    json!({
        "maxOpenSessions": host.limits.max_open,
        "maxConcurrentRuns": host.limits.max_running,
    })
}

/// What `open_session` may set, as `pith --mode rpc` takes it on its command line.
fn session_args(base: &Args, fields: &Fields<'_>) -> Result<Args, String> {
    let mut args = base.clone();
    // The process's own session choice is not the new session's.
    args.session = None;
    args.continue_session = false;
    args.fork = None;
    args.session_id = None;
    args.name = None;
    if let Some(provider) = fields.opt_string("provider")? {
        args.provider = Some(provider.to_string());
    }
    if let Some(model) = fields.opt_string("model")? {
        args.model = Some(model.to_string());
    }
    if let Some(thinking) = fields.opt_string("thinking")? {
        args.thinking = Some(thinking.to_string());
    }
    if let Some(name) = fields.opt_string("name")? {
        args.name = Some(name.to_string());
    }
    if let Some(prompt) = fields.opt_string("systemPrompt")? {
        args.system_prompt = Some(prompt.to_string());
    }
    match fields.0.get("appendSystemPrompt") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => args.append_system_prompt = vec![text.clone()],
        Some(_) => args.append_system_prompt = fields.parse("appendSystemPrompt")?,
    }
    if fields.0.contains_key("tools") {
        args.tools = Some(fields.parse("tools")?);
    }
    for (key, flag) in [
        ("noTools", &mut args.no_tools),
        ("noSession", &mut args.no_session),
        ("noContextFiles", &mut args.no_context_files),
        ("noSkills", &mut args.no_skills),
        ("noExtensions", &mut args.no_extensions),
    ] {
        if let Some(value) = fields.opt_boolean(key)? {
            *flag = value;
        }
    }
    Ok(args)
}

/// `open_session {cwd?, sessionId?, provider?, model?, thinking?, …}`: opens a session in `cwd`
/// (the folder pith started in by default) and answers its id. A `sessionId` already open is
/// answered as it is; one saved before is resumed from its file; a new one names the new file.
async fn open_session(host: &Arc<SessionHost>, fields: &Fields<'_>) -> Result<Value, String> {
    let id = match fields.opt_string("sessionId")? {
        Some(id) => {
            lookup::check_id(id)?;
            id.to_string()
        }
        None => uuid::Uuid::now_v7().to_string(),
    };
    let cwd = match fields.opt_string("cwd")? {
        Some(cwd) => PathBuf::from(cwd),
        None => host.start.workspace.clone(),
    };
    let mut args = session_args(&host.start.args, fields)?;
    let park_after = fields
        .opt_u64("parkOnDisconnectMs")?
        .map(std::time::Duration::from_millis);
    let (cell, fresh) = {
        let mut table = lock(&host.table);
        match table.get(&id) {
            Some(cell) => (cell.clone(), false),
            None => {
                host.room_for_one(&table)?;
                let cell = super::Opening::default();
                table.insert(id.clone(), cell.clone());
                (cell, true)
            }
        }
    };
    // One being parked is let go first; one that could not be is answered as open.
    if fresh && let Some(kept) = host.left(&id, &cell).await {
        return Ok(opened_data(&id, &kept.routed.slot.current(), false, true));
    }
    // A session saved under the id is resumed, in the folder it was saved in.
    let saved = fresh.then(|| host.sessions_root.find(&id)).flatten();
    let resumed = saved.is_some();
    let opening = id.clone();
    let opened = cell
        .get_or_init(|| async move {
            if let Some(file) = saved {
                return resume(host, &opening, &file).await;
            }
            args.session_id = Some(opening.clone());
            open(host, &opening, &cwd, args, None).await
        })
        .await
        .clone();
    let open = match opened {
        Ok(open) => open,
        Err(error) => {
            host.forget(&id, &cell);
            return Err(error);
        }
    };
    // A `--listen` client's session may be parked once the client has been gone that long.
    let client = fields
        .0
        .get("id")
        .and_then(crate::rpc::client_ids::client_of);
    if let (Some(client), Some(grace)) = (client, park_after) {
        lock(&host.owners).insert(id.clone(), super::Owner { client, grace });
    }
    Ok(opened_data(
        &id,
        &open.routed.slot.current(),
        resumed,
        !fresh,
    ))
}

/// `open_session`'s answer.
fn opened_data(id: &str, session: &Session, resumed: bool, already_open: bool) -> Value {
    json!({
        "sessionId": id,
        "cwd": session.cwd().display().to_string(),
        "sessionFile": session.file().map(|f| f.display().to_string()),
        "resumed": resumed,
        "alreadyOpen": already_open,
    })
}

/// Resumes the session saved in `file` under the id `id`, in the folder it was saved in.
pub(super) async fn resume(host: &SessionHost, id: &str, file: &Path) -> Result<Open, String> {
    let (store, problems) = SessionFile::open(file).map_err(|err| err.to_string())?;
    for problem in problems {
        tracing::warn!("{problem}");
    }
    let cwd = store
        .saved_cwd()
        .unwrap_or_else(|| host.start.workspace.clone());
    if !cwd.is_dir() {
        return Err(format!(
            "Session {id:?} was saved in {}, which no longer exists (session file: {})",
            cwd.display(),
            file.display()
        ));
    }
    let args = session_args(&host.start.args, &Fields(&Map::new()))?;
    open(host, id, &cwd, args, Some((store, file))).await
}

/// Makes the session `id` in `cwd` from `args` (holding `file` when one is resumed).
async fn open(
    host: &SessionHost,
    id: &str,
    cwd: &Path,
    args: Args,
    file: Option<(SessionFile, &Path)>,
) -> Result<Open, String> {
    let start = &host.start;
    let mut place = start
        .place(cwd, start.args.trust_flag)
        .map_err(|err| err.to_string())?;
    let approve = place.args.approve;
    place.args = Args { approve, ..args };
    start.host.deferred_settled().await;
    let (plugins, plugin_notices) = host
        .hosts
        .host_for(start, &place, reload_to(host.this.clone()))
        .await;
    let (mut config, models) = start.session_config(&place, &plugins).await?;
    if let Some((store, path)) = file {
        config.session = Some(store);
        config.sessions_dir = path.parent().map(Path::to_path_buf);
    }
    let events = Arc::new(RpcEvents::new(
        host.out.tagged(id),
        host.legacy,
        host.default.events.protocol(),
    ));
    let session = Session::new(plugins, events.clone(), models, config);
    if host.announcing.load(std::sync::atomic::Ordering::SeqCst) {
        session.announce_dialog_answers();
    }
    for notice in place.notices.iter().chain(&plugin_notices) {
        session.notify(notice, "warning");
    }
    let slot = SessionSlot::new(
        session.clone(),
        start.clone(),
        host.hosts.clone(),
        events.clone(),
        reload_to(host.this.clone()),
    );
    tokio::spawn(async move { session.start_extensions().await });
    lock(&host.parked).remove(id);
    Ok(Open {
        routed: Routed { slot, events },
        since: std::time::Instant::now(),
    })
}

/// `close_session` / `park_session {sessionId}`: the session's run is aborted, its queues
/// emptied (their texts answered), its dialogs cancelled with a notice, its extensions told it
/// ends, and only its file stays; a parked session is listed, and either resumes on the next
/// command naming it.
pub(super) async fn let_go(
    host: &SessionHost,
    id: &str,
    leaving: Option<&Leaving>,
    park: bool,
) -> Result<Value, String> {
    let id = id.to_string();
    let Some(cell) = leaving.map(|leaving| &leaving.cell) else {
        return Err(format!(
            "Session {id:?} is not open{}",
            if lock(&host.parked).contains_key(&id) {
                " (it is parked already)"
            } else {
                ""
            }
        ));
    };
    // A session still opening is let go once it is open.
    let open = cell
        .get_or_init(|| async { Err("closed while opening".to_string()) })
        .await;
    let Ok(open) = open.clone() else {
        return Err(format!("Session {id:?} is not open"));
    };
    let session = open.routed.slot.current();
    if park && session.file().is_none() {
        // Kept open: parking would lose it.
        lock(&host.table).insert(id.clone(), cell.clone());
        return Err(format!(
            "Session {id:?} cannot be parked: it has no file (an in-memory session, \
             --no-session or noSession), so nothing would be left to resume. Close it \
             (close_session) or open sessions with a file."
        ));
    }
    lock(&host.owners).remove(&id);
    let dropped = session.clear_queue();
    let dialogs = session.open_dialogs().len();
    if dialogs > 0 {
        let what = if park { "parked" } else { "closed" };
        session.notify(
            &format!("The session was {what}: its {dialogs} open dialog(s) were cancelled."),
            "warning",
        );
    }
    session.cancel_dialogs();
    session.abort().await;
    session.quit().await;
    session.close().await;
    let file = session.file();
    if let Some(file) = &file {
        if let Err(err) = host.sessions_root.record(&id, file) {
            tracing::warn!("cannot record where session {id} is held: {err}");
        }
        if park {
            lock(&host.parked).insert(id.clone(), file.clone());
        }
    }
    Ok(json!({
        "sessionId": id,
        "sessionFile": file.map(|f| f.display().to_string()),
        "droppedQueue": {"steering": dropped.steering, "followUp": dropped.follow_up},
        "cancelledDialogs": dialogs,
    }))
}

/// `list_sessions {"scope": "host"}`: the open sessions (idle, running or opening), the parked ones, the process's
/// own, and the caps.
fn list_sessions(host: &SessionHost) -> Value {
    let describe = |session: &Session| {
        json!({
            "cwd": session.cwd().display().to_string(),
            "sessionFile": session.file().map(|f| f.display().to_string()),
            "state": if session.is_streaming() { "running" } else { "idle" },
        })
    };
    let mut sessions: Vec<Value> = Vec::new();
    let table: Vec<_> = lock(&host.table)
        .iter()
        .map(|(id, cell)| (id.clone(), cell.get().cloned()))
        .collect();
    for (id, opened) in table {
        let mut entry = match opened {
            Some(Ok(open)) => describe(&open.routed.slot.current()),
            _ => json!({"state": "opening"}),
        };
        entry["sessionId"] = json!(id);
        sessions.push(entry);
    }
    for (id, file) in lock(&host.parked).iter() {
        sessions.push(json!({
            "sessionId": id,
            "sessionFile": file.display().to_string(),
            "state": "parked",
        }));
    }
    sessions.sort_by(|a, b| a["sessionId"].as_str().cmp(&b["sessionId"].as_str()));
    json!({
        "sessions": sessions,
        "default": describe(&host.default.slot.current()),
        "running": host.running(),
        "limits": limits(host),
    })
}
