//! Reads each embedded plugin's `describe()` at build time, so the first start on an empty
//! cache needs no component at all to list the tools and models.
//!
//! The component is instantiated with every import but the hash-map seed trapping (a
//! `describe()` that calls the host fails here, and that plugin is described at run time instead) and its answer is written as
//! the JSON of the WIT value. The runtime reads it back into the same WIT types (both sides are
//! generated from `wit/` by the same bindgen) and converts it as it converts a live answer.

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

mod tool {
    wasmtime::component::bindgen!({
        world: "tool-plugin",
        path: "../wit",
        additional_derives: [serde::Serialize],
    });
}

mod provider {
    wasmtime::component::bindgen!({
        world: "provider-plugin",
        path: "../wit",
        additional_derives: [serde::Serialize],
    });
}

/// What a plugin of `group` (`tools` or `providers`) says about itself, as JSON.
pub fn describe(engine: &Engine, group: &str, precompiled: &[u8]) -> Result<String, String> {
    // SAFETY: `precompiled` was produced by `engine.precompile_component` in this build.
    let component = unsafe { Component::deserialize(engine, precompiled) }
        .map_err(|err| format!("cannot load the precompiled component: {err}"))?;
    let mut linker = Linker::new(engine);
    // Hash maps in the guest's standard library seed themselves once; any seed gives the same
    // answer (a `describe()` whose answer depended on it would differ between runs anyway).
    for (name, _) in component.component_type().imports(engine) {
        if name.starts_with("wasi:random/insecure-seed@") {
            link_constant_seed(&mut linker, name)?;
        }
    }
    linker
        .define_unknown_imports_as_traps(&component)
        .map_err(|err| format!("cannot link: {err}"))?;
    let mut store = Store::new(engine, ());
    // The epoch never advances here; the deadline only has to be past the start.
    store.set_epoch_deadline(1);
    let json = match group {
        "tools" => {
            let plugin = tool::ToolPlugin::instantiate(&mut store, &component, &linker)
                .map_err(|err| format!("cannot instantiate: {err:#}"))?;
            let specs = plugin
                .pith_plugin0_1_0_tool()
                .call_describe(&mut store)
                .map_err(|err| format!("describe() failed: {err:#}"))?;
            serde_json::to_string(&specs)
        }
        "providers" => {
            let plugin = provider::ProviderPlugin::instantiate(&mut store, &component, &linker)
                .map_err(|err| format!("cannot instantiate: {err:#}"))?;
            let info = plugin
                .pith_plugin0_1_0_provider()
                .call_describe(&mut store)
                .map_err(|err| format!("describe() failed: {err:#}"))?;
            serde_json::to_string(&info)
        }
        other => return Err(format!("no describe() for the {other} group")),
    };
    json.map_err(|err| format!("cannot write the answer as JSON: {err}"))
}

/// Links `name` (a `wasi:random/insecure-seed` version) to a constant seed.
pub fn link_constant_seed(linker: &mut Linker<()>, name: &str) -> Result<(), String> {
    linker
        .instance(name)
        .and_then(|mut seed| {
            seed.func_wrap("insecure-seed", |_, (): ()| Ok(((0x5eed_u64, 0x91f4_u64),)))
        })
        .map_err(|err| format!("cannot link {name}: {err}"))
}
