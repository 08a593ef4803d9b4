//! Host-side bindings generated from `wit/`: one module per world, sharing the host imports.

/// The imports every plugin has (`types`, `host`, `http`, `process`).
pub mod imports {
    wasmtime::component::bindgen!({
        world: "host-imports",
        path: "../wit",
        imports: { default: async },
        with: {
            "pith:plugin/http.response": crate::plugin_host::imports::http::HttpResponse,
            "pith:plugin/process.child": crate::plugin_host::imports::process::ChildProcess,
        },
    });
}

/// Generates a world's bindings, reusing the shared imports.
macro_rules! plugin_world {
    ($(#[$attr:meta])* $module:ident, $world:literal) => {
        $(#[$attr])*
        pub mod $module {
            wasmtime::component::bindgen!({
                world: $world,
                path: "../wit",
                imports: { default: async },
                exports: { default: async },
                with: {
                    "pith:plugin/types": crate::plugin_host::bindings::imports::pith::plugin::types,
                    "pith:plugin/host": crate::plugin_host::bindings::imports::pith::plugin::host,
                    "pith:plugin/http": crate::plugin_host::bindings::imports::pith::plugin::http,
                    "pith:plugin/process": crate::plugin_host::bindings::imports::pith::plugin::process,
                },
            });
        }
    };
}

plugin_world!(
    /// The `tool-plugin` world.
    tool_world, "tool-plugin"
);
plugin_world!(
    /// The `provider-plugin` world.
    provider_world, "provider-plugin"
);
plugin_world!(
    /// The `extension-plugin` world.
    extension_world, "extension-plugin"
);
plugin_world!(
    /// The `skill-plugin` world.
    skill_world, "skill-plugin"
);
plugin_world!(
    /// The `prompt-template-plugin` world.
    prompt_template_world, "prompt-template-plugin"
);
