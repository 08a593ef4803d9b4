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

use std::path::{Path, PathBuf};

/// The MCP servers a session starts with.
#[derive(Debug, Clone, Default)]
pub struct McpSetup {
    /// The servers and the configuration's problems.
    pub config: McpConfig,
    /// The agent directory (`mcp.json`, `mcp.log`).
    pub agent_dir: PathBuf,
    /// `--no-mcp`: nothing is connected.
    pub off: bool,
}

impl McpSetup {
    /// The user's `<agent dir>/mcp.json` and, for a trusted project, its `.pi/mcp.json`
    /// (`.pith/mcp.json` when that exists).
    pub fn from_files(agent_dir: &Path, cwd: &Path, project_trusted: bool, off: bool) -> McpSetup {
        let project = project_trusted.then(|| project_file(cwd));
        let config = if off {
            McpConfig::default()
        } else {
            McpConfig::load(&agent_dir.join("mcp.json"), project.as_deref())
        };
        McpSetup {
            config,
            agent_dir: agent_dir.to_path_buf(),
            off,
        }
    }

    /// `<agent dir>/mcp.json`.
    pub fn user_file(&self) -> PathBuf {
        self.agent_dir.join("mcp.json")
    }
}

/// A project's MCP file: `.pith/mcp.json` when it exists, else pi's `.pi/mcp.json`.
pub fn project_file(cwd: &Path) -> PathBuf {
    let pith = cwd.join(".pith").join("mcp.json");
    if pith.exists() {
        pith
    } else {
        cwd.join(".pi").join("mcp.json")
    }
}
