//! The plugin host: finds plugins (embedded first-party ones and plugin directories), validates
//! them against the worlds they claim, grants them what the manifest declares and the user
//! allows, caches compiled code and `describe()` metadata by content hash, and calls them in
//! fresh sandboxed stores.
//!
//! Startup is flat in the number of plugins: it reads manifests and metadata (built into the
//! binary for the first-party plugins, cached on disk for the others) only; the engine is built
//! and a component deserialized and pre-instantiated on its first call.

pub mod bindings;
pub mod body_pieces;
pub mod cache;
mod call;
pub mod child_process;
pub mod codegen;
pub mod convert;
pub mod discovery;
pub mod engine;
pub mod error;
pub mod extension;
mod extension_v1;
pub mod grants;
pub mod guarded_fs;
pub mod history_prefix;
pub mod history_splice;
mod host;
pub mod http_client;
pub mod imports;
pub mod manifest;
pub mod meta;
pub mod path_guard;
pub mod plugin;
#[cfg(test)]
mod prefix_test_files;
pub mod provider;
pub mod provider_hooks;
mod register;
pub mod reload;
pub mod resources;
pub mod sandbox;
mod script_engine;
pub mod script_host;
pub mod session_context;
pub mod tool;
pub mod tool_arguments;
pub mod watch;
mod workspace_host;

pub use call::CallOptions;
pub use error::{CallError, LoadError};
pub use host::{HostOptions, PluginHost, PluginTools};
pub use register::import_fix;
pub use sandbox::Escalation;
