//! The session's tool set as a host sees and changes it: `get_tools` lists every tool the
//! session could offer the model, with where it comes from and whether it is active;
//! `set_active_tools` chooses the active ones by name (from the next turn on, which records the
//! change as pi 1.5's system-message update).

use super::answers::{ActiveTools, McpToolInfo, ToolInfo, ToolKind, ToolList};
use super::{Session, SessionError};
use crate::agent::tools::{SessionTool, ToolSelection, session_tools};

impl Session {
    /// `get_tools`: `{"tools": [{name, description, parameters, kind, plugin, active}]}` in the
    /// order the model sees them; `kind` is `plugin`, `extension` or `host`, `plugin` the id of
    /// the plugin that provides it (null for a host tool).
    pub fn tools(&self) -> ToolList {
        let shared = self.shared();
        let selection = shared.state().tools.clone();
        let active_mcp: Vec<String> = shared
            .mcp()
            .active_tools()
            .into_iter()
            .filter(|t| selection.allows_mcp(&t.name))
            .map(|t| t.name)
            .collect();
        let codemode_active = shared
            .tools_of(&shared.host.tools())
            .iter()
            .any(|t| matches!(t, SessionTool::Codemode(_)));
        let tools = self
            .available_tools()
            .iter()
            .map(|tool| {
                let (kind, plugin, active) = match tool {
                    SessionTool::Plugin(spec, plugin) => (
                        ToolKind::Plugin,
                        Some(plugin.manifest.id.clone()),
                        selection.allows(&spec.name),
                    ),
                    SessionTool::Extension(spec, plugin) => (
                        ToolKind::Extension,
                        Some(plugin.clone()),
                        selection.allows(&spec.name),
                    ),
                    SessionTool::Host(_) => (ToolKind::Host, None, true),
                    SessionTool::Mcp(mcp) => (ToolKind::Mcp, None, active_mcp.contains(&mcp.name)),
                    SessionTool::Codemode(_) => {
                        (ToolKind::Plugin, Some("codemode".into()), codemode_active)
                    }
                };
                let mcp = match tool {
                    SessionTool::Mcp(mcp) => {
                        let server = match &mcp.kind {
                            crate::mcp::McpToolKind::Server(server, raw) => {
                                Some((raw.clone(), crate::mcp::hub::state_word(&server.status())))
                            }
                            _ => None,
                        };
                        Some(McpToolInfo {
                            server: mcp.server().map(str::to_string),
                            exposure: mcp.exposure.as_str(),
                            server_tool: server.as_ref().map(|(raw, _)| raw.clone()),
                            state: server.map(|(_, state)| state),
                            annotations: mcp.annotations.clone(),
                        })
                    }
                    _ => None,
                };
                ToolInfo {
                    name: tool.name().to_string(),
                    description: tool.description().to_string(),
                    parameters: tool.parameters().clone(),
                    kind,
                    plugin,
                    active,
                    mcp,
                }
            })
            .collect();
        ToolList { tools }
    }

    /// `set_active_tools {names}`: exactly these plugin and extension tools are active from the
    /// next turn on (host tools always are: `set_host_tools` chooses them). An unknown name is
    /// an error naming it and the tools there are; nothing changes then.
    pub fn set_active_tools(&self, names: Vec<String>) -> Result<ActiveTools, SessionError> {
        let available = self.available_tools();
        let known = |name: &str| {
            available
                .iter()
                .any(|t| t.name() == name && !matches!(t, SessionTool::Host(_)))
        };
        let unknown: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| !known(n))
            .collect();
        if !unknown.is_empty() {
            let there: Vec<&str> = available
                .iter()
                .filter(|t| !matches!(t, SessionTool::Host(_)))
                .map(SessionTool::name)
                .collect();
            return Err(SessionError::UnknownTools {
                unknown: unknown.into_iter().map(str::to_string).collect(),
                available: there.into_iter().map(str::to_string).collect(),
            });
        }
        self.shared().state().tools = ToolSelection {
            only: Some(names.clone()),
            ..ToolSelection::default()
        };
        Ok(ActiveTools {
            active_tools: names,
        })
    }

    /// Every tool the session could offer, active or not.
    fn available_tools(&self) -> Vec<SessionTool> {
        let shared = self.shared();
        let every = ToolSelection {
            only: Some(vec!["*".into()]),
            ..ToolSelection::default()
        };
        let host_tools = shared.state().host_tools.clone();
        let mut tools = session_tools(
            &shared.host.tools(),
            &every,
            shared.extensions.tools(),
            shared.mcp().tools(),
            &host_tools,
        );
        // `codemode`, when the engine is there and no extension replaced it.
        if shared.host.script_engine().is_some()
            && !tools
                .iter()
                .any(|t| t.name() == crate::agent::tools::CODEMODE)
        {
            use crate::agent::tools::codemode::catalog;
            let settings = catalog::CodemodeSettings::from_settings(&shared.host.settings());
            let callable = catalog::callable(&tools, Vec::new(), &catalog::guidelines_of);
            tools.push(SessionTool::Codemode(catalog::definition(
                &callable, &settings,
            )));
        }
        tools
    }
}
