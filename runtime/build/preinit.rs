//! Pre-initializes the codemode engine (the `engines` group) with Wizer: its
//! `wizer-initialize` export makes the JavaScript engine's context and compiles the prelude
//! once, here, and the component is rewritten to start from that memory. A script then starts
//! without paying for either (they took most of a trivial script's time).
//!
//! The guest may reach WASI only for the seed of its hash maps and the monotonic clock (both
//! answer constants) during the initialization; every other import traps.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use wasmtime::component::{Component, Instance, Linker, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wizer::ComponentInstanceState;
use wasmtime_wizer::Wizer;

/// Runs a future that never waits (the calls below are synchronous).
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the snapshot waited on nothing"),
    }
}

/// The instance Wizer reads the state from.
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
        let (_, exported) = self
            .instance
            .get_export(&mut *self.store, None, instance)
            .expect("wizer's access instance");
        let (_, function) = self
            .instance
            .get_export(&mut *self.store, Some(&exported), func)
            .expect("wizer's accessor");
        let typed = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, function)
            .expect("wizer's accessor type");
        let (value,) = typed
            .call(&mut *self.store, ())
            .expect("wizer's accessor call");
        value
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

    fn call_func_ret_s32(
        &mut self,
        instance: &str,
        func: &str,
    ) -> impl Future<Output = i32> + Send {
        std::future::ready(self.call::<i32>(instance, func))
    }

    fn call_func_ret_s64(
        &mut self,
        instance: &str,
        func: &str,
    ) -> impl Future<Output = i64> + Send {
        std::future::ready(self.call::<i64>(instance, func))
    }

    fn call_func_ret_f32(
        &mut self,
        instance: &str,
        func: &str,
    ) -> impl Future<Output = u32> + Send {
        std::future::ready(self.call::<f32>(instance, func).to_bits())
    }

    fn call_func_ret_f64(
        &mut self,
        instance: &str,
        func: &str,
    ) -> impl Future<Output = u64> + Send {
        std::future::ready(self.call::<f64>(instance, func).to_bits())
    }
}

/// `wasm` pre-initialized, or why it could not be (the component is then embedded as it is).
pub fn preinitialize(engine: &Engine, wasm: &[u8]) -> Result<Vec<u8>, String> {
    let mut wizer = Wizer::new();
    // The export stays: the host's bindings expect every export of the world.
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer
        .instrument_component(wasm)
        .map_err(|err| format!("cannot instrument: {err:#}"))?;
    let component =
        Component::new(engine, &instrumented).map_err(|err| format!("cannot compile: {err:#}"))?;
    let mut linker = Linker::new(engine);
    for (name, _) in component.component_type().imports(engine) {
        if name.starts_with("wasi:random/insecure-seed@") {
            super::describe::link_constant_seed(&mut linker, name)?;
        } else if name.starts_with("wasi:clocks/monotonic-clock@") {
            linker
                .instance(name)
                .and_then(|mut clock| {
                    clock.func_wrap("now", |_, (): ()| Ok((0_u64,)))?;
                    clock.func_wrap("resolution", |_, (): ()| Ok((1_u64,)))
                })
                .map_err(|err| format!("cannot link {name}: {err}"))?;
        }
    }
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(|err| format!("cannot link: {err}"))?;
    let mut store = Store::new(engine, ());
    store.set_epoch_deadline(1);
    let instance = linker
        .instantiate(&mut store, &component)
        .map_err(|err| format!("cannot instantiate: {err:#}"))?;
    let initialize = instance
        .get_typed_func::<(), ()>(&mut store, "wizer-initialize")
        .map_err(|err| format!("no wizer-initialize: {err:#}"))?;
    initialize
        .call(&mut store, ())
        .map_err(|err| format!("wizer-initialize failed: {err:?}").replace('\n', " | "))?;
    let snapshot = ready(wizer.snapshot_component(
        &context,
        &mut Initialized {
            store: &mut store,
            instance,
        },
    ))
    .map_err(|err| format!("cannot snapshot: {err:#}"))?;
    Ok(snapshot)
}
