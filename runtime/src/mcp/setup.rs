//! Where a session's MCP servers come from and how they start: the user's `mcp.json`, a trusted
//! project's, and those an ACP client handed over; read again on `reload` (or when a file
//! changes), the servers then started anew only when the configuration changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::config::{McpConfig, ServerConfig};
use super::hub::McpHub;
use super::log::McpLog;
use super::server::ServerContext;
use crate::sandbox::SandboxPolicy;

/// The MCP servers a session starts with.
#[derive(Debug, Clone, Default)]
pub struct McpSetup {
    /// The servers and the configuration's problems.
    pub config: McpConfig,
    /// The agent directory (`mcp.json`, `mcp.log`).
    pub agent_dir: PathBuf,
    /// The trusted project's file, when the project is trusted.
    pub project_file: Option<PathBuf>,
    /// Servers from elsewhere (an ACP client's), kept across reloads; they replace files'
    /// servers of their names.
    pub given: Vec<ServerConfig>,
    /// `--no-mcp`: nothing is connected.
    pub off: bool,
}

impl McpSetup {
    /// The user's `<agent dir>/mcp.json` and, for a trusted project, its `.pi/mcp.json`
    /// (`.pith/mcp.json` when that exists).
    pub fn from_files(agent_dir: &Path, cwd: &Path, project_trusted: bool, off: bool) -> McpSetup {
        let mut setup = McpSetup {
            config: McpConfig::default(),
            agent_dir: agent_dir.to_path_buf(),
            project_file: project_trusted.then(|| project_file(cwd)),
            given: Vec::new(),
            off,
        };
        setup.config = setup.read();
        setup
    }

    /// Adds servers handed over by a client (they replace the files' of their names).
    pub fn give(&mut self, servers: Vec<ServerConfig>) {
        self.given.extend(servers);
        self.config = self.read();
    }

    /// The configuration as the files say now, with the given servers.
    fn read(&self) -> McpConfig {
        if self.off {
            return McpConfig::default();
        }
        let mut config = McpConfig::load(&self.user_file(), self.project_file.as_deref());
        config
            .servers
            .retain(|s| !self.given.iter().any(|g| g.name == s.name));
        config.servers.extend(self.given.iter().cloned());
        config
    }

    /// The same setup with the files read again; `None` when nothing changed.
    pub fn reread(&self) -> Option<McpSetup> {
        let config = self.read();
        (config != self.config).then(|| McpSetup {
            config,
            ..self.clone()
        })
    }

    /// `<agent dir>/mcp.json`.
    pub fn user_file(&self) -> PathBuf {
        self.agent_dir.join("mcp.json")
    }

    /// The files a watcher looks at.
    pub fn files(&self) -> Vec<PathBuf> {
        std::iter::once(self.user_file())
            .chain(self.project_file.clone())
            .collect()
    }

    /// Starts the servers (in the background) for a session in `cwd` under `policy`.
    pub fn start(&self, cwd: &Path, policy: Arc<SandboxPolicy>) -> Arc<McpHub> {
        if self.off || self.config.servers.is_empty() {
            let mut hub = McpHub::idle(self.config.errors.clone());
            hub.user_file = self.user_file();
            hub.enabled = !self.off;
            return Arc::new(hub);
        }
        let context = ServerContext {
            cwd: cwd.to_path_buf(),
            policy,
            log: Arc::new(McpLog::at(self.agent_dir.join("mcp.log"))),
            user_file: self.user_file(),
        };
        McpHub::start(self.config.clone(), context, self.user_file())
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
