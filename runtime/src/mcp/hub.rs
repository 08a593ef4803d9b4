//! A session's MCP servers: started in the background with the session, their tools named,
//! exposed and searched as pi 1.5.2 does it, and their state told as `/mcp` tells it.
//!
//! Just over 600 lines: the hub's lifecycle, its tool list and pi's `mcp_servers` section read
//! the same server set and naming, and stay together; the resource tools are in `resources.rs`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::{Exposure, McpConfig};
use super::names::{ToolNames, namespace};
use super::search::{Document, rank, schema_text};
use super::server::{McpServer, ServerContext, Status};
use crate::content::{Content, ToolOutput};

/// pi's `tool_search` description.
const SEARCH_DESCRIPTION: &str = "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search`.";

/// The longest the first prompt waits for servers with `direct` tools.
pub const DIRECT_WAIT: Duration = Duration::from_secs(10);

/// What an MCP-side tool does.
#[derive(Clone)]
pub enum McpToolKind {
    /// A server's tool (its name on the server).
    Server(Arc<McpServer>, String),
    /// `tool_search`.
    Search,
    /// `list_mcp_resources`.
    ListResources,
    /// `list_mcp_resource_templates`.
    ListTemplates,
    /// `read_mcp_resource`.
    ReadResource,
}

/// A tool the MCP side offers the model.
#[derive(Clone)]
pub struct McpTool {
    /// The name the model calls.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its argument schema.
    pub parameters: Value,
    /// Where it is shown.
    pub exposure: Exposure,
    /// The server's annotations (`readOnlyHint`, …), for hosts.
    pub annotations: Option<Value>,
    /// What it does.
    pub kind: McpToolKind,
}

impl McpTool {
    /// The server that provides it (`None` for `tool_search` and the resource tools).
    pub fn server(&self) -> Option<&str> {
        match &self.kind {
            McpToolKind::Server(server, _) => Some(server.name()),
            _ => None,
        }
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.name).finish()
    }
}

/// pi's one-word state of a server (`get_tools`).
pub fn state_word(status: &Status) -> &'static str {
    match status {
        Status::Disabled => "disabled",
        Status::Starting => "connecting",
        Status::Connected => "connected",
        Status::Failed(_) => "failed",
        Status::Disconnected(_) => "disconnected",
        Status::NeedsSignIn => "needs-sign-in",
        Status::Closed => "closed",
    }
}

/// A session's servers.
pub struct McpHub {
    servers: Vec<Arc<McpServer>>,
    config_errors: Vec<String>,
    names: Mutex<ToolNames>,
    loaded: Mutex<BTreeSet<String>>,
    direct_waited: std::sync::atomic::AtomicBool,
    /// The user's `mcp.json` (named when none is configured).
    pub user_file: PathBuf,
    /// False with `--no-mcp` (`/mcp` is then no command).
    pub enabled: bool,
    /// `autoEnableCodemode` of `mcp.json` (true unless it says false).
    auto_enable_codemode: bool,
}

impl McpHub {
    /// No servers (only the configuration's problems, to report).
    pub fn idle(config_errors: Vec<String>) -> McpHub {
        McpHub {
            servers: Vec::new(),
            config_errors,
            names: Mutex::default(),
            loaded: Mutex::default(),
            direct_waited: true.into(),
            user_file: PathBuf::from("mcp.json"),
            enabled: true,
            auto_enable_codemode: true,
        }
    }

    /// The servers of `config`; the enabled ones start connecting now, in parallel.
    pub fn start(config: McpConfig, context: ServerContext, user_file: PathBuf) -> Arc<McpHub> {
        let context = Arc::new(context);
        let auto_enable_codemode = config.auto_enable_codemode != Some(false);
        let servers: Vec<Arc<McpServer>> = config
            .servers
            .into_iter()
            .map(|server| McpServer::new(server, context.clone()))
            .collect();
        for server in servers.iter().filter(|s| s.config.enabled) {
            let server = server.clone();
            tokio::spawn(async move {
                let _ = server.connect().await;
            });
        }
        Arc::new(McpHub {
            servers,
            config_errors: config.errors,
            names: Mutex::default(),
            loaded: Mutex::default(),
            direct_waited: false.into(),
            user_file,
            enabled: true,
            auto_enable_codemode,
        })
    }

    /// The servers, in configuration order.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// True when there is nothing configured (and no problem to report).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.config_errors.is_empty()
    }

    /// Waits until every enabled server's first attempt to connect has ended.
    pub async fn wait_settled(&self) {
        for server in &self.servers {
            server.wait_settled().await;
        }
    }

    /// Once per session, before the first prompt: waits up to [`DIRECT_WAIT`] for the servers
    /// whose configuration shows tools directly. `false` when some were still connecting.
    pub async fn wait_direct_once(&self) -> bool {
        if self
            .direct_waited
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return true;
        }
        let direct: Vec<&Arc<McpServer>> = self
            .servers
            .iter()
            .filter(|s| s.config.enabled && s.config.exposures().contains(&Exposure::Direct))
            .collect();
        let all = async {
            for server in direct {
                server.wait_settled().await;
            }
        };
        tokio::time::timeout(DIRECT_WAIT, all).await.is_ok()
    }

    /// Every tool the servers offer now (hidden ones left out), then `tool_search` and the
    /// resource tools when they apply.
    pub fn tools(&self) -> Vec<McpTool> {
        let mut tools = Vec::new();
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        for server in self.servers.iter().filter(|s| s.config.enabled) {
            let listed = server.tools();
            let raw: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
            let assigned = names.assign(server.name(), &raw);
            for (tool, name) in listed.into_iter().zip(assigned) {
                let exposure = server.config.exposure_of(&tool.name);
                if exposure == Exposure::Hidden {
                    continue;
                }
                let description = tool
                    .description
                    .as_deref()
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
                    .or_else(|| tool.title.clone())
                    .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
                    .unwrap_or_else(|| {
                        format!("MCP tool {} from server {}", tool.name, server.name())
                    });
                let mut parameters = Value::Object((*tool.input_schema).clone());
                if let Some(object) = parameters.as_object_mut() {
                    object.entry("type").or_insert_with(|| json!("object"));
                    object.entry("properties").or_insert_with(|| json!({}));
                }
                tools.push(McpTool {
                    name,
                    description,
                    parameters,
                    exposure,
                    annotations: tool
                        .annotations
                        .as_ref()
                        .and_then(|a| serde_json::to_value(a).ok()),
                    kind: McpToolKind::Server(server.clone(), tool.name.to_string()),
                });
            }
        }
        drop(names);
        if self.searchable_configured() {
            tools.push(McpTool {
                name: "tool_search".into(),
                description: SEARCH_DESCRIPTION.into(),
                parameters: json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string", "description": "Search query for deferred tools."},
                    "limit": {"type": "number", "description": "Maximum number of tools to return. Defaults to 8."},
                }}),
                exposure: Exposure::Direct,
                annotations: None,
                kind: McpToolKind::Search,
            });
        }
        tools.extend(self.resource_tools());
        tools
    }

    /// True when some enabled server's configuration makes tools findable with `tool_search`.
    fn searchable_configured(&self) -> bool {
        self.servers
            .iter()
            .any(|s| s.config.enabled && s.config.exposures().iter().any(|e| e.searchable()))
    }

    /// The tools shown to the model now: direct ones, and those `tool_search` loaded.
    pub fn active_tools(&self) -> Vec<McpTool> {
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.tools()
            .into_iter()
            .filter(|t| t.exposure == Exposure::Direct || loaded.contains(&t.name))
            .collect()
    }

    /// Marks tools as loaded (a resumed branch's record of earlier searches).
    pub fn mark_loaded(&self, names: impl IntoIterator<Item = String>) {
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(names);
    }

    /// Runs one of the MCP side's tools.
    pub async fn execute(
        &self,
        tool: &McpTool,
        arguments: &Value,
        cancel: &CancellationToken,
        updates: Option<mpsc::UnboundedSender<ToolOutput>>,
    ) -> ToolOutput {
        if !matches!(tool.kind, McpToolKind::Server(..)) {
            // A search or a resource tool sees every server: those still connecting are
            // waited for (as pi waits), not an abort.
            tokio::select! {
                _ = self.wait_settled() => {}
                _ = cancel.cancelled() => return ToolOutput {
                    details: Some(json!({})),
                    ..ToolOutput::error("MCP request aborted")
                },
            }
        }
        match &tool.kind {
            McpToolKind::Server(server, raw) => server.call(raw, arguments, cancel, updates).await,
            McpToolKind::Search => self.search(arguments),
            McpToolKind::ListResources => self.list_resources(arguments, false, cancel).await,
            McpToolKind::ListTemplates => self.list_resources(arguments, true, cancel).await,
            McpToolKind::ReadResource => self.read_resource(arguments, cancel).await,
        }
    }

    /// `tool_search {query, limit?}`.
    fn search(&self, arguments: &Value) -> ToolOutput {
        let failed = |text: &str| ToolOutput {
            details: Some(json!({})),
            ..ToolOutput::error(text)
        };
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        if query.is_empty() {
            return failed("query must not be empty");
        }
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => 8,
            Some(value) => match value.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
                _ => return failed("limit must be a positive integer"),
            },
        };
        let loaded = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let candidates: Vec<McpTool> = self
            .tools()
            .into_iter()
            .filter(|t| t.exposure.searchable() && !loaded.contains(&t.name))
            .collect();
        let documents: Vec<Document> = candidates
            .iter()
            .map(|tool| {
                let mut text = vec![tool.description.clone()];
                schema_text(&tool.parameters, &mut text);
                let namespace_text = match &tool.kind {
                    McpToolKind::Server(server, _) => {
                        let mut parts = vec![namespace(server.name())];
                        parts.extend(server.config.description.clone());
                        parts.extend(server.instructions());
                        parts.join(" ")
                    }
                    _ => String::new(),
                };
                Document {
                    name: tool.name.clone(),
                    text: text.join(" "),
                    namespace: namespace_text,
                }
            })
            .collect();
        let found: Vec<&McpTool> = rank(&documents, query, limit)
            .into_iter()
            .map(|i| &candidates[i])
            .collect();
        let names: Vec<String> = found.iter().map(|t| t.name.clone()).collect();
        self.mark_loaded(names.clone());
        let text = if found.is_empty() {
            "No matching tools found.".to_string()
        } else {
            let lines: Vec<String> = found
                .iter()
                .map(|t| {
                    let first = t.description.trim().lines().next().unwrap_or("");
                    format!("- {}: {first}", t.name)
                })
                .collect();
            format!(
                "Loaded {} tool{}. They are available from your next call:\n{}",
                found.len(),
                if found.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        };
        ToolOutput {
            content: vec![Content::text(text)],
            details: Some(json!({"loaded": names})),
            is_error: false,
            structured: None,
        }
    }

    /// The text of pi's `mcp_servers` section (the prompt frames it): the servers whose tools
    /// are not declared (found with `tool_search`), each with its description's (or
    /// instructions') first line, within 4 KB.
    pub fn prompt_section(&self) -> String {
        const BUDGET: usize = 4096;
        const SUMMARY_CHARS: usize = 250;
        let mut servers: Vec<&Arc<McpServer>> = self
            .servers
            .iter()
            .filter(|s| s.config.enabled && s.config.exposures().iter().any(|e| e.undeclared()))
            .collect();
        if servers.is_empty() {
            return String::new();
        }
        servers.sort_by(|a, b| a.name().cmp(b.name()));
        // How each server's tools are reached: from codemode scripts, else with tool_search.
        let reaches: Vec<&str> = servers
            .iter()
            .map(|s| {
                if s.config.exposures().contains(&Exposure::Codemode) {
                    "codemode"
                } else {
                    "tool_search"
                }
            })
            .collect();
        let mut intro = "MCP servers whose tools are not declared to you.".to_string();
        if reaches.contains(&"codemode") {
            intro.push_str(" Call the tools of `codemode` servers from codemode scripts.");
        }
        if reaches.contains(&"tool_search") {
            intro.push_str(" Load the tools of `tool_search` servers with `tool_search`.");
        }
        let heads: Vec<String> = servers
            .iter()
            .zip(&reaches)
            .map(|(s, reach)| format!("- {} ({reach})", namespace(s.name())))
            .collect();
        let omitted = |count: usize| {
            (count > 0).then(|| {
                format!(
                    "- … {count} more server{}; find their tools with searchTools()",
                    if count == 1 { "" } else { "s" }
                )
            })
        };
        // The intro, the first `kept` heads and the omission line, joined by line breaks.
        let size = |kept: usize| {
            let mut parts: Vec<&str> = vec![intro.as_str()];
            parts.extend(heads[..kept].iter().map(String::as_str));
            let omission = omitted(servers.len() - kept);
            parts.extend(omission.as_deref());
            parts.join("\n").chars().count()
        };
        let mut kept = servers.len();
        while kept > 0 && size(kept) > BUDGET {
            kept -= 1;
        }
        let room = BUDGET
            .saturating_sub(size(kept))
            .checked_div(kept)
            .map_or(0, |each| each.saturating_sub(2).min(SUMMARY_CHARS));
        // The configured description's first line, or the server's instructions' once connected.
        let summary = |s: &McpServer| {
            let text = s
                .config
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .or_else(|| s.instructions())
                .unwrap_or_default();
            text.split('\n').next().unwrap_or("").trim().to_string()
        };
        let mut lines = vec![intro.clone()];
        for (server, head) in servers[..kept].iter().zip(&heads) {
            let summary = if room > 0 {
                summary(server)
            } else {
                String::new()
            };
            let summary = if summary.chars().count() <= room {
                summary
            } else if room <= 1 {
                String::new()
            } else {
                let cut: String = summary.chars().take(room - 1).collect();
                format!("{}…", cut.trim_end())
            };
            lines.push(if summary.is_empty() {
                head.clone()
            } else {
                format!("{head}: {summary}")
            });
        }
        lines.extend(omitted(servers.len() - kept));
        lines.join("\n")
    }

    /// `/mcp`: one line per server, then the configuration's problems (pi's status text).
    pub fn status_text(&self) -> String {
        if self.is_empty() {
            return format!(
                "No MCP servers configured. Add them to {} or .pi/mcp.json.",
                self.user_file.display()
            );
        }
        let mut lines = Vec::new();
        for server in &self.servers {
            let exposure = server.config.exposure.as_str();
            let (state, error) = match server.status() {
                Status::Disabled => ("disabled".to_string(), None),
                Status::Starting => ("connecting".to_string(), None),
                Status::Connected => (format!("connected, {} tools", server.tools().len()), None),
                Status::Failed(error) => ("failed".to_string(), Some(error)),
                Status::Disconnected(error) => (
                    "disconnected, reconnects on next call".to_string(),
                    Some(error),
                ),
                Status::NeedsSignIn => (
                    "needs sign-in (put a token in its \"headers\")".to_string(),
                    None,
                ),
                Status::Closed => ("closed".to_string(), None),
            };
            lines.push(format!("{}: {state} ({exposure})", server.name()));
            if let Some(error) = error {
                lines.push(format!("    {}", error.replace('\n', "\n    ")));
            }
        }
        for error in &self.config_errors {
            lines.push(format!("config error: {error}"));
        }
        lines.join("\n")
    }

    /// After the start: pi's report of what needs attention, when something does.
    pub fn attention_report(&self) -> Option<String> {
        let mut lines: Vec<String> = self
            .config_errors
            .iter()
            .map(|e| format!("  config: {e}"))
            .collect();
        for server in &self.servers {
            match server.status() {
                Status::Failed(error) => lines.push(format!(
                    "  {}: failed: {}",
                    server.name(),
                    error.lines().next().unwrap_or("")
                )),
                Status::NeedsSignIn => lines.push(format!("  {}: needs sign-in", server.name())),
                _ => {}
            }
        }
        (!lines.is_empty()).then(|| {
            format!(
                "MCP servers need attention:\n{}\nRun /mcp to fix.",
                lines.join("\n")
            )
        })
    }

    /// True when an enabled server whose tools have `codemode` exposure is connected: pi turns
    /// the `codemode` tool on then (unless `autoEnableCodemode` is false).
    pub fn codemode_server_connected(&self) -> bool {
        self.auto_enable_codemode
            && self.servers.iter().any(|s| {
                s.config.enabled
                    && s.config.exposures().contains(&Exposure::Codemode)
                    && matches!(s.status(), super::server::Status::Connected)
            })
    }

    /// `/mcp reconnect <server>`.
    pub async fn reconnect(&self, name: Option<&str>) -> Result<String, String> {
        let candidates: Vec<&Arc<McpServer>> =
            self.servers.iter().filter(|s| s.config.enabled).collect();
        let server = match name {
            Some(name) => self
                .servers
                .iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| format!("No MCP server named \"{name}\"."))?,
            None => {
                let broken: Vec<&&Arc<McpServer>> = candidates
                    .iter()
                    .filter(|s| matches!(s.status(), Status::Failed(_) | Status::Disconnected(_)))
                    .collect();
                match (candidates.len(), broken.len()) {
                    (0, _) => return Err("No enabled MCP server to reconnect.".into()),
                    (1, _) => candidates[0],
                    (_, 1) => broken[0],
                    _ => {
                        return Err(format!(
                            "Name the server: /mcp reconnect <server> (one of {})",
                            candidates
                                .iter()
                                .map(|s| s.name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
            }
        };
        server.connect().await?;
        let mut parts = vec![
            "connected".to_string(),
            format!("{} tools", server.tools().len()),
        ];
        if server.has_resources() {
            parts.push("resources".into());
        }
        Ok(format!(
            "Reconnected to MCP server \"{}\" ({}).",
            server.name(),
            parts.join(" · ")
        ))
    }

    /// Closes every connection (the session ends).
    pub async fn shut_down(&self) {
        for server in &self.servers {
            server.shut_down().await;
        }
    }
}
