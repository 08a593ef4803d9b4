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
/// Instances the pooling allocator keeps slots for (concurrent calls across all plugins): far
/// more than a session runs at once (parallel tool calls, a provider, extensions), while the
/// reserved address space stays within what a 64-bit process has.
pub const POOL_INSTANCES: u32 = 128;

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

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            pooling: true,
            pool_instances: POOL_INSTANCES,
            max_wasm_stack_kb: MAX_WASM_STACK >> 10,
        }
    }
}

/// The engine and its epoch ticker.
#[derive(Clone)]
pub struct PluginEngine {
    engine: Engine,
    ticker: Arc<Ticker>,
}

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
                Ok(engine) => engine,
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
        Ok(PluginEngine { engine, ticker })
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
}
