//! Bindings generated from the WIT package in `wit/`.
//!
//! The host imports are generated once; each plugin kind's world is generated behind its
//! cargo feature and reuses them, so a plugin embeds exactly the world it targets.

/// The imports every plugin has: `types`, `host`, `http`, `process`.
pub mod imports {
    wit_bindgen::generate!({
        world: "host-imports",
        path: "../wit",
        runtime_path: "::pith_sdk::__private::wit_bindgen::rt",
        generate_all,
    });
}

/// Generates one plugin kind's world, reusing the shared imports.
macro_rules! plugin_world {
    ($(#[$attr:meta])* $module:ident, $world:literal, $export_macro:literal, $bindings:literal) => {
        $(#[$attr])*
        pub mod $module {
            wit_bindgen::generate!({
                world: $world,
                path: "../wit",
                runtime_path: "::pith_sdk::__private::wit_bindgen::rt",
                with: {
                    "pith:plugin/types@0.1.0": crate::bindings::imports::pith::plugin::types,
                    "pith:plugin/host@0.1.0": crate::bindings::imports::pith::plugin::host,
                    "pith:plugin/http@0.1.0": crate::bindings::imports::pith::plugin::http,
                    "pith:plugin/process@0.1.0": crate::bindings::imports::pith::plugin::process,
                },
                pub_export_macro: true,
                export_macro_name: $export_macro,
                default_bindings_module: $bindings,
            });
        }
    };
}

plugin_world!(
    /// The `tool-plugin` world.
    #[cfg(feature = "tool")]
    tool_world, "tool-plugin", "__export_tool_world", "::pith_sdk::bindings::tool_world"
);
plugin_world!(
    /// The `provider-plugin` world.
    #[cfg(feature = "provider")]
    provider_world, "provider-plugin", "__export_provider_world", "::pith_sdk::bindings::provider_world"
);
plugin_world!(
    /// The `extension-plugin` world.
    #[cfg(feature = "extension")]
    extension_world, "extension-plugin", "__export_extension_world", "::pith_sdk::bindings::extension_world"
);
plugin_world!(
    /// The `skill-plugin` world.
    #[cfg(feature = "skill")]
    skill_world, "skill-plugin", "__export_skill_world", "::pith_sdk::bindings::skill_world"
);
plugin_world!(
    /// The `prompt-template-plugin` world.
    #[cfg(feature = "prompt-template")]
    prompt_template_world, "prompt-template-plugin", "__export_prompt_template_world", "::pith_sdk::bindings::prompt_template_world"
);
