//! What a `codemode` script reaches through the script engine: the [`ScriptHost`] a session
//! gives a script's call (see `script_engine.rs` for running one).

use super::session_context::BoxFuture;

pub use super::bindings::script_engine_world::exports::pith::plugin0_2_0::script_engine::{
    Ending, Script,
};
pub use super::bindings::script_engine_world::pith::plugin0_2_0::script_host::{
    CallKind, OutputKind, Settlement,
};

/// What a script reaches: the session's tools, the globals the host answers, and its output.
/// Implemented by the session; every method is host time for the engine's deadline.
pub trait ScriptHost: Send + Sync {
    /// Starts the call `id` (a tool's or a global's) with `arguments` (JSON).
    fn start_call(&self, kind: CallKind, id: u32, name: String, arguments: Option<String>);
    /// Waits until a started call ends; those that ended. Empty when none is running.
    fn wait_calls(&self) -> BoxFuture<Vec<Settlement>>;
    /// Adds an output item.
    fn output(&self, kind: OutputKind, data: String, mime_type: Option<String>);
}
