//! pith's implementations of the imports every plugin may call. A capability that was not
//! granted answers with its typed `denied` error; nothing here can crash the runtime.

pub mod host;
pub mod http;
pub mod process;
pub mod progress;
pub mod search;
pub mod session_access;
pub mod ui;
pub mod wake_ups;
