//! The engine: one agent session and everything it runs on, in rooms that say what they hold.
//!
//! - [`conversation`]: the messages, the system prompt and its record, compaction.
//! - [`session`]: a session's state, its pi-format file and tree, its queues and every command
//!   a front-end gives it (the typed seam RPC and ACP share).
//! - [`run`]: one run of the agent loop: the provider request, the streamed answer, tool calls,
//!   their output bounds and timeouts, approvals, retry and overflow recovery.
//! - [`tools`]: the session's tool set (plugin, extension, MCP and host tools).
//! - [`extensions`]: the session's extensions, their hooks and dialogs.
//! - [`models`]: the model registry, pi's catalog, keys and credentials.
//! - [`event`] / [`events`]: what the engine tells its front-end.

pub mod conversation;
pub mod event;
pub mod events;
pub mod extensions;
pub mod models;
pub mod run;
pub mod session;
pub mod tools;
pub use crate::model;
