//! The MCP servers an ACP client hands over in `session/new` and `session/load`: stdio servers
//! (which every agent must take) and streamable HTTP ones, connected as the user's `mcp.json`
//! servers are (under the sandbox, their tools shown directly). An SSE server is left out with
//! a notice, never a failed session; `"acp": {"mcpServers": "ignore"}` in settings leaves them
//! all out.

use agent_client_protocol::v1::schema as acp;

use crate::mcp::{Exposure, ServerConfig, Transport};

/// The servers to connect, and a notice for each left out.
pub fn servers(given: &[acp::McpServer], ignore: bool) -> (Vec<ServerConfig>, Vec<String>) {
    if ignore {
        let notices = if given.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "{} MCP server(s) from the editor left out: pith's settings say \"acp\": {{\"mcpServers\": \"ignore\"}}",
                given.len()
            )]
        };
        return (Vec::new(), notices);
    }
    let mut servers = Vec::new();
    let mut notices = Vec::new();
    for server in given {
        let (name, transport) = match server {
            acp::McpServer::Stdio(stdio) => (
                stdio.name.clone(),
                Transport::Stdio {
                    command: stdio.command.display().to_string(),
                    args: stdio.args.clone(),
                    env: stdio
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                    cwd: None,
                },
            ),
            acp::McpServer::Http(http) => (
                http.name.clone(),
                Transport::Http {
                    url: http.url.clone(),
                    headers: http
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                },
            ),
            acp::McpServer::Sse(sse) => {
                notices.push(format!(
                    "MCP server \"{}\" uses the legacy SSE transport, which pith does not take (stdio and streamable HTTP only): the session goes on without it",
                    sse.name
                ));
                continue;
            }
            #[allow(unreachable_patterns)]
            _ => {
                notices.push(
                    "An MCP server of a transport pith does not know was left out".to_string(),
                );
                continue;
            }
        };
        let mut config = ServerConfig::new(name, transport);
        config.exposure = Exposure::Direct;
        config.literal_values = true;
        servers.push(config);
    }
    (servers, notices)
}
