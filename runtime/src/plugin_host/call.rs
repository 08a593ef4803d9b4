//! Running one call in a fresh, limited store: memory cap, per-call guest-time deadline
//! (epoch-based), bounded stack (engine-wide), and a wall-clock timeout that drops the call.
//! Every failure becomes a [`CallError`]; the store is dropped afterwards either way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use wasmtime::{Store, Trap, UpdateDeadline};

use serde_json::Value;

use crate::content::ToolOutput;

use super::error::CallError;
use super::host::PluginHost;
use super::plugin::{Plugin, error_text};
use super::sandbox::{
    CallClock, DeadlineExceeded, Escalation, MemoryLimitExceeded, ProgressSink, SandboxSpec,
    StoreState,
};

/// What a call may use beyond the plugin's own grants.
#[derive(Default)]
pub struct CallOptions {
    /// Where partial tool results go.
    pub progress: Option<ProgressSink>,
    /// Fires when the user aborts the call.
    pub cancel: Option<CancellationToken>,
    /// URL prefixes granted for this call only (a provider gets its model's base URL, which the
    /// user configured).
    pub extra_http: Vec<super::grants::UrlPrefix>,
    /// What the host approved beyond the sandbox mode for this call only, for a first-party
    /// tool.
    pub escalated: Escalation,
    /// A first-party plugin's `describe()`: it reads no files, so the call gets no filesystem
    /// view (opening the sandbox mode's directories costs more than the call itself).
    pub describe_first_party: bool,
    /// Variables every process the call starts gets (the session's, for the bash tool).
    pub process_env: Vec<(String, String)>,
    /// The session's sandbox when it is not the host's (a session in another directory): its
    /// `workspace` is the call's workspace. `None`: the host's.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::SandboxPolicy>>,
    /// What hears a provider's requests and responses (a session's extensions), if anything.
    pub provider_hooks: Option<std::sync::Arc<dyn super::provider_hooks::ProviderHooks>>,
    /// What a provider's body is spliced with (the session's cached conversation prefix).
    pub history_splice: Option<std::sync::Arc<super::history_splice::HistorySplice>>,
    /// Memory the call may use beyond the plugin's limit, for the host's data it is handed
    /// (a provider's conversation: a long session's is larger than any fixed limit).
    pub data_allowance_bytes: u64,
    /// What a codemode script reaches, for a call of the script engine.
    pub script_host: Option<Arc<dyn super::script_host::ScriptHost>>,
}

/// How long a cancelled call may take to wind down before it is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// The body of a call: gets the store, instantiates, calls.
pub type CallBody<'a, R> = Box<
    dyn for<'s> FnOnce(
            &'s mut Store<StoreState>,
        ) -> Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 's>>
        + Send
        + 'a,
>;

/// A [`CallBody`] that instantiates `pre` in the call's fresh store and runs `call` (an
/// expression on `instance` and `store`) on it.
macro_rules! fresh_call {
    ($pre:ident, |$instance:ident, $store:ident| $call:expr) => {
        Box::new(
            move |$store: &mut wasmtime::Store<$crate::plugin_host::sandbox::StoreState>| {
                Box::pin(async move {
                    let $instance = $pre.instantiate_async(&mut *$store).await?;
                    $call
                })
            },
        )
    };
}
pub(crate) use fresh_call;

impl PluginHost {
    /// Runs `body` against a fresh store for `plugin`.
    pub(crate) async fn run_call<R: Send>(
        &self,
        plugin: &Plugin,
        options: CallOptions,
        body: CallBody<'_, R>,
    ) -> Result<R, CallError> {
        let cancel = options.cancel.clone();
        // Every session's calls wait in one line for the engine's slots (an abort ends the wait).
        let engine = &self.wasm(plugin)?.engine;
        let _admitted = match &cancel {
            Some(cancel) => tokio::select! {
                admitted = engine.admit() => admitted,
                () = cancel.cancelled() => {
                    return Err(CallError::Cancelled {
                        plugin: plugin.manifest.id.clone(),
                    });
                }
            },
            None => engine.admit().await,
        };
        let mut store = self.new_store(plugin, options)?;
        self.drive(&mut store, plugin, cancel, body).await
    }

    /// A store for `plugin`: its sandbox, memory cap and guest-time deadline (measured per call
    /// by the clock [`PluginHost::drive`] resets).
    pub(crate) fn new_store(
        &self,
        plugin: &Plugin,
        options: CallOptions,
    ) -> Result<Store<StoreState>, CallError> {
        let CallOptions {
            progress,
            cancel,
            extra_http,
            escalated,
            describe_first_party,
            process_env,
            sandbox,
            provider_hooks,
            history_splice,
            data_allowance_bytes,
            script_host,
        } = options;
        let mut limits = plugin.manifest.limits;
        limits.memory_bytes = limits
            .memory_bytes
            .saturating_add(data_allowance_bytes)
            .min(super::manifest::Limits::MAX_MEMORY_MB << 20);
        let (workspace, policy) = match sandbox {
            Some(policy) => (Some(policy.workspace.clone()), policy),
            None => (self.workspace.clone(), self.sandbox()),
        };
        let spec = SandboxSpec {
            plugin_id: plugin.manifest.id.clone(),
            capabilities: if extra_http.is_empty() {
                plugin.capabilities.clone()
            } else {
                let mut widened = (*plugin.capabilities).clone();
                widened.http.extend(extra_http);
                std::sync::Arc::new(widened)
            },
            config: plugin.config.clone(),
            limits,
            workspace: if describe_first_party && plugin.is_first_party() {
                None
            } else {
                workspace
            },
            read_dirs: self.read_dirs(),
            http: self.http.clone(),
            policy,
            first_party: plugin.origin == super::discovery::Origin::Embedded,
            escalated,
            process_env,
        };
        let mut state =
            StoreState::new(spec, progress).map_err(|reason| CallError::Instantiate {
                plugin: plugin.manifest.id.clone(),
                reason,
            })?;
        state.cancel = cancel;
        state.provider_hooks = provider_hooks;
        state.history_splice = history_splice;
        state.script_host = script_host;
        let mut store = Store::new(self.wasm(plugin)?.engine.engine(), state);
        store.limiter(|state| &mut state.limiter);
        let deadline = Duration::from_millis(limits.deadline_ms);
        store.epoch_deadline_callback(move |context| {
            if context.data().clock.guest_time() > deadline {
                Err(DeadlineExceeded(limits.deadline_ms).into())
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        Ok(store)
    }

    /// Runs one call on `store` with the plugin's limits: a fresh guest-time clock, the
    /// wall-clock timeout, and the grace period after `cancel` fires.
    pub(crate) async fn drive<R: Send>(
        &self,
        store: &mut Store<StoreState>,
        plugin: &Plugin,
        cancel: Option<CancellationToken>,
        body: CallBody<'_, R>,
    ) -> Result<R, CallError> {
        let id = plugin.manifest.id.clone();
        let limits = plugin.manifest.limits;
        store.data_mut().clock = std::sync::Arc::new(CallClock::new());
        store.set_epoch_deadline(1);
        let _ticking = self.wasm(plugin)?.engine.begin_call();
        let outcome = {
            let run = body(store);
            let limited = async {
                match limits.timeout_ms {
                    Some(ms) => tokio::time::timeout(Duration::from_millis(ms), run)
                        .await
                        .map_err(|_| CallError::Timeout {
                            plugin: id.clone(),
                            timeout_ms: ms,
                        }),
                    None => Ok(run.await),
                }
            };
            // A cancelled call gets a grace period to wind down (its waiting host calls return
            // at once), then it is dropped.
            let dropped = async {
                match &cancel {
                    Some(cancel) => {
                        cancel.cancelled().await;
                        tokio::time::sleep(CANCEL_GRACE).await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = limited => outcome?,
                _ = dropped => return Err(CallError::Cancelled { plugin: id }),
            }
        };
        let memory_bytes = store.data().limiter.cap as u64;
        outcome.map_err(|err| classify(&id, memory_bytes, &err, store.data()))
    }
}

/// Turns a wasmtime error into the call error it stands for.
fn classify(
    plugin: &str,
    memory_bytes: u64,
    err: &wasmtime::Error,
    state: &StoreState,
) -> CallError {
    let plugin = plugin.to_string();
    if let Some(DeadlineExceeded(ms)) = err.downcast_ref::<DeadlineExceeded>() {
        return CallError::Deadline {
            plugin,
            deadline_ms: *ms,
        };
    }
    if err.downcast_ref::<MemoryLimitExceeded>().is_some() || state.limiter.refused.is_some() {
        return CallError::MemoryLimit {
            plugin,
            limit_mb: memory_bytes >> 20,
        };
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => CallError::StackOverflow { plugin },
        Some(Trap::Interrupt) => CallError::Deadline {
            plugin,
            deadline_ms: 0,
        },
        Some(trap) => {
            let message = match state.stderr_tail() {
                Some(line) => format!("{trap}; it said: {line}"),
                None => trap.to_string(),
            };
            CallError::Trap { plugin, message }
        }
        None => {
            let text = error_text(err);
            if text.contains("concurrent") && text.contains("limit") {
                CallError::Instantiate {
                    plugin,
                    reason: format!(
                        "{text} (every instance slot of the engine is in use: open sessions \
                         with extensions each hold one; raise engine.poolInstances in \
                         settings.json, or park idle sessions)"
                    ),
                }
            } else {
                CallError::Trap {
                    plugin,
                    message: text,
                }
            }
        }
    }
}

impl PluginHost {
    /// Calls the tool `name` with `arguments` in a fresh sandboxed instance. The tool's own
    /// failures come back as an error [`ToolOutput`]; sandbox failures as a [`CallError`].
    /// When `cancel` fires, waiting host calls return and child processes are killed, so the
    /// tool can report what it has; a call that does not wind down in time is dropped.
    pub async fn call_tool(
        &self,
        name: &str,
        call_id: &str,
        arguments: &Value,
        progress: Option<ProgressSink>,
        cancel: Option<tokio_util::sync::CancellationToken>,
    ) -> Result<ToolOutput, CallError> {
        let plugin = self
            .tools()
            .iter()
            .find(|(spec, _)| spec.name == name)
            .map(|(_, plugin)| plugin.clone())
            .ok_or_else(|| CallError::NotFound(format!("Tool {name} not found")))?;
        let options = CallOptions {
            progress,
            cancel,
            ..CallOptions::default()
        };
        self.call_plugin_tool(&plugin, name, call_id, arguments, options)
            .await
    }

    /// Calls the tool `name` of `plugin` (the version a run was shown, even if a reload has
    /// replaced it since), as [`PluginHost::call_tool`] does.
    pub async fn call_plugin_tool(
        &self,
        plugin: &Arc<Plugin>,
        name: &str,
        call_id: &str,
        arguments: &Value,
        options: CallOptions,
    ) -> Result<ToolOutput, CallError> {
        // The first-party tools take pi's other argument forms too.
        let prepared;
        let arguments = if plugin.is_first_party() {
            prepared = super::tool_arguments::prepare(name, arguments);
            &prepared
        } else {
            arguments
        };
        let loaded = self.loaded(plugin).await?;
        let pre = loaded
            .tool
            .clone()
            .ok_or_else(|| CallError::NotFound(format!("Tool {name} not found")))?;
        let (name, call_id, arguments) =
            (name.to_string(), call_id.to_string(), arguments.to_string());
        let result = self
            .run_call(
                plugin,
                options,
                fresh_call!(pre, |instance, store| instance
                    .pith_plugin0_1_0_tool()
                    .call_execute(&mut *store, &name, &call_id, &arguments)
                    .await),
            )
            .await?;
        Ok(match result {
            Ok(output) => ToolOutput::from_wit(output, false),
            Err(error) => ToolOutput::from_wit_error(error),
        })
    }
}
