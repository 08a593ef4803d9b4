//! The wasmtime engine shared by every plugin: component model, async host calls, the pooling
//! allocator, a bounded wasm stack, and epoch interruption driven by a ticker thread that only
//! runs while calls are in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances while calls run; the granularity of per-call deadlines (5 ms
/// keeps a deadline within a few ms of exact while the ticker costs nothing measurable).
pub const EPOCH_TICK: Duration = Duration::from_millis(5);
/// The largest wasm stack a call may use: 1 MiB, as a native thread's default on many systems;
/// deep recursion in a guest traps instead of overflowing pith's own stack.
pub const MAX_WASM_STACK: usize = 1 << 20;
/// Instance slots for calls in flight across all plugins: far more than a session runs at once
/// (parallel tool calls, a provider, its codemode engine).
pub const CALL_SLOTS: u32 = 128;
/// Instance slots for the open sessions' extensions, which each keep an instance while their
/// session is open: as many as a multi-session host opens by default (its
/// `sessionHost.maxOpenSessions`, which raises it).
pub const SESSION_SLOTS: u32 = 1000;
/// Instances the pooling allocator keeps slots for by default: the calls' and the sessions'.
/// Each slot costs address space only until used (about 0.9 MB of RSS per 1,000 slots), and
/// the reservation stays within what a 64-bit process has.
pub const POOL_INSTANCES: u32 = CALL_SLOTS + SESSION_SLOTS;

/// The engine's settings (`engine` in settings.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct EngineSettings {
    /// Use the pooling allocator (fast instantiation; reserves address space up front). When
    /// the reservation fails (a low `ulimit -v`, a small address space), pith falls back to
    /// allocating on demand and says so in its log.
    pub pooling: bool,
    /// Slots in the pool (concurrent instances).
    pub pool_instances: u32,
    /// The largest wasm stack, KiB.
    pub max_wasm_stack_kb: usize,
}

impl EngineSettings {
    /// The settings' `engine` section; without `poolInstances`, the pool holds a slot for each
    /// session a multi-session host may open (`sessionHost.maxOpenSessions`) beside the calls'.
    pub fn from_settings(settings: &crate::settings::Settings) -> Result<EngineSettings, String> {
        let mut engine = match settings.get("engine") {
            None => EngineSettings::default(),
            Some(value) => serde_json::from_value(value.clone()).map_err(|err| {
                format!("settings engine: {err} (keys: pooling, poolInstances, maxWasmStackKb)")
            })?,
        };
        let explicit = settings
            .get("engine")
            .is_some_and(|engine| engine.get("poolInstances").is_some());
        let sessions = settings
            .get("sessionHost")
            .and_then(|host| host.get("maxOpenSessions"))
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| u32::try_from(n).ok());
        if !explicit && let Some(sessions) = sessions {
            engine.pool_instances = CALL_SLOTS.saturating_add(sessions.max(SESSION_SLOTS));
        }
        Ok(engine)
    }
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            pooling: true,
            pool_instances: POOL_INSTANCES,
            max_wasm_stack_kb: MAX_WASM_STACK >> 10,
        }
    }
}

/// How long a call waits for one of the calls' instance slots before it goes ahead anyway (a
/// call nested in another — a codemode script's tool call — must never wait on its parent for
/// good); without a free slot it then fails with an error saying how to make room.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(10);

/// The engine, its epoch ticker, and the admission of calls to its instance slots.
#[derive(Clone)]
pub struct PluginEngine {
    engine: Engine,
    ticker: Arc<Ticker>,
    /// The calls' share of the pool's slots, handed out first come, first served (every session
    /// of a multi-session host waits in one line); `None` when instances are allocated on
    /// demand (no slot to wait for).
    admission: Option<Arc<tokio::sync::Semaphore>>,
}

/// A call's place among the calls in flight, held until it ends.
pub type Admitted = Option<tokio::sync::OwnedSemaphorePermit>;

struct Ticker {
    active: Arc<AtomicUsize>,
    thread: std::thread::Thread,
}

/// Keeps the epoch ticking while alive; one per call in flight.
pub struct ActiveCall {
    ticker: Arc<Ticker>,
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        self.ticker.active.fetch_sub(1, Ordering::SeqCst);
    }
}

impl PluginEngine {
    /// Builds the engine with the default settings.
    pub fn new() -> wasmtime::Result<PluginEngine> {
        PluginEngine::with_settings(EngineSettings::default())
    }

    /// Builds the engine; when the pooling allocator cannot reserve its address space, falls
    /// back to on-demand allocation (with a log line) instead of failing.
    pub fn with_settings(settings: EngineSettings) -> wasmtime::Result<PluginEngine> {
        let stack = settings.max_wasm_stack_kb.clamp(64, 64 << 10) << 10;
        let mut config = Config::new();
        super::codegen::configure_codegen(&mut config);
        config.max_wasm_stack(stack);
        config.async_stack_size(stack + (512 << 10));
        let mut admission = None;
        let engine = if settings.pooling {
            let instances = settings.pool_instances.max(1);
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(instances)
                .total_core_instances(instances * 8)
                .total_memories(instances * 2)
                .total_tables(instances * 8)
                .total_stacks(instances)
                .max_memory_size((super::manifest::Limits::MAX_MEMORY_MB as usize) << 20);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
            match Engine::new(&config) {
                Ok(engine) => {
                    let slots = CALL_SLOTS.min(instances) as usize;
                    admission = Some(Arc::new(tokio::sync::Semaphore::new(slots)));
                    engine
                }
                Err(err) => {
                    tracing::warn!(
                        "the pooling allocator is unavailable ({err:#}); allocating on demand"
                    );
                    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
                    Engine::new(&config)?
                }
            }
        } else {
            config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
            Engine::new(&config)?
        };
        let weak = engine.weak();
        let active = Arc::new(AtomicUsize::new(0));
        let seen_by_thread = active.clone();
        let handle = std::thread::Builder::new()
            .name("pith-epoch".into())
            .spawn(move || epoch_loop(weak, seen_by_thread))
            .map_err(|err| wasmtime::Error::msg(format!("cannot start the epoch ticker: {err}")))?;
        let ticker = Arc::new(Ticker {
            active,
            thread: handle.thread().clone(),
        });
        Ok(PluginEngine {
            engine,
            ticker,
            admission,
        })
    }

    /// Waits, first come first served, for a place among the calls in flight (the pooling
    /// allocator's slots for calls); after [`ADMISSION_WAIT`] the call goes ahead without one.
    pub async fn admit(&self) -> Admitted {
        self.admit_within(ADMISSION_WAIT).await
    }

    async fn admit_within(&self, wait: Duration) -> Admitted {
        let slots = self.admission.clone()?;
        if let Ok(place) = slots.clone().try_acquire_owned() {
            return Some(place);
        }
        match tokio::time::timeout(wait, slots.acquire_owned()).await {
            Ok(place) => place.ok(),
            Err(_) => {
                tracing::warn!(
                    "a call waited {wait:?} for one of the {CALL_SLOTS} places of calls in flight; \
                     it goes ahead without one"
                );
                None
            }
        }
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Marks a call in flight: the epoch ticks until the returned guard drops.
    pub fn begin_call(&self) -> ActiveCall {
        if self.ticker.active.fetch_add(1, Ordering::SeqCst) == 0 {
            self.ticker.thread.unpark();
        }
        ActiveCall {
            ticker: self.ticker.clone(),
        }
    }

    /// A short tag that changes whenever compiled code from this engine would be incompatible.
    pub fn compatibility_tag(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.engine
            .precompile_compatibility_hash()
            .hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

/// Advances the epoch every [`EPOCH_TICK`] while calls are in flight; parks otherwise; ends
/// with the engine. The first tick comes a whole tick after the calls begin: a short call (a
/// hook, most tool calls) never sees one, so it is never made to yield to the executor.
fn epoch_loop(weak: wasmtime::EngineWeak, active: Arc<AtomicUsize>) {
    loop {
        if active.load(Ordering::SeqCst) == 0 {
            std::thread::park_timeout(Duration::from_secs(1));
            if weak.upgrade().is_none() {
                return;
            }
            continue;
        }
        std::thread::sleep(EPOCH_TICK);
        if active.load(Ordering::SeqCst) == 0 {
            continue;
        }
        let Some(engine) = weak.upgrade() else { return };
        engine.increment_epoch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_too_large_to_reserve_falls_back_to_on_demand_allocation() {
        // Millions of 4 GiB memory slots cannot be reserved in any address space.
        let settings = EngineSettings {
            pool_instances: 4_000_000,
            ..EngineSettings::default()
        };
        assert!(PluginEngine::with_settings(settings).is_ok());
        let on_demand = EngineSettings {
            pooling: false,
            ..EngineSettings::default()
        };
        assert!(PluginEngine::with_settings(on_demand).is_ok());
    }

    #[tokio::test]
    async fn calls_beyond_the_slots_wait_in_line_and_never_forever() {
        let settings = EngineSettings {
            pool_instances: 2,
            ..EngineSettings::default()
        };
        let engine = PluginEngine::with_settings(settings).unwrap();
        let first = engine.admit().await;
        let second = engine.admit().await;
        assert!(first.is_some() && second.is_some());
        // A third waits for a place, and gets the first one given back.
        let waiting = {
            let engine = engine.clone();
            tokio::spawn(async move { engine.admit().await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "no place is free");
        drop(first);
        let third = waiting.await.unwrap();
        assert!(third.is_some());
        // With every place held, a call goes ahead without one after its wait.
        let started = std::time::Instant::now();
        assert!(
            engine
                .admit_within(Duration::from_millis(50))
                .await
                .is_none()
        );
        assert!(started.elapsed() >= Duration::from_millis(50));
        // On-demand allocation has no places to wait for.
        let on_demand = EngineSettings {
            pooling: false,
            ..EngineSettings::default()
        };
        let engine = PluginEngine::with_settings(on_demand).unwrap();
        assert!(engine.admit().await.is_none());
    }

    #[test]
    fn the_pool_holds_a_slot_per_session_the_host_may_open() {
        use crate::settings::Settings;
        let pool = |value: serde_json::Value| {
            EngineSettings::from_settings(&Settings::from_value(value))
                .unwrap()
                .pool_instances
        };
        assert_eq!(pool(serde_json::json!({})), CALL_SLOTS + SESSION_SLOTS);
        let more = serde_json::json!({"sessionHost": {"maxOpenSessions": 5000}});
        assert_eq!(pool(more), CALL_SLOTS + 5000);
        let fewer = serde_json::json!({"sessionHost": {"maxOpenSessions": 10}});
        assert_eq!(pool(fewer), POOL_INSTANCES, "never fewer than the default");
        let explicit = serde_json::json!({"engine": {"poolInstances": 64}, "sessionHost": {"maxOpenSessions": 5000}});
        assert_eq!(pool(explicit), 64, "the user's own size wins");
        let bad = EngineSettings::from_settings(&Settings::from_value(
            serde_json::json!({"engine": {"pool": true}}),
        ));
        assert!(bad.unwrap_err().contains("poolInstances"));
    }
}
