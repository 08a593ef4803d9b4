//! `searchTools()` and `describeNamespace()` over a script's callable tools (pi 1.5.2's
//! discovery globals), ranked with `tool_search`'s BM25.

use serde_json::{Value, json};

use super::catalog::Callable;
use super::declaration::to_identifier;
use crate::mcp::search::{Document, rank, schema_text};

/// `searchTools(query, {limit, namespace})`: `[{name, description}]`, best first.
pub fn search(callable: &[Callable], query: &str, limit: usize, namespace: Option<&str>) -> Value {
    let candidates: Vec<&Callable> = callable
        .iter()
        .filter(|tool| match namespace {
            None => true,
            Some(wanted) => tool.namespace.as_ref().is_some_and(|n| n.is_named(wanted)),
        })
        .collect();
    let documents: Vec<Document> = candidates
        .iter()
        .map(|tool| {
            let mut text = vec![tool.described()];
            schema_text(tool.tool.parameters(), &mut text);
            let namespace = tool
                .namespace
                .as_ref()
                .map(|n| {
                    let mut parts = vec![n.name.clone()];
                    parts.extend(n.description.clone());
                    parts.extend(n.instructions.clone());
                    parts.join(" ")
                })
                .unwrap_or_default();
            Document {
                name: tool.name().to_string(),
                text: text.join(" "),
                namespace,
            }
        })
        .collect();
    let found: Vec<Value> = rank(&documents, query, limit)
        .into_iter()
        .map(|i| json!({"name": to_identifier(candidates[i].name()), "description": candidates[i].sample()}))
        .collect();
    Value::Array(found)
}

/// `describeNamespace(name)`: `{name, description?, instructions?, tools}`, or none.
pub fn namespace(callable: &[Callable], wanted: &str) -> Option<Value> {
    let mut found = None;
    let mut tools = Vec::new();
    for tool in callable {
        let Some(namespace) = tool.namespace.as_ref().filter(|n| n.is_named(wanted)) else {
            continue;
        };
        found.get_or_insert(namespace);
        tools.push(Value::String(to_identifier(tool.name())));
    }
    let namespace = found?;
    let mut described = serde_json::Map::new();
    described.insert("name".into(), json!(namespace.name));
    if let Some(description) = &namespace.description {
        described.insert("description".into(), json!(description));
    }
    if let Some(instructions) = &namespace.instructions {
        described.insert("instructions".into(), json!(instructions));
    }
    described.insert("tools".into(), Value::Array(tools));
    Some(Value::Object(described))
}
