//! The settings that decide what code Cranelift generates for a component, shared by the
//! runtime's engine and the build script that precompiles the first-party components (which
//! includes this file by path, so it uses nothing but wasmtime).
//!
//! Code compiled under one set of these settings only loads into an engine with the same ones:
//! wasmtime checks that when a precompiled component is deserialized, and pith compiles the
//! component afresh when the check fails.

/// Applies the code-generation settings every pith engine uses: the component model and epoch
/// interruption (the per-call deadlines check the epoch in generated code).
pub fn configure_codegen(config: &mut wasmtime::Config) {
    config.wasm_component_model(true);
    config.epoch_interruption(true);
}
