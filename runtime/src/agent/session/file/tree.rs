//! The session file as a tree (`get_tree`): every entry with its children, branches included,
//! and the labels set on them. A child module of `session_file`, for its private entries.

use std::collections::HashMap;

use serde_json::Value;

use super::{SessionFile, entry_id, timestamp_of};

impl SessionFile {
    /// The labels set on entries, by entry id (the last `label` entry for each wins; a null
    /// one clears it).
    fn labels(&self) -> HashMap<&str, &Value> {
        let mut labels: HashMap<&str, &Value> = HashMap::new();
        for entry in &self.entries {
            if entry.get("type").and_then(Value::as_str) == Some("label")
                && let Some(target) = entry.get("targetId").and_then(Value::as_str)
            {
                match entry.get("label") {
                    Some(label) if !label.is_null() => labels.insert(target, label),
                    _ => labels.remove(target),
                };
            }
        }
        labels
    }

    /// The label of entry `id`, if it has one.
    pub fn label(&self, id: &str) -> Option<String> {
        self.labels()
            .get(id)
            .and_then(|label| label.as_str())
            .map(str::to_string)
    }

    /// `get_tree`: pi's tree of entries (`{entry, children, label?}` nodes, children oldest
    /// first; an entry whose parent is missing is a root).
    pub fn tree(&self) -> Vec<Value> {
        let labels = self.labels();
        let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        for (position, entry) in self.entries.iter().enumerate() {
            let id = entry_id(entry).unwrap_or("");
            match entry.get("parentId").and_then(Value::as_str) {
                Some(parent) if parent != id && self.index.contains_key(parent) => {
                    children.entry(parent).or_default().push(position)
                }
                _ => roots.push(position),
            }
        }
        let node = |position: usize| -> Value {
            let entry = &self.entries[position];
            let mut node = serde_json::Map::new();
            node.insert("entry".into(), Value::Object(entry.clone()));
            node.insert("children".into(), Value::Array(Vec::new()));
            if let Some(label) = entry_id(entry).and_then(|id| labels.get(id)) {
                node.insert("label".into(), (*label).clone());
            }
            Value::Object(node)
        };
        // Built bottom-up without recursion (deep sessions must not overflow the stack).
        let mut built: HashMap<usize, Value> = HashMap::new();
        let mut order: Vec<usize> = Vec::new();
        let mut stack: Vec<usize> = roots.clone();
        // A damaged file can link entries in a cycle (duplicate ids): each is placed once.
        let mut placed = std::collections::HashSet::new();
        while let Some(position) = stack.pop() {
            if !placed.insert(position) {
                continue;
            }
            order.push(position);
            if let Some(kids) = entry_id(&self.entries[position]).and_then(|id| children.get(id)) {
                stack.extend(kids.iter().copied());
            }
        }
        for position in order.into_iter().rev() {
            let mut value = node(position);
            if let Some(kids) = entry_id(&self.entries[position]).and_then(|id| children.get(id)) {
                let mut kids: Vec<usize> = kids.clone();
                kids.sort_by_key(|k| timestamp_of(&self.entries[*k]));
                value["children"] =
                    Value::Array(kids.iter().filter_map(|k| built.remove(k)).collect());
            }
            built.insert(position, value);
        }
        roots.iter().filter_map(|r| built.remove(r)).collect()
    }
}
