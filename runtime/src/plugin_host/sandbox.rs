//! The per-call sandbox: the store's data (WASI context with only the granted preopen, the
//! plugin's capabilities, its memory limiter) and the accounting behind the per-call deadline.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::grants::{Capabilities, WorkspaceAccess};
use super::manifest::Limits;
use crate::content::ToolOutput;

/// How much of a guest's stderr is kept (to explain a trap with its panic message).
const STDERR_KEPT: usize = 16 << 10;

/// What a call's sandbox is built from.
#[derive(Clone)]
pub struct SandboxSpec {
    /// The plugin's id (for logs).
    pub plugin_id: String,
    /// What it may do.
    pub capabilities: Arc<Capabilities>,
    /// The config values it may read (already filtered to granted keys).
    pub config: Arc<BTreeMap<String, String>>,
    /// Its limits.
    pub limits: Limits,
    /// The workspace on the host.
    pub workspace: Option<PathBuf>,
    /// Directories outside the workspace that plugins with workspace access may read (the
    /// session's skill directories, so the model can load a skill with `read`).
    pub read_dirs: Arc<Vec<PathBuf>>,
    /// The shared HTTP client and its timeouts.
    pub http: super::http_client::HttpClient,
    /// The sandbox of the model's tools and shell: the filesystem view of first-party plugins,
    /// and the kernel confinement of every process a plugin starts.
    pub policy: Arc<crate::sandbox::SandboxPolicy>,
    /// True for the first-party plugins built into the binary: their filesystem view is the
    /// sandbox mode's (within what they declare), not the workspace alone.
    pub first_party: bool,
    /// What this call may do beyond the mode (an approved escalation).
    pub escalated: Escalation,
    /// Variables every process the call starts gets.
    pub process_env: Vec<(String, String)>,
}

/// What the host approved for one first-party tool call beyond the sandbox mode.
#[derive(Debug, Clone, Default)]
pub struct Escalation {
    /// A directory the call may use (`sandbox.approval`: a file tool's call beyond the mode).
    pub directory: Option<std::path::PathBuf>,
    /// The processes the call starts run outside the sandbox (`"on-failure"`: a denied command
    /// run again).
    pub unsandboxed_shell: bool,
}

/// Receives a tool's partial results.
pub type ProgressSink = tokio::sync::mpsc::UnboundedSender<ToolOutput>;

/// The data of one call's store.
pub struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    /// The sandbox it was built from.
    pub spec: SandboxSpec,
    /// The workspace as the guest sees it.
    pub workspace_guest: Option<String>,
    /// Memory accounting.
    pub limiter: MemoryLimiter,
    /// Deadline accounting.
    pub clock: Arc<CallClock>,
    /// Where partial tool results go.
    pub progress: Option<ProgressSink>,
    /// Set when the user aborted the call: host calls that wait (child output) stop waiting
    /// and kill what they run, so the plugin can still report what it has.
    pub cancel: Option<tokio_util::sync::CancellationToken>,
    /// The session an extension belongs to, if any.
    pub extension: Option<Arc<dyn super::session_context::ExtensionContext>>,
    /// What hears a provider call's HTTP requests and responses, if anything.
    pub provider_hooks: Option<Arc<dyn super::provider_hooks::ProviderHooks>>,
    /// What a provider's body is spliced with (the session's cached conversation prefix).
    pub history_splice: Option<Arc<super::history_splice::HistorySplice>>,
    /// What a codemode script reaches, for a call of the script engine.
    pub script_host: Option<Arc<dyn super::script_host::ScriptHost>>,
    /// The host directories preopened for the guest (each at its own path): what it may read.
    pub readable: Vec<PathBuf>,
    /// The sandbox's rules on paths, checked at every filesystem call.
    pub path_guard: Arc<super::path_guard::PathGuard>,
    stderr: MemoryOutputPipe,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl StoreState {
    /// The session behind the calling extension, if it runs in one (host time while it answers).
    pub(crate) fn with_session<R>(
        &self,
        read: impl FnOnce(&dyn super::session_context::SessionAccess) -> R,
    ) -> Option<R> {
        let context = self.extension.clone()?;
        let _host_time = self.clock.enter_host();
        context.access().map(read)
    }

    /// Builds the store data: no environment, no arguments, no network sockets, stdout discarded,
    /// stderr captured, and the workspace preopened at its own absolute path only if granted.
    pub fn new(spec: SandboxSpec, progress: Option<ProgressSink>) -> Result<StoreState, String> {
        let mut builder = WasiCtxBuilder::new();
        let stderr = MemoryOutputPipe::new(STDERR_KEPT);
        // File operations on the workspace are short: run them on the calling thread instead
        // of a blocking-pool hop per call (an order of magnitude faster for tree walks).
        builder.allow_blocking_current_thread(true);
        builder
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let mut workspace_guest = None;
        let mut readable = Vec::new();
        // The plugin's workspace access, so that the SDK can say what grant a failure lacked.
        builder.env(
            "PITH_WORKSPACE_ACCESS",
            match spec.capabilities.workspace {
                WorkspaceAccess::None => "none",
                WorkspaceAccess::Read => "read",
                WorkspaceAccess::Write => "write",
            },
        );
        if spec.first_party
            && spec.capabilities.workspace != WorkspaceAccess::None
            && let Some(dir) = &spec.workspace
        {
            let writes = spec.capabilities.workspace == WorkspaceAccess::Write;
            let view = ModeView {
                workspace: dir,
                writes,
                escalated: spec.escalated.directory.as_deref(),
            };
            readable = preopen_mode_view(&mut builder, &spec.policy, &view)?;
            workspace_guest = Some(dir.to_string_lossy().into_owned());
        } else if let (Some(dir), access) = (&spec.workspace, spec.capabilities.workspace)
            && access != WorkspaceAccess::None
        {
            let perms = match access {
                WorkspaceAccess::Write => FsPerms::ReadWrite,
                _ => FsPerms::ReadOnly,
            };
            let guest = dir.to_string_lossy().into_owned();
            builder
                .preopened_dir(dir, &guest, perms)
                .map_err(|err| format!("cannot open the workspace {}: {err}", dir.display()))?;
            readable.push(dir.clone());
            builder.env("PWD", &guest);
            for extra in spec.read_dirs.iter() {
                if extra.starts_with(dir) || !extra.is_dir() {
                    continue;
                }
                let path = extra.to_string_lossy().into_owned();
                builder
                    .preopened_dir(extra, &path, FsPerms::ReadOnly)
                    .map_err(|err| format!("cannot open {}: {err}", extra.display()))?;
                readable.push(extra.clone());
            }
            workspace_guest = Some(guest);
        }
        // The folders outside the workspace the user granted (`dirs`), read-write, each at the
        // path the manifest gives (its links resolved for the checks and the opening).
        let opened = openable_dirs(&spec.capabilities.dirs, &spec.policy);
        for (written, real) in &opened {
            let path = written.to_string_lossy().into_owned();
            builder
                .preopened_dir(real, &path, FsPerms::ReadWrite)
                .map_err(|err| format!("cannot open {}: {err}", written.display()))?;
            readable.push(written.clone());
        }
        for skipped in spec
            .capabilities
            .dirs
            .iter()
            .filter(|d| !opened.iter().any(|(written, _)| written == *d))
        {
            tracing::warn!(
                "{}: the folder {} is not opened: it is missing, or it is, holds or is inside a \
                 protected path",
                spec.plugin_id,
                skipped.display()
            );
        }
        let spec_policy = spec.policy.clone();
        let limiter = MemoryLimiter {
            cap: spec.limits.memory_bytes as usize,
            refused: None,
        };
        Ok(StoreState {
            wasi: builder.build(),
            table: ResourceTable::new(),
            spec,
            workspace_guest,
            limiter,
            clock: Arc::new(CallClock::new()),
            progress,
            cancel: None,
            extension: None,
            provider_hooks: None,
            history_splice: None,
            script_host: None,
            readable,
            path_guard: Arc::new(super::path_guard::PathGuard::new(
                crate::sandbox::paths::PathRules::of(&spec_policy),
            )),
            stderr,
        })
    }

    /// The resource table (for host resources such as HTTP responses and child processes).
    pub fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// What the guest said on stderr before it died: the message of a Rust panic (the lines
    /// after `panicked at …:`), else its last line, if any.
    pub fn stderr_tail(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if let Some(at) = lines.iter().rposition(|l| l.contains("panicked at")) {
            let message: Vec<&str> = lines[at + 1..]
                .iter()
                .take_while(|l| !l.starts_with("note:"))
                .copied()
                .collect();
            if !message.is_empty() {
                return Some(message.join(" "));
            }
        }
        lines
            .iter()
            .rev()
            .find(|l| !l.starts_with("note:"))
            .map(|l| l.to_string())
    }
}

/// What a first-party tool's filesystem view is made of.
struct ModeView<'a> {
    /// The workspace.
    workspace: &'a std::path::Path,
    /// Whether the tool writes (declares `workspace = "write"`).
    writes: bool,
    /// A directory beyond the mode the host approved for this call.
    escalated: Option<&'a std::path::Path>,
}

/// The filesystem of a first-party tool under the sandbox mode: everything readable but the
/// deny list (read-only), and the mode's writable directories read-write when the tool writes;
/// each at its own absolute path, with the policy in the environment (for error messages).
/// The deny list and the protected paths are not carved out here: the guarded filesystem
/// ([`super::guarded_fs`]) rules on them at every call. Returns the directories opened.
fn preopen_mode_view(
    builder: &mut WasiCtxBuilder,
    policy: &crate::sandbox::SandboxPolicy,
    view: &ModeView<'_>,
) -> Result<Vec<PathBuf>, String> {
    let (workspace, writes) = (view.workspace, view.writes);
    use crate::sandbox::SandboxMode;
    let mut opened = Vec::new();
    let mut open = |builder: &mut WasiCtxBuilder, dir: &std::path::Path, perms: FsPerms| {
        let guest = dir.to_string_lossy().into_owned();
        builder
            .preopened_dir(dir, &guest, perms)
            .map(|_| opened.push(dir.to_path_buf()))
            .map_err(|err| format!("cannot open {}: {err}", dir.display()))
    };
    let write_perms = if writes {
        FsPerms::ReadWrite
    } else {
        FsPerms::ReadOnly
    };
    if policy.mode == SandboxMode::FullAccess {
        open(builder, std::path::Path::new("/"), write_perms)?;
    } else {
        // Everything read-only, and the writable directories whole (read-write for a tool
        // that writes): the deny list, /proc (pith's environment holds API keys) and the
        // protected paths are ruled on at every call by the guarded filesystem.
        let mut writable: Vec<PathBuf> = policy
            .writable()
            .into_iter()
            .filter(|dir| dir.is_dir())
            .collect();
        writable.extend(view.escalated.map(std::path::Path::to_path_buf));
        open(builder, std::path::Path::new("/"), FsPerms::ReadOnly)?;
        for dir in &writable {
            let _ = open(builder, dir, write_perms);
        }
    }
    if !workspace.is_dir() {
        return Err(format!("cannot open the workspace {}", workspace.display()));
    }
    for (key, value) in policy.guest_env() {
        builder.env(&key, &value);
    }
    builder.env("PWD", workspace.to_string_lossy());
    Ok(opened)
}

/// Caps linear memory and remembers a refused growth, so the error can say so.
pub struct MemoryLimiter {
    /// The most linear memory the call may have, bytes.
    pub cap: usize,
    /// The size a refused growth asked for.
    pub refused: Option<usize>,
}

/// The error a refused memory growth traps with.
#[derive(Debug, thiserror::Error)]
#[error("memory limit of {limit} bytes exceeded (asked for {asked})")]
pub struct MemoryLimitExceeded {
    /// The cap.
    pub limit: usize,
    /// What the guest asked for.
    pub asked: usize,
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.refused = Some(desired);
            return Err(MemoryLimitExceeded {
                limit: self.cap,
                asked: desired,
            }
            .into());
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// Measures a call's guest time: wall time since the call began minus time spent inside
/// pith's own host calls (HTTP, processes, UI), which may block for long on purpose.
pub struct CallClock {
    started: Instant,
    inner: Mutex<ClockState>,
}

#[derive(Default)]
struct ClockState {
    host_total: Duration,
    host_since: Option<Instant>,
    depth: u32,
}

/// Marks time spent in a host call; ends when dropped.
pub struct HostTime {
    clock: Arc<CallClock>,
}

impl Default for CallClock {
    fn default() -> Self {
        CallClock::new()
    }
}

impl CallClock {
    /// A clock starting now.
    pub fn new() -> CallClock {
        CallClock {
            started: Instant::now(),
            inner: Mutex::new(ClockState::default()),
        }
    }

    /// Starts counting host time until the guard drops.
    pub fn enter_host(self: &Arc<Self>) -> HostTime {
        if let Ok(mut state) = self.inner.lock() {
            if state.depth == 0 {
                state.host_since = Some(Instant::now());
            }
            state.depth += 1;
        }
        HostTime {
            clock: self.clone(),
        }
    }

    /// The guest time used so far.
    pub fn guest_time(&self) -> Duration {
        let elapsed = self.started.elapsed();
        let Ok(state) = self.inner.lock() else {
            return elapsed;
        };
        let current = state
            .host_since
            .map_or(Duration::ZERO, |since| since.elapsed());
        elapsed.saturating_sub(state.host_total + current)
    }
}

impl Drop for HostTime {
    fn drop(&mut self) {
        if let Ok(mut state) = self.clock.inner.lock() {
            state.depth = state.depth.saturating_sub(1);
            if state.depth == 0
                && let Some(since) = state.host_since.take()
            {
                state.host_total += since.elapsed();
            }
        }
    }
}

/// The error a call traps with when its guest time passes the deadline.
#[derive(Debug, thiserror::Error)]
#[error("deadline of {0} ms exceeded")]
pub struct DeadlineExceeded(pub u64);

/// The granted folders (`dirs`) that a call opens, as written and with their links resolved:
/// each one that exists and neither is, holds nor is inside a protected path (the agent
/// directory, the deny list), checked on its real path. (A folder the user grants may hold the
/// workspace: the grant names it, as `/tmp` holds a workspace made in the temp dir.)
pub fn openable_dirs(
    dirs: &[PathBuf],
    policy: &crate::sandbox::SandboxPolicy,
) -> Vec<(PathBuf, PathBuf)> {
    dirs.iter()
        .filter_map(|written| {
            let real = written.canonicalize().ok().filter(|real| real.is_dir())?;
            let protected = policy.holds_protected(&real) || policy.holds_protected(written);
            (!protected).then(|| (written.clone(), real))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::openable_dirs;
    use crate::sandbox::SandboxPolicy;
    use crate::settings::Settings;

    #[cfg(unix)]
    #[test]
    fn a_granted_folder_is_opened_only_outside_the_protected_paths() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (workspace, agent, drop) = (root.join("ws"), root.join("agent"), root.join("drop"));
        for dir in [&workspace, &agent, &drop, &workspace.join("inner")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::os::unix::fs::symlink(&agent, root.join("link-to-agent")).unwrap();
        let policy =
            SandboxPolicy::from_settings(None, &Settings::default(), &workspace, &agent).unwrap();
        let dirs = [
            drop.clone(),
            workspace.join("inner"),
            root.clone(),
            agent.clone(),
            root.join("link-to-agent"),
            root.join("missing"),
        ];
        let opened = openable_dirs(&dirs, &policy);
        // The root holds the agent directory; the link leads into it.
        let inner = workspace.join("inner");
        assert_eq!(opened, [(drop.clone(), drop), (inner.clone(), inner)]);
    }
}
