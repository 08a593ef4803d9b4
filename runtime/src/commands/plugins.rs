//! `pith plugins`: each plugin with its kinds, version, source and granted capabilities.

use std::process::ExitCode;

use serde_json::Value;

use crate::plugin_host::PluginHost;
use crate::plugin_host::grants::WorkspaceAccess;

/// Prints the list.
pub fn print(host: &PluginHost, as_json: bool) -> ExitCode {
    if as_json {
        println!("{}", Value::Array(host.describe_plugins()));
        return ExitCode::SUCCESS;
    }
    for plugin in host.plugins().iter() {
        let caps = &plugin.capabilities;
        let mut granted = Vec::new();
        match caps.workspace {
            WorkspaceAccess::None => {}
            WorkspaceAccess::Read => granted.push("workspace:read".to_string()),
            WorkspaceAccess::Write => granted.push("workspace:write".to_string()),
        }
        granted.extend(caps.http.iter().map(|p| format!("http:{}", p.as_str())));
        granted.extend(caps.config.iter().map(|k| format!("config:{k}")));
        if caps.process {
            granted.push("process".into());
        }
        let kinds: Vec<&str> = plugin.manifest.kinds.iter().map(|k| k.as_str()).collect();
        println!(
            "{} {} [{}] {}\n    grants: {}",
            plugin.manifest.id,
            plugin.manifest.version,
            kinds.join(","),
            plugin.path,
            if granted.is_empty() {
                "none".to_string()
            } else {
                granted.join(" ")
            }
        );
    }
    ExitCode::SUCCESS
}
