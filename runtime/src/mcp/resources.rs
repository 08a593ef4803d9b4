//! pi 1.5.2's resource tools: `list_mcp_resources`, `list_mcp_resource_templates` and
//! `read_mcp_resource`, offered once a connected server has resources, shown as widely as the
//! widest of those servers.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::config::Exposure;
use super::hub::{McpHub, McpTool, McpToolKind};
use super::results::{limit, resource_blocks};
use super::server::{McpServer, Status};
use crate::content::{Content, ToolOutput};

const LIST_DESCRIPTION: &str = "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to language models, such as files, database schemas, or application-specific information. Prefer resources over web search when possible.";
const TEMPLATES_DESCRIPTION: &str = "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share data that takes parameters and provides context to language models, such as files, database schemas, or application-specific information. Prefer resource templates over web search when possible.";
const READ_DESCRIPTION: &str =
    "Read a specific resource from an MCP server given the server name and resource URI.";

fn list_parameters() -> Value {
    json!({"type": "object", "properties": {
        "server": {"type": "string", "description": "MCP server name. Omit to list every server with resources."},
        "cursor": {"type": "string", "description": "Opaque cursor from a previous call with the same server; omit for the first page."},
    }, "additionalProperties": false})
}

fn read_parameters() -> Value {
    json!({"type": "object", "properties": {
        "server": {"type": "string", "description": "MCP server name exactly as configured. Must match the 'server' field returned by list_mcp_resources."},
        "uri": {"type": "string", "description": "Resource URI to read. Must be one of the URIs returned by list_mcp_resources."},
    }, "required": ["server", "uri"], "additionalProperties": false})
}

/// The servers with resources now (connected, enabled, not hidden), by name.
fn resource_servers(hub: &McpHub) -> Vec<Arc<McpServer>> {
    let mut servers: Vec<Arc<McpServer>> = hub
        .servers()
        .iter()
        .filter(|s| {
            s.config.enabled
                && s.config.exposure != Exposure::Hidden
                && s.has_resources()
                && s.status() == Status::Connected
        })
        .cloned()
        .collect();
    servers.sort_by(|a, b| a.name().cmp(b.name()));
    servers
}

/// The three tools, when some server has resources.
pub fn tools(hub: &McpHub) -> Vec<McpTool> {
    let servers = resource_servers(hub);
    if servers.is_empty() {
        return Vec::new();
    }
    let rank = |e: Exposure| match e {
        Exposure::Direct => 3,
        Exposure::Codemode => 2,
        Exposure::Deferred => 1,
        Exposure::Hidden => 0,
    };
    let exposure = servers
        .iter()
        .map(|s| s.config.exposure)
        .max_by_key(|e| rank(*e))
        .unwrap_or(Exposure::Deferred);
    let annotations = Some(json!({"readOnlyHint": true}));
    [
        (
            "list_mcp_resources",
            LIST_DESCRIPTION,
            list_parameters(),
            McpToolKind::ListResources,
        ),
        (
            "list_mcp_resource_templates",
            TEMPLATES_DESCRIPTION,
            list_parameters(),
            McpToolKind::ListTemplates,
        ),
        (
            "read_mcp_resource",
            READ_DESCRIPTION,
            read_parameters(),
            McpToolKind::ReadResource,
        ),
    ]
    .into_iter()
    .map(|(name, description, parameters, kind)| McpTool {
        name: name.into(),
        description: description.into(),
        parameters,
        exposure,
        annotations: annotations.clone(),
        kind,
    })
    .collect()
}

/// pi's text for a server without resources, naming those that have them.
fn no_resources(name: &str, servers: &[Arc<McpServer>]) -> String {
    let names: Vec<&str> = servers.iter().map(|s| s.name()).collect();
    format!(
        "MCP server \"{name}\" has no resources. Servers with resources: {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )
}

fn failed(text: impl Into<String>) -> ToolOutput {
    ToolOutput {
        details: Some(json!({})),
        ..ToolOutput::error(text)
    }
}

/// A string argument, trimmed; empty is absent.
fn argument(arguments: &Value, key: &str) -> Result<Option<String>, String> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// A listed item as pi shows it: with its server, without `_meta` and icons, named.
fn item(server: &str, mut value: Value) -> Option<Value> {
    let object = value.as_object_mut()?;
    object.remove("_meta");
    object.remove("icons");
    if object
        .get("uri")
        .and_then(Value::as_str)
        .is_some_and(|u| u.starts_with("ui://"))
        || object
            .get("mimeType")
            .and_then(Value::as_str)
            .is_some_and(|m| m.contains(";profile=mcp-app"))
    {
        return None;
    }
    let mut ordered = Map::new();
    ordered.insert("server".into(), json!(server));
    if !object.contains_key("name") {
        let uri = object.get("uri").cloned().unwrap_or(Value::Null);
        object.insert("name".into(), uri);
    }
    ordered.extend(std::mem::take(object));
    Some(Value::Object(ordered))
}

fn output(payload: Value, server: &str, tool: &str) -> ToolOutput {
    let text = payload.to_string();
    let mut details = json!({"server": server, "tool": tool});
    let content = limit(vec![Content::text(text)], &mut details);
    ToolOutput {
        content,
        details: Some(details),
        is_error: false,
        structured: Some(payload),
    }
}

/// `list_mcp_resources` / `list_mcp_resource_templates`.
pub async fn list(
    hub: &McpHub,
    arguments: &Value,
    templates: bool,
    cancel: &CancellationToken,
) -> ToolOutput {
    let (key, tool) = if templates {
        ("resourceTemplates", "list_mcp_resource_templates")
    } else {
        ("resources", "list_mcp_resources")
    };
    let (server, cursor) = match (argument(arguments, "server"), argument(arguments, "cursor")) {
        (Ok(server), Ok(cursor)) => (server, cursor),
        (Err(text), _) | (_, Err(text)) => return failed(text),
    };
    if cursor.is_some() && server.is_none() {
        return failed("cursor can only be used when a server is specified");
    }
    let servers = resource_servers(hub);
    let page = |server: Arc<McpServer>, cursor: Option<String>| async move {
        let connection = server.resources_connection().await?;
        connection
            .list_resources(templates, cursor, server.config.timeout)
            .await
            .or_else(|err| match err {
                super::client::RequestError::Server(text)
                    if templates && text.contains("not found") =>
                {
                    Ok(json!({key: []}))
                }
                other => Err(other.to_string()),
            })
    };
    let work = async {
        if let Some(name) = &server {
            let Some(found) = servers.iter().find(|s| s.name() == name) else {
                return failed(no_resources(name, &servers));
            };
            return match page(found.clone(), cursor).await {
                Err(text) => failed(text),
                Ok(listed) => {
                    let items: Vec<Value> = listed
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|v| item(name, v.clone()))
                        .collect();
                    let mut payload = json!({"server": name, key: items});
                    if let Some(next) = listed.get("nextCursor").filter(|v| !v.is_null()) {
                        payload["nextCursor"] = next.clone();
                    }
                    output(payload, name, tool)
                }
            };
        }
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for found in &servers {
            let mut cursor = None;
            loop {
                match page(found.clone(), cursor.take()).await {
                    Err(text) => {
                        errors.push(json!({"server": found.name(), "error": text}));
                        break;
                    }
                    Ok(listed) => {
                        items.extend(
                            listed
                                .get(key)
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter_map(|v| item(found.name(), v.clone())),
                        );
                        match listed.get("nextCursor").and_then(Value::as_str) {
                            Some(next) => cursor = Some(next.to_string()),
                            None => break,
                        }
                    }
                }
            }
        }
        let mut payload = json!({key: items});
        if !errors.is_empty() {
            payload["errors"] = json!(errors);
        }
        output(payload, "", tool)
    };
    tokio::select! {
        out = work => out,
        _ = cancel.cancelled() => failed("MCP request aborted"),
    }
}

/// `read_mcp_resource {server, uri}`.
pub async fn read(hub: &McpHub, arguments: &Value, cancel: &CancellationToken) -> ToolOutput {
    let (server, uri) = match (argument(arguments, "server"), argument(arguments, "uri")) {
        (Ok(Some(server)), Ok(Some(uri))) => (server, uri),
        (Err(text), _) | (_, Err(text)) => return failed(text),
        (Ok(None), _) => return failed("server must be provided"),
        (_, Ok(None)) => return failed("uri must be provided"),
    };
    let servers = resource_servers(hub);
    let Some(found) = servers.iter().find(|s| s.name() == server).cloned() else {
        return failed(no_resources(&server, &servers));
    };
    let work = async {
        let connection = found.resources_connection().await?;
        connection
            .read_resource(&uri, found.config.timeout)
            .await
            .map_err(|err| err.to_string())
    };
    let read = tokio::select! {
        read = work => read,
        _ = cancel.cancelled() => Err("MCP request aborted".to_string()),
    };
    let result = match read {
        Ok(result) => result,
        Err(text) => return failed(text),
    };
    let contents: Vec<Value> = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut content = Vec::new();
    for entry in &contents {
        if contents.len() > 1 {
            let each = entry.get("uri").and_then(Value::as_str).unwrap_or("");
            content.push(Content::text(format!("{each}:")));
        }
        content.extend(resource_blocks(entry));
    }
    if content.is_empty() {
        content.push(Content::text(format!("Resource {uri} is empty.")));
    }
    let mut details = json!({"server": server, "tool": "read_mcp_resource"});
    let content = limit(content, &mut details);
    ToolOutput {
        content,
        details: Some(details),
        is_error: false,
        structured: Some(json!({"server": server, "uri": uri, "contents": contents})),
    }
}

impl McpHub {
    /// The resource tools this hub's servers call for (see [`tools`]).
    pub(super) fn resource_tools(&self) -> Vec<McpTool> {
        tools(self)
    }

    /// `list_mcp_resources` (or the templates, with `templates`; see [`list`]).
    pub(super) async fn list_resources(
        &self,
        arguments: &Value,
        templates: bool,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        list(self, arguments, templates, cancel).await
    }

    /// `read_mcp_resource` (see [`read`]).
    pub(super) async fn read_resource(
        &self,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        read(self, arguments, cancel).await
    }
}
