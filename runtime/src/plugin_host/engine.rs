//! The wasmtime engine shared by every plugin: component model, async host calls, the pooling
//! allocator, a bounded wasm stack, and epoch interruption driven by a ticker thread that only
//! runs while calls are in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances while calls run; the granularity of per-call deadlines.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);
/// The largest wasm stack a call may use.
pub const MAX_WASM_STACK: usize = 1 << 20;
/// Instances the pooling allocator keeps slots for (concurrent calls across all plugins).
pub const POOL_INSTANCES: u32 = 128;

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
    /// Builds the engine.
    pub fn new() -> wasmtime::Result<PluginEngine> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.max_wasm_stack(MAX_WASM_STACK);
        config.async_stack_size(MAX_WASM_STACK + (512 << 10));
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(POOL_INSTANCES)
            .total_core_instances(POOL_INSTANCES * 8)
            .total_memories(POOL_INSTANCES * 2)
            .total_tables(POOL_INSTANCES * 8)
            .total_stacks(POOL_INSTANCES)
            .max_memory_size((super::manifest::Limits::MAX_MEMORY_MB as usize) << 20);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config)?;
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

/// Advances the epoch while calls are in flight; parks otherwise; ends with the engine.
fn epoch_loop(weak: wasmtime::EngineWeak, active: Arc<AtomicUsize>) {
    loop {
        if active.load(Ordering::SeqCst) == 0 {
            std::thread::park_timeout(Duration::from_secs(1));
            if weak.upgrade().is_none() {
                return;
            }
            continue;
        }
        let Some(engine) = weak.upgrade() else { return };
        engine.increment_epoch();
        drop(engine);
        std::thread::sleep(EPOCH_TICK);
    }
}
