//! pith's implementations of the imports every plugin may call. A capability that was not
//! granted answers with its typed `denied` error; nothing here can crash the runtime.

// pith:plugin@0.1.0
pub mod host;
pub mod http;
pub mod process;
pub mod search;
pub mod session;
pub mod tool_progress;
pub mod types;
pub mod ui;
// pith:plugin@0.2.0
pub mod cli_flags;
pub mod completion;
pub mod entries;
pub mod events_bus;
pub mod models;
pub mod script_host;
pub mod session_control;
pub mod session_read;
pub mod wake_ups;
