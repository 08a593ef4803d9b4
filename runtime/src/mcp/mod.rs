//! The Model Context Protocol client: the MCP servers a pi user configured in `mcp.json`, or an
//! ACP client handed over in `session/new`, connected with the official SDK (`rmcp`) over stdio
//! or streamable HTTP, their tools offered to the model as pi 1.5.2 offers them. Every stdio
//! server runs under the session's kernel sandbox, as the shell does.
//!
//! - [`config`]: pi's `mcp.json` (the user's and a trusted project's), checked entry by entry.
//! - [`process`]: a stdio server's sandboxed process and its end.
//! - [`http`]: streamable HTTP over pith's HTTP client.
//! - [`client`]: one connection (handshake, tools, requests, cancellation).
//! - [`server`]: one server over its life (connect, reconnect, calls).
//! - [`hub`]: a session's servers, their tools' names and exposure, `tool_search`, `/mcp`.
//! - [`results`], [`resources`], [`search`], [`names`], [`log`]: pi's conversions, resource
//!   tools, ranking, names and log.

pub mod client;
pub mod config;
pub mod http;
pub mod hub;
pub mod log;
pub mod names;
pub mod process;
pub mod refusal;
pub mod resources;
pub mod results;
pub mod search;
pub mod server;

pub use config::{Exposure, McpConfig, ServerConfig, Transport};
pub use hub::{McpHub, McpTool, McpToolKind};

mod setup;
pub use setup::{McpSetup, project_file};
