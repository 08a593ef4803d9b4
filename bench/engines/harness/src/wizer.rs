//! `engines-bench wizer IN OUT`: pre-initializes a component that exports `wizer-initialize`,
//! with wasmtime-wizer 48 as pith's build does (runtime/build/preinit.rs): the export runs
//! once and the component is rewritten to start from the memory it left. During the
//! initialization the guest may read the monotonic and wall clocks and the random seeds
//! (constants); every other import traps.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::component::{Component, Instance, Linker, Val, WasmList};
use wasmtime::{Config, Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the snapshot waited on nothing"),
    }
}

struct Initialized<'a> {
    store: &'a mut Store<()>,
    instance: Instance,
}

impl Initialized<'_> {
    fn call<R: wasmtime::component::Lift + Send + Sync + 'static>(
        &mut self,
        instance: &str,
        func: &str,
    ) -> R {
        let (_, exported) = self.instance.get_export(&mut *self.store, None, instance).unwrap();
        let (_, function) = self
            .instance
            .get_export(&mut *self.store, Some(&exported), func)
            .unwrap();
        let typed = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, function)
            .unwrap();
        typed.call(&mut *self.store, ()).unwrap().0
    }
}

impl ComponentInstanceState for Initialized<'_> {
    fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) -> impl Future<Output = ()> + Send {
        let list: WasmList<u8> = self.call(instance, func);
        contents(list.as_le_slice(&*self.store));
        std::future::ready(())
    }
    fn call_func_ret_s32(&mut self, i: &str, f: &str) -> impl Future<Output = i32> + Send {
        std::future::ready(self.call::<i32>(i, f))
    }
    fn call_func_ret_s64(&mut self, i: &str, f: &str) -> impl Future<Output = i64> + Send {
        std::future::ready(self.call::<i64>(i, f))
    }
    fn call_func_ret_f32(&mut self, i: &str, f: &str) -> impl Future<Output = u32> + Send {
        std::future::ready(self.call::<f32>(i, f).to_bits())
    }
    fn call_func_ret_f64(&mut self, i: &str, f: &str) -> impl Future<Output = u64> + Send {
        std::future::ready(self.call::<f64>(i, f).to_bits())
    }
}

pub fn preinitialize(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).map_err(|e| e.to_string())?;
    let mut wizer = Wizer::new();
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(wasm)
        .map_err(|err| format!("cannot instrument: {err:#}"))?;
    let component = Component::new(&engine, &instrumented)
        .map_err(|err| format!("cannot compile: {err:#}"))?;
    let mut linker: Linker<()> = Linker::new(&engine);
    for (name, _) in component.component_type().imports(&engine) {
        let mut inst = linker.instance(name).map_err(|e| e.to_string())?;
        let linked = if name.starts_with("wasi:random/insecure-seed@") {
            inst.func_wrap("insecure-seed", |_, (): ()| Ok(((0x5eed_u64, 0x91f4_u64),)))
        } else if name.starts_with("wasi:random/random@") {
            inst.func_wrap("get-random-u64", |_, (): ()| Ok((0x5eed_u64,)))
        } else if name.starts_with("wasi:clocks/monotonic-clock@") {
            inst.func_wrap("now", |_, (): ()| Ok((0_u64,)))
                .and_then(|_| inst.func_wrap("resolution", |_, (): ()| Ok((1_u64,))))
        } else if name.starts_with("wasi:clocks/wall-clock@") {
            inst.func_new("now", |_, _, _, results: &mut [Val]| {
                results[0] = Val::Record(vec![
                    ("seconds".into(), Val::U64(0)),
                    ("nanoseconds".into(), Val::U32(0)),
                ]);
                Ok(())
            })
        } else {
            Ok(())
        };
        linked.map_err(|err| format!("cannot link {name}: {err}"))?;
    }
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(|err| format!("cannot link: {err}"))?;
    let mut store = Store::new(&engine, ());
    let instance = linker
        .instantiate(&mut store, &component)
        .map_err(|err| format!("cannot instantiate: {err:#}"))?;
    let initialize = instance
        .get_typed_func::<(), ()>(&mut store, "wizer-initialize")
        .map_err(|err| format!("no wizer-initialize: {err:#}"))?;
    initialize
        .call(&mut store, ())
        .map_err(|err| format!("wizer-initialize failed: {err:?}"))?;
    ready(wizer.snapshot_component(
        &context,
        &mut Initialized {
            store: &mut store,
            instance,
        },
    ))
    .map_err(|err| format!("cannot snapshot: {err:#}"))
}
