//! `store()`/`load()` across scripts: each successful script's writes are a `codemode-store`
//! custom entry (`{set, delete}`), so a branch sees the values written on its own path (pi's).

use serde_json::{Map, Value, json};

use crate::agent::event::SessionEvent;
use crate::agent::session::shared::Shared;

/// The custom entry type of a script's writes.
pub const ENTRY_TYPE: &str = "codemode-store";

/// The values on the session's branch, applied from the root: key → value.
pub fn read(shared: &Shared) -> Map<String, Value> {
    let state = shared.state();
    let mut store = Map::new();
    for entry in state.branch_entries() {
        if entry.kind() != "custom" {
            continue;
        }
        let body = state.entry_body(entry);
        if body.get("customType").and_then(Value::as_str) != Some(ENTRY_TYPE) {
            continue;
        }
        let Some(data) = body.get("data") else {
            continue;
        };
        let (Some(set), Some(deleted)) = (
            data.get("set").and_then(Value::as_object),
            data.get("delete").and_then(Value::as_array),
        ) else {
            continue;
        };
        if !deleted.iter().all(Value::is_string) {
            continue;
        }
        for key in deleted.iter().filter_map(Value::as_str) {
            store.remove(key);
        }
        for (key, value) in set {
            store.insert(key.clone(), value.clone());
        }
    }
    store
}

/// The store as the engine gets it: `{key: json-text}`.
pub fn engine_json(store: &Map<String, Value>) -> String {
    let texts: Map<String, Value> = store
        .iter()
        .map(|(key, value)| (key.clone(), Value::String(value.to_string())))
        .collect();
    Value::Object(texts).to_string()
}

/// Appends a successful script's writes (the engine's `[[key, json] | [key]]`) as a
/// `codemode-store` entry; nothing when it wrote nothing.
pub fn append_writes(shared: &Shared, writes: &str) {
    let Ok(Value::Array(writes)) = serde_json::from_str::<Value>(writes) else {
        return;
    };
    let mut set = Map::new();
    let mut deleted = Vec::new();
    for write in writes {
        let Value::Array(pair) = write else { continue };
        let Some(key) = pair.first().and_then(Value::as_str) else {
            continue;
        };
        match pair.get(1).and_then(Value::as_str) {
            Some(json) => {
                if let Ok(value) = serde_json::from_str::<Value>(json) {
                    set.insert(key.to_string(), value);
                }
            }
            None => deleted.push(Value::String(key.to_string())),
        }
    }
    if set.is_empty() && deleted.is_empty() {
        return;
    }
    let mut fields = Map::new();
    fields.insert("customType".into(), json!(ENTRY_TYPE));
    fields.insert("data".into(), json!({"set": set, "delete": deleted}));
    let entry = shared.state().append_entry("custom", fields);
    shared.emit(&SessionEvent::EntryAppended { entry });
}
