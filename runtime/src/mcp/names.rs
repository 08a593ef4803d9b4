//! The names the model calls MCP tools by, as pi 1.5.2 makes them: `mcp__<server>__<tool>` with
//! every character outside `[A-Za-z0-9_]` made `_`. A name longer than 64 characters, or one
//! that two tools would share, becomes its first 55 characters, `_` and 8 hex digits of the
//! SHA-256 of `server\0tool`: every tool of a clash gets the suffix, whatever the order. A
//! name, once given to a tool, stays that tool's for the process.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

/// The longest name providers accept.
const MAX_NAME: usize = 64;

/// pi's plain name for `tool` of `server`.
fn plain(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn hashed(plain: &str, server: &str, tool: &str) -> String {
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let head: String = plain.chars().take(55).collect();
    format!("{head}_{hex}")
}

/// The names handed out so far, and to whom.
#[derive(Debug, Default)]
pub struct ToolNames {
    owners: HashMap<String, (String, String)>,
}

impl ToolNames {
    /// Names for `tools` of `server`, in order.
    pub fn assign(&mut self, server: &str, tools: &[String]) -> Vec<String> {
        let plains: Vec<String> = tools.iter().map(|tool| plain(server, tool)).collect();
        let mut names = Vec::with_capacity(tools.len());
        for (tool, name) in tools.iter().zip(&plains) {
            let owner = (server.to_string(), tool.clone());
            let shared_here = plains.iter().filter(|p| *p == name).count() > 1;
            let taken = self.owners.get(name).is_some_and(|o| *o != owner) || names.contains(name);
            let chosen = if name.len() > MAX_NAME || shared_here || taken {
                hashed(name, server, tool)
            } else {
                name.clone()
            };
            self.owners.insert(chosen.clone(), owner);
            names.push(chosen);
        }
        names
    }
}

/// The namespace of a server in the model's list of servers (`mcp__` and the name, `-` as `_`).
pub fn namespace(server: &str) -> String {
    format!("mcp__{}", server.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_pi_gives_them() {
        let mut names = ToolNames::default();
        let tools: Vec<String> = [
            "dup-a",
            "dup_a",
            "dot.name",
            "a_very_long_tool_name_that_goes_past_the_sixty_four_character_limit",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            names.assign("fake", &tools),
            [
                "mcp__fake__dup_a_cb59d95e",
                "mcp__fake__dup_a_1220882d",
                "mcp__fake__dot_name",
                "mcp__fake__a_very_long_tool_name_that_goes_past_the_six_64a9a720",
            ]
        );
    }
}
