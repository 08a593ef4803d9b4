//! The multi-session host: one pith process serving many sessions over one RPC stream (stdio or
//! `--listen`). A host that never opts in sees pi's protocol unchanged: one session, the
//! process's own. One that sends `open_session` gets a session id; a command carrying
//! `"sessionId"` runs on that session, and every frame of that session (responses, events,
//! dialogs, host-tool calls) carries it as its first key. Inside a session the protocol is
//! pi's, with its own queues, runs and dialogs; sessions run concurrently on the same engine,
//! plugin hosts (one per folder) and HTTP client.
//!
//! `park_session` (or `close_session`) lets a session go: its run is aborted, its queues are
//! emptied (their texts are in the answer), its dialogs cancelled with a notice, and only its
//! file stays. The next command naming the id resumes it, in this process or in another one
//! that sees the same sessions directory ([`lookup`]).

pub mod commands;
pub mod lookup;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::{Map, Value};
use tokio::sync::OnceCell;

use super::events::RpcEvents;
use super::slot::SessionSlot;
use super::writer::FrameSink;
use crate::agent::session::Session;
use crate::plugin_host::PluginHost;
use crate::plugin_host::reload::ReloadReport;
use crate::settings::Settings;
use crate::workspaces::StartFolder;
use crate::workspaces::hosts::WorkspaceHosts;
use lookup::SessionsRoot;

/// How long after a session is let go its freed memory is returned to the system (a host closing
/// many at once pays for one return).
const TRIM_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// A session and the sink its frames go to.
#[derive(Clone)]
pub struct Routed {
    /// Where the session is held (a switch replaces it in place).
    pub slot: Arc<SessionSlot>,
    /// Its frames (tagged with its id, for an opened session).
    pub events: Arc<RpcEvents>,
}

/// A session of the table: being opened (or resumed), then open, or the reason it could not be.
type Opening = Arc<OnceCell<Result<Open, String>>>;

/// An open session of the table.
#[derive(Clone)]
pub struct Open {
    /// The session.
    pub routed: Routed,
    /// When it was opened or resumed.
    pub since: std::time::Instant,
}

/// The caps of a host (`sessionHost` in the agent directory's settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sessions open at once (parked ones are not counted).
    pub max_open: usize,
    /// Sessions running at once (a prompt beyond it is refused).
    pub max_running: usize,
}

impl Limits {
    /// By default: 1,000 open sessions (the engine keeps an instance slot for each one's
    /// extension), 64 running.
    pub const DEFAULT: Limits = Limits {
        max_open: crate::plugin_host::engine::SESSION_SLOTS as usize,
        max_running: 64,
    };

    /// `sessionHost.maxOpenSessions` and `sessionHost.maxConcurrentRuns`; a value that is not a
    /// positive integer keeps the default (and is reported).
    pub fn from_settings(settings: &Settings) -> (Limits, Vec<String>) {
        let mut limits = Limits::DEFAULT;
        let mut problems = Vec::new();
        let section = settings.get("sessionHost");
        for (key, target) in [
            ("maxOpenSessions", &mut limits.max_open),
            ("maxConcurrentRuns", &mut limits.max_running),
        ] {
            let Some(value) = section.and_then(|section| section.get(key)) else {
                continue;
            };
            match value.as_u64().filter(|n| *n > 0) {
                Some(n) => *target = usize::try_from(n).unwrap_or(usize::MAX),
                None => problems.push(format!(
                    "sessionHost.{key} must be a positive integer (got {value}); using {}",
                    *target
                )),
            }
        }
        (limits, problems)
    }
}

/// What a frame is for.
pub enum Target {
    /// A session ready now.
    Ready(Routed),
    /// A session being opened or resumed: the command runs once it is (or is answered with
    /// why it could not be).
    Opening(String, Opening),
    /// One of the host's own commands ([`commands::run`]), with the session it lets go (for
    /// `park_session` and `close_session`, taken off the table as the command is read).
    Host(Map<String, Value>, Option<Leaving>),
    /// A frame answered already (refused).
    Answered,
}

/// A session being let go (`park_session`, `close_session`): commands read after it wait until
/// it is, then resume it from its file.
pub struct Leaving {
    id: String,
    cell: Opening,
    done: tokio::sync::watch::Sender<bool>,
}

/// The `--listen` client a session goes with: the last one that named it, and how long after
/// that client is gone the session is parked (`parkOnDisconnectMs` of `open_session`).
#[derive(Debug, Clone, Copy)]
struct Owner {
    client: u64,
    grace: std::time::Duration,
}

/// The sessions of one process.
pub struct SessionHost {
    start: Arc<StartFolder>,
    hosts: Arc<WorkspaceHosts>,
    default: Routed,
    out: FrameSink,
    legacy: bool,
    limits: Limits,
    sessions_root: SessionsRoot,
    table: Mutex<HashMap<String, Opening>>,
    /// The sessions parked by this process, with their file (for `list_sessions`).
    parked: Mutex<HashMap<String, PathBuf>>,
    /// The sessions being let go, until they are.
    leaving: Mutex<HashMap<String, tokio::sync::watch::Receiver<bool>>>,
    /// The sessions parked when their `--listen` client goes.
    owners: Mutex<HashMap<String, Owner>>,
    /// Set while a return of freed memory is due.
    trimming: std::sync::atomic::AtomicBool,
    /// Set when the sessions announce dialog answers (`--listen`).
    announcing: std::sync::atomic::AtomicBool,
    this: Weak<SessionHost>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SessionHost {
    /// The host of `session`, the process's own (served to hosts that never opt in), started in
    /// `start`; `out` is the writer every session's frames go to.
    pub fn new(
        session: Session,
        start: StartFolder,
        events: Arc<RpcEvents>,
        out: FrameSink,
        legacy: bool,
    ) -> Arc<SessionHost> {
        let (limits, problems) = Limits::from_settings(&start.settings);
        for problem in problems {
            eprintln!("pith: {problem}");
        }
        let sessions_root = sessions_root(&start);
        let start = Arc::new(start);
        let hosts = Arc::new(WorkspaceHosts::default());
        Arc::new_cyclic(|this: &Weak<SessionHost>| {
            let slot = SessionSlot::new(
                session,
                start.clone(),
                hosts.clone(),
                events.clone(),
                reload_to(this.clone()),
            );
            SessionHost {
                start,
                hosts,
                default: Routed { slot, events },
                out,
                legacy,
                limits,
                sessions_root,
                table: Mutex::new(HashMap::new()),
                parked: Mutex::new(HashMap::new()),
                leaving: Mutex::new(HashMap::new()),
                owners: Mutex::new(HashMap::new()),
                trimming: std::sync::atomic::AtomicBool::new(false),
                announcing: std::sync::atomic::AtomicBool::new(false),
                this: this.clone(),
            }
        })
    }

    /// The process's own session (commands without `sessionId`).
    pub fn default_session(&self) -> &Routed {
        &self.default
    }

    /// The caps in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Every open session, the process's own first.
    pub fn all(&self) -> Vec<Routed> {
        let mut all = vec![self.default.clone()];
        all.extend(self.open().into_iter().map(|(_, open)| open.routed));
        all
    }

    /// The sessions open now (not those being opened), by id, in the order of their ids.
    pub fn open(&self) -> Vec<(String, Open)> {
        let mut open: Vec<(String, Open)> = lock(&self.table)
            .iter()
            .filter_map(|(id, cell)| match cell.get() {
                Some(Ok(open)) => Some((id.clone(), open.clone())),
                _ => None,
            })
            .collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        open
    }

    /// Every session tells the host each dialog answer from now on (clients attached over
    /// `--listen` see the answers of the others), those opened later too.
    pub fn announce_dialog_answers(&self) {
        self.announcing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for routed in self.all() {
            routed.slot.current().announce_dialog_answers();
        }
    }

    /// Sessions running now, the process's own included.
    pub fn running(&self) -> usize {
        self.all()
            .iter()
            .filter(|routed| routed.slot.current().is_streaming())
            .count()
    }

    /// A reload of `host`'s plugins reaches every session that runs there.
    pub fn plugins_reloaded(&self, host: &Weak<PluginHost>, report: ReloadReport) {
        for routed in self.all() {
            routed.slot.plugins_reloaded(host, report.clone());
        }
    }

    /// Where a frame goes: the host's own commands are answered here; a frame naming a session
    /// goes to it (resumed when it is parked); any other to the process's own session.
    pub fn target(&self, frame: &mut Map<String, Value>) -> Target {
        let kind = frame.get("type").and_then(Value::as_str).unwrap_or("");
        if commands::is_host_command(kind, frame) {
            let leaving = matches!(kind, "park_session" | "close_session")
                .then(|| self.begin_leaving(frame))
                .flatten();
            return Target::Host(std::mem::take(frame), leaving);
        }
        // `shutdown` ends the process whichever session it names.
        let named = (kind != "shutdown")
            .then(|| frame.remove("sessionId"))
            .flatten();
        let Some(named) = named else {
            return Target::Ready(self.default.clone());
        };
        let Some(id) = named.as_str().map(str::to_string) else {
            commands::refuse(
                &self.out,
                frame,
                format!("Field \"sessionId\" must be a string, got {named}"),
            );
            return Target::Answered;
        };
        if let Err(error) = lookup::check_id(&id) {
            commands::refuse(&self.out, frame, error);
            return Target::Answered;
        }
        // A `--listen` client naming a session takes it over.
        if let Some(client) = frame.get("id").and_then(super::client_ids::client_of)
            && let Some(owner) = lock(&self.owners).get_mut(&id)
        {
            owner.client = client;
        }
        let cell = {
            let mut table = lock(&self.table);
            match table.get(&id) {
                Some(cell) => cell.clone(),
                None => {
                    if let Err(error) = self.room_for_one(&table) {
                        drop(table);
                        commands::refuse(&self.out.tagged(&id), frame, error);
                        return Target::Answered;
                    }
                    let cell = Opening::default();
                    table.insert(id.clone(), cell.clone());
                    cell
                }
            }
        };
        match cell.get() {
            Some(Ok(open)) => Target::Ready(open.routed.clone()),
            _ => Target::Opening(id, cell),
        }
    }

    /// Takes the session `frame` names off the table, so the commands read after it wait until it
    /// is let go.
    fn begin_leaving(&self, frame: &Map<String, Value>) -> Option<Leaving> {
        let id = frame.get("sessionId")?.as_str()?.to_string();
        let cell = lock(&self.table).remove(&id)?;
        let (done, waiting) = tokio::sync::watch::channel(false);
        lock(&self.leaving).insert(id.clone(), waiting);
        Some(Leaving { id, cell, done })
    }

    /// Marks `leaving` as let go: the commands waiting for it go on, and its folder's plugin host
    /// goes with its last session.
    async fn end_leaving(&self, leaving: Leaving) {
        {
            let mut all = lock(&self.leaving);
            if all
                .get(&leaving.id)
                .is_some_and(|waiting| waiting.same_channel(&leaving.done.subscribe()))
            {
                all.remove(&leaving.id);
            }
        }
        leaving.done.send_replace(true);
        drop(leaving);
        self.hosts.release_unused().await;
        self.return_memory_soon();
    }

    /// Gives the memory of the sessions let go back to the system, once the closing or parking
    /// going on has settled (at most once per [`TRIM_AFTER`]).
    fn return_memory_soon(&self) {
        if self
            .trimming
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let host = self.this.clone();
        tokio::spawn(async move {
            tokio::time::sleep(TRIM_AFTER).await;
            if let Some(host) = host.upgrade() {
                host.trimming
                    .store(false, std::sync::atomic::Ordering::SeqCst);
            }
            tokio::task::spawn_blocking(crate::memory::return_freed);
        });
    }

    /// A `--listen` client went away: each session it was the last to name and that asked for
    /// it is parked after its grace period, unless another client named it meanwhile.
    pub fn client_left(&self, client: u64) {
        let gone: Vec<(String, Owner)> = lock(&self.owners)
            .iter()
            .filter(|(_, owner)| owner.client == client)
            .map(|(id, owner)| (id.clone(), *owner))
            .collect();
        for (id, owner) in gone {
            let host = self.this.clone();
            tokio::spawn(async move {
                tokio::time::sleep(owner.grace).await;
                let Some(host) = host.upgrade() else { return };
                let still = lock(&host.owners)
                    .get(&id)
                    .is_some_and(|now| now.client == client);
                if !still {
                    return;
                }
                lock(&host.owners).remove(&id);
                let mut frame = Map::new();
                frame.insert("sessionId".into(), Value::String(id.clone()));
                let leaving = host.begin_leaving(&frame);
                let parked = commands::let_go(&host, &id, leaving.as_ref(), true).await;
                if let Some(leaving) = leaving {
                    host.end_leaving(leaving).await;
                }
                match parked {
                    Ok(_) => eprintln!("pith: session {id} parked: its client left"),
                    Err(error) => tracing::warn!("session {id} was not parked: {error}"),
                }
            });
        }
    }

    /// Refuses one more open session when the cap is reached.
    fn room_for_one(&self, table: &HashMap<String, Opening>) -> Result<(), String> {
        if table.len() < self.limits.max_open {
            return Ok(());
        }
        Err(format!(
            "Too many open sessions: {} are open, the cap (sessionHost.maxOpenSessions in \
             settings.json) is {}. Park or close one (park_session, close_session), or raise \
             the cap.",
            table.len(),
            self.limits.max_open
        ))
    }

    /// Waits for the session `id` being opened or resumed by `cell`: a session that is not open
    /// is resumed from its file; `Err` says why it cannot be (and takes it off the table).
    pub async fn arrive(&self, id: &str, cell: &Opening) -> Result<Routed, String> {
        if let Some(kept) = self.left(id, cell).await {
            return Ok(kept.routed);
        }
        let opened = cell
            .get_or_init(|| async {
                match self.sessions_root.find(id) {
                    Some(file) => commands::resume(self, id, &file).await,
                    None => Err(format!(
                        "Unknown session {id:?}: no session is open with that id, and none was \
                         saved under it in {}. Open it first (open_session).",
                        self.sessions_root.describe()
                    )),
                }
            })
            .await;
        match opened {
            Ok(open) => Ok(open.routed.clone()),
            Err(error) => {
                self.forget(id, cell);
                Err(error.clone())
            }
        }
    }

    /// Waits until the session `id` being parked or closed is let go (its file is complete), so
    /// that `cell` can resume it; a session that could not be let go is back on the table and
    /// is returned (it serves the command).
    async fn left(&self, id: &str, cell: &Opening) -> Option<Open> {
        let mut waiting = lock(&self.leaving).get(id).cloned()?;
        let _ = waiting.wait_for(|done| *done).await;
        let kept = lock(&self.table).get(id).cloned()?;
        if Arc::ptr_eq(&kept, cell) {
            return None;
        }
        match kept.get() {
            Some(Ok(open)) => Some(open.clone()),
            _ => None,
        }
    }

    /// Takes `id` off the table when `cell` is still its entry.
    fn forget(&self, id: &str, cell: &Opening) {
        let mut table = lock(&self.table);
        if table.get(id).is_some_and(|held| Arc::ptr_eq(held, cell)) {
            table.remove(id);
        }
    }

    /// Refuses a `prompt` that would start one more run than the cap allows (`routed` is idle
    /// and the cap's worth of sessions run).
    pub fn check_run(&self, routed: &Routed, kind: &str) -> Result<(), String> {
        if kind != "prompt" || routed.slot.current().is_streaming() {
            return Ok(());
        }
        let running = self.running();
        if running < self.limits.max_running {
            return Ok(());
        }
        Err(format!(
            "Too many sessions running: {running} are, the cap (sessionHost.maxConcurrentRuns in \
             settings.json) is {}. Send the prompt again once one has ended, or raise the cap.",
            self.limits.max_running
        ))
    }

    /// Aborts every run (a signal ends the process).
    pub async fn abort_all(&self) {
        for routed in self.all() {
            routed.slot.current().abort().await;
        }
    }

    /// At the end of the input: every session's host-tool calls fail and dialogs are
    /// cancelled, its run is let finish, and its extensions hear `quit`; the opened sessions
    /// are closed and let go (so the writer ends once the process's own is dropped).
    pub async fn finish(&self) {
        let opened: Vec<Routed> = self.open().into_iter().map(|(_, o)| o.routed).collect();
        lock(&self.table).clear();
        let mut ending = tokio::task::JoinSet::new();
        for routed in std::iter::once(self.default.clone()).chain(opened.iter().cloned()) {
            ending.spawn(async move {
                routed.slot.settled().await;
                let session = routed.slot.current();
                session.host_tools().close();
                session.cancel_dialogs();
                session.wait_idle().await;
                session.quit().await;
            });
        }
        ending.join_all().await;
        for routed in opened {
            routed.slot.current().close().await;
        }
    }
}

/// Where this process's sessions are saved: the sessions directory the user set
/// (`--session-dir`, `$PI_CODING_AGENT_SESSION_DIR`, `sessionDir`), else the agent directory's.
fn sessions_root(start: &StartFolder) -> SessionsRoot {
    let own = SessionsRoot::per_folder(start.agent_dir.sessions_dir());
    let Some(dir) = crate::commands::session_config::sessions_dir(
        &start.args,
        &start.agent_dir,
        &start.workspace,
        &start.settings,
    ) else {
        return own;
    };
    let per_folder = crate::agent::session::file::SessionFile::dir_for(
        &start.agent_dir.sessions_dir(),
        &start.workspace,
    );
    if dir == per_folder {
        own
    } else {
        SessionsRoot::flat(dir)
    }
}

/// What a session slot calls on a reload of its folder's plugins: every session of the host
/// hears of it.
fn reload_to(host: Weak<SessionHost>) -> crate::workspaces::hosts::OnReload {
    Arc::new(move |plugins, report| {
        if let Some(host) = host.upgrade() {
            host.plugins_reloaded(plugins, report);
        }
    })
}
