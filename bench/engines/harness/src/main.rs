//! Measures JavaScript engines built as WebAssembly components, the way pith runs its
//! `codemode` engine: wasmtime 48 with pith's code-generation settings (component model,
//! epoch interruption), the pooling allocator, async host calls, and a fresh instance from a
//! cached `InstancePre` for each script.
//!
//! Usage: engines-bench wizer IN.wasm OUT.wasm   (pre-initializes, see wizer.rs)
//!        engines-bench [--runs N] [--compute-runs M] [--compile-runs C] [--json FILE]
//!                      NAME=KIND:PATH...
//! KIND is `codemode` (pith's `script-engine-plugin` world, run(script) -> ending) or `simple`
//! (`bench:engines/js-engine`, run(code) -> string).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits,
    StoreLimitsBuilder,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

mod wizer;

mod codemode {
    wasmtime::component::bindgen!({
        world: "pith:plugin/script-engine-plugin@0.2.0",
        path: "../../../wit",
        imports: { default: async },
        exports: { default: async },
    });
}

mod simple {
    wasmtime::component::bindgen!({
        world: "bench:engines/js-engine",
        path: "../wit",
        exports: { default: async },
    });
}

use codemode::exports::pith::plugin0_2_0::script_engine::Script;
use codemode::pith::plugin0_2_0::script_host::{self, CallKind, OutputKind, Settlement};

/// The memory cap of pith's codemode engine (its pith.toml: 256 MiB), for every engine.
const MEMORY_CAP: usize = 256 << 20;

struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl script_host::Host for State {
    async fn start_call(&mut self, _: CallKind, _: u32, _: String, _: Option<String>) {}
    async fn wait_calls(&mut self) -> Vec<Settlement> {
        Vec::new()
    }
    async fn output(&mut self, _: OutputKind, _: String, _: Option<String>) {}
}

fn new_store(engine: &Engine) -> Store<State> {
    let wasi = WasiCtx::builder().inherit_stderr().build();
    let limits = StoreLimitsBuilder::new().memory_size(MEMORY_CAP).build();
    let mut store = Store::new(
        engine,
        State {
            wasi,
            table: ResourceTable::new(),
            limits,
        },
    );
    store.limiter(|s| &mut s.limits);
    // pith sets a deadline per call; nothing here runs long enough to meet one.
    store.set_epoch_deadline(1 << 40);
    store
}

/// pith's engine: `configure_codegen` (component model + epoch interruption), 1 MiB wasm
/// stack, async calls (always on in wasmtime 48 with the `async` feature), the pooling
/// allocator sized as pith sizes it.
fn engine() -> Engine {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    let stack = 1 << 20;
    config.max_wasm_stack(stack);
    config.async_stack_size(stack + (512 << 10));
    let instances = 128;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(instances)
        .total_core_instances(instances * 8)
        .total_memories(instances * 2)
        .total_tables(instances * 8)
        .total_stacks(instances)
        .max_memory_size(4096 << 20);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config).expect("engine")
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Codemode,
    Simple,
}

enum Pre {
    Codemode(codemode::ScriptEnginePluginPre<State>),
    Simple(simple::JsEnginePre<State>),
}

/// A script in both shapes: `body` for codemode (the body of an async function), `expr` for
/// the simple world (a classic script whose completion value is the result).
struct Bench {
    name: &'static str,
    body: String,
    expr: String,
    expect: &'static str,
}

fn benches() -> (Bench, Vec<Bench>) {
    let wrap = |body: &str| format!("(function () {{ {body} }})()");
    let trivial = Bench {
        name: "1+1",
        body: "return 1+1".into(),
        expr: "1+1".into(),
        expect: "2",
    };
    let sum = "let s = 0; for (let i = 0; i < 1000000; i++) { s += i; } return s;";
    // 1.19 MB of JSON (1,192,674 chars): 10,000 records of ~120 bytes; built, stringified, parsed, re-stringified.
    let json = "const a = []; \
        for (let i = 0; i < 10000; i++) { \
          a.push({ id: i, name: 'item-' + i, tags: ['alpha', 'beta', 'gamma'], value: i * 1.5, \
                   nested: { x: i, y: String(i * 7), ok: i % 2 === 0 } }); \
        } \
        const text = JSON.stringify(a); \
        const back = JSON.parse(text); \
        const again = JSON.stringify(back); \
        return text.length === again.length ? text.length : -1;";
    let compute = vec![
        Bench {
            name: "sum 1e6",
            body: sum.into(),
            expr: wrap(sum),
            expect: "499999500000",
        },
        Bench {
            name: "JSON 1 MB",
            body: json.into(),
            expr: wrap(json),
            expect: "1192674",
        },
    ];
    (trivial, compute)
}

/// Instantiates a fresh instance and runs `bench` in it: (instantiate, call, result).
async fn run_once(engine: &Engine, pre: &Pre, bench: &Bench) -> (Duration, Duration, String) {
    let mut store = new_store(engine);
    match pre {
        Pre::Codemode(pre) => {
            let t0 = Instant::now();
            let instance = pre.instantiate_async(&mut store).await.expect("instantiate");
            let t1 = Instant::now();
            let script = Script {
                code: bench.body.clone(),
                tools: "[]".into(),
                globals: "[]".into(),
                store: "{}".into(),
            };
            let ending = instance
                .pith_plugin0_2_0_script_engine()
                .call_run(&mut store, &script)
                .await
                .expect("run");
            let t2 = Instant::now();
            let result = if ending.ok {
                ending.payload.unwrap_or_default()
            } else {
                format!("error: {:?}", ending.payload)
            };
            (t1 - t0, t2 - t1, result)
        }
        Pre::Simple(pre) => {
            let t0 = Instant::now();
            let instance = pre.instantiate_async(&mut store).await.expect("instantiate");
            let t1 = Instant::now();
            let result = instance
                .call_run(&mut store, &bench.expr)
                .await
                .expect("run");
            let t2 = Instant::now();
            (t1 - t0, t2 - t1, result)
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("wizer") {
        let wasm = std::fs::read(&argv[2]).expect("read input");
        let t = Instant::now();
        let out = wizer::preinitialize(&wasm).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&argv[3], &out).expect("write output");
        eprintln!("{} -> {} ({} bytes, {:.1} s)", argv[2], argv[3], out.len(), t.elapsed().as_secs_f64());
        return;
    }
    let mut runs = 50usize;
    let mut compute_runs = 5usize;
    let mut compile_runs = 3usize;
    let mut json_out: Option<PathBuf> = None;
    let mut targets = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().unwrap().parse().unwrap(),
            "--compute-runs" => compute_runs = args.next().unwrap().parse().unwrap(),
            "--compile-runs" => compile_runs = args.next().unwrap().parse().unwrap(),
            "--json" => json_out = Some(args.next().unwrap().into()),
            _ => {
                let (name, rest) = arg.split_once('=').expect("NAME=KIND:PATH");
                let (kind, path) = rest.split_once(':').expect("NAME=KIND:PATH");
                let kind = match kind {
                    "codemode" => Kind::Codemode,
                    "simple" => Kind::Simple,
                    other => panic!("unknown kind {other}"),
                };
                targets.push((name.to_string(), kind, PathBuf::from(path)));
            }
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let engine = engine();
    let (trivial, compute) = benches();
    let mut loaded = Vec::new();
    for (name, kind, path) in &targets {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("== {name} ({} bytes)", bytes.len());
        let mut compiles = Vec::new();
        let mut component = None;
        for _ in 0..compile_runs.max(1) {
            let t = Instant::now();
            let c = Component::from_binary(&engine, &bytes).expect("compile");
            compiles.push(t.elapsed());
            component = Some(c);
        }
        let compile_min = *compiles.iter().min().unwrap();
        let compile_med = median(compiles.clone());
        let component = component.unwrap();
        let cwasm = component.serialize().expect("serialize");
        let t = Instant::now();
        // SAFETY: the bytes were just produced by `serialize` with this engine.
        let component = unsafe { Component::deserialize(&engine, &cwasm) }.expect("deserialize");
        let deserialize = t.elapsed();

        let mut linker: Linker<State> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
        let pre = match kind {
            Kind::Codemode => {
                codemode::ScriptEnginePlugin::add_to_linker::<State, HasSelf<State>>(
                    &mut linker,
                    |s| s,
                )
                .expect("script-host");
                Pre::Codemode(
                    codemode::ScriptEnginePluginPre::new(
                        linker.instantiate_pre(&component).expect("pre"),
                    )
                    .expect("pre"),
                )
            }
            Kind::Simple => Pre::Simple(
                simple::JsEnginePre::new(linker.instantiate_pre(&component).expect("pre"))
                    .expect("pre"),
            ),
        };

        let (first_inst, first_call, first_result) = rt.block_on(run_once(&engine, &pre, &trivial));
        assert_eq!(first_result, trivial.expect, "{name}: 1+1 gave {first_result}");
        for _ in 0..5 {
            rt.block_on(run_once(&engine, &pre, &trivial));
        }
        loaded.push(Loaded {
            name: name.clone(),
            size: bytes.len(),
            cwasm: cwasm.len(),
            compile_min,
            compile_med,
            deserialize,
            first: first_inst + first_call,
            pre,
        });
    }
    // The runs interleave the engines (round after round, each engine once a round), so that
    // whatever else the machine does at a moment weighs on every engine alike.
    let n = loaded.len();
    let (mut inst, mut call, mut total) = (vec![Vec::new(); n], vec![Vec::new(); n], vec![Vec::new(); n]);
    for _ in 0..runs {
        for (k, l) in loaded.iter().enumerate() {
            let (i, c, r) = rt.block_on(run_once(&engine, &l.pre, &trivial));
            assert_eq!(r, trivial.expect, "{}", l.name);
            inst[k].push(i);
            call[k].push(c);
            total[k].push(i + c);
        }
    }
    let mut times = vec![vec![Vec::new(); compute.len()]; n];
    let mut results = vec![vec![String::new(); compute.len()]; n];
    for _ in 0..compute_runs {
        for (b, bench) in compute.iter().enumerate() {
            for (k, l) in loaded.iter().enumerate() {
                let (i, c, r) = rt.block_on(run_once(&engine, &l.pre, bench));
                times[k][b].push(i + c);
                results[k][b] = r;
            }
        }
    }
    let mut rows = Vec::new();
    for (k, l) in loaded.into_iter().enumerate() {
        let mut compute_cols = Vec::new();
        for (b, bench) in compute.iter().enumerate() {
            let result = results[k][b].clone();
            let ok = result == bench.expect;
            if !ok {
                eprintln!("  {} {}: unexpected result {result}", l.name, bench.name);
            }
            let t = times[k][b].clone();
            let min = *t.iter().min().unwrap();
            compute_cols.push((bench.name, median(t), min, ok, result));
        }
        let row = Row {
            name: l.name,
            size: l.size,
            cwasm: l.cwasm,
            compile_min: l.compile_min,
            compile_med: l.compile_med,
            deserialize: l.deserialize,
            first: l.first,
            inst: median(inst[k].clone()),
            call: median(call[k].clone()),
            total_med: median(total[k].clone()),
            total_min: *total[k].iter().min().unwrap(),
            compute: compute_cols,
        };
        eprintln!("{}", row.line());
        rows.push(row);
    }
    println!(
        "\n| engine | .wasm bytes | .cwasm bytes | compile (median of {compile_runs}) | deserialize .cwasm | first script | instantiate (median) | call `1+1` (median) | instantiate + call (median of {runs}) | min | {} |",
        compute
            .iter()
            .map(|b| format!("{}, median (min) of {compute_runs}", b.name))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|{}", "---:|".repeat(compute.len()));
    for row in &rows {
        println!("{}", row.line());
    }
    if let Some(path) = json_out {
        let mut s = String::from("[\n");
        for (i, row) in rows.iter().enumerate() {
            s.push_str(&row.json());
            s.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
        }
        s.push_str("]\n");
        std::fs::write(path, s).unwrap();
    }
}

/// A compiled engine, ready to instantiate.
struct Loaded {
    name: String,
    size: usize,
    cwasm: usize,
    compile_min: Duration,
    compile_med: Duration,
    deserialize: Duration,
    first: Duration,
    pre: Pre,
}

struct Row {
    name: String,
    size: usize,
    cwasm: usize,
    compile_min: Duration,
    compile_med: Duration,
    deserialize: Duration,
    first: Duration,
    inst: Duration,
    call: Duration,
    total_med: Duration,
    total_min: Duration,
    compute: Vec<(&'static str, Duration, Duration, bool, String)>,
}

impl Row {
    fn line(&self) -> String {
        let compute: Vec<String> = self
            .compute
            .iter()
            .map(|(_, d, min, ok, r)| {
                if *ok {
                    format!("{:.1} ms ({:.1})", ms(*d), ms(*min))
                } else {
                    format!("{:.1} ms (result {r})", ms(*d))
                }
            })
            .collect();
        format!(
            "| {} | {} | {} | {:.2} s | {:.1} ms | {:.2} ms | {:.3} ms | {:.3} ms | {:.3} ms | {:.3} ms | {} |",
            self.name,
            self.size,
            self.cwasm,
            self.compile_med.as_secs_f64(),
            ms(self.deserialize),
            ms(self.first),
            ms(self.inst),
            ms(self.call),
            ms(self.total_med),
            ms(self.total_min),
            compute.join(" | ")
        )
    }

    fn json(&self) -> String {
        let compute: Vec<String> = self
            .compute
            .iter()
            .map(|(n, d, min, ok, r)| {
                format!(
                    "{{\"name\": \"{n}\", \"median_ms\": {:.3}, \"min_ms\": {:.3}, \"ok\": {ok}, \"result\": \"{}\"}}",
                    ms(*d),
                    ms(*min),
                    r.replace('"', "'")
                )
            })
            .collect();
        format!(
            "  {{\"engine\": \"{}\", \"wasm_bytes\": {}, \"cwasm_bytes\": {}, \"compile_ms_median\": {:.1}, \"compile_ms_min\": {:.1}, \"deserialize_ms\": {:.2}, \"first_script_ms\": {:.3}, \"instantiate_ms_median\": {:.4}, \"call_ms_median\": {:.4}, \"per_script_ms_median\": {:.4}, \"per_script_ms_min\": {:.4}, \"compute\": [{}]}}",
            self.name,
            self.size,
            self.cwasm,
            ms(self.compile_med),
            ms(self.compile_min),
            ms(self.deserialize),
            ms(self.first),
            ms(self.inst),
            ms(self.call),
            ms(self.total_med),
            ms(self.total_min),
            compute.join(", ")
        )
    }
}
