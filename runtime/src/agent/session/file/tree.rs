//! The session file as a tree (`get_tree`): every entry with its children, branches included,
//! and the labels set on them. A child module of `session_file`, for its private entries.

use std::collections::HashMap;

use serde_json::Value;

use super::SessionFile;
use super::lines::Lines;

impl SessionFile {
    /// The labels set on entries, by entry id (the last `label` entry for each wins; a null
    /// one clears it).
    fn labels(&self, lines: &Lines<'_>) -> HashMap<String, Value> {
        let mut labels: HashMap<String, Value> = HashMap::new();
        for entry in self.entries.iter().filter(|e| e.kind() == "label") {
            let mut body = lines.body(entry);
            if let Some(target) = body.get("targetId").and_then(Value::as_str) {
                let target = target.to_string();
                match body.remove("label") {
                    Some(label) if !label.is_null() => labels.insert(target, label),
                    _ => labels.remove(&target),
                };
            }
        }
        labels
    }

    /// The label of entry `id`, if it has one.
    pub fn label(&self, id: &str) -> Option<String> {
        self.labels(&self.lines())
            .get(id)
            .and_then(|label| label.as_str())
            .map(str::to_string)
    }

    /// `get_tree`: pi's tree of entries (`{entry, children, label?}` nodes, children oldest
    /// first; an entry whose parent is missing is a root).
    pub fn tree(&self) -> Vec<Value> {
        let lines = self.lines();
        let labels = self.labels(&lines);
        let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        for (position, entry) in self.entries.iter().enumerate() {
            let id = entry.id();
            match entry.parent() {
                Some(parent) if parent != id && self.index.contains_key(parent) => {
                    children.entry(parent).or_default().push(position)
                }
                _ => roots.push(position),
            }
        }
        let node = |position: usize| -> Value {
            let entry = &self.entries[position];
            let mut node = serde_json::Map::new();
            node.insert("entry".into(), lines.value(entry));
            node.insert("children".into(), Value::Array(Vec::new()));
            if let Some(label) = labels.get(entry.id()) {
                node.insert("label".into(), label.clone());
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
            if let Some(kids) = children.get(self.entries[position].id()) {
                stack.extend(kids.iter().copied());
            }
        }
        for position in order.into_iter().rev() {
            let mut value = node(position);
            if let Some(kids) = children.get(self.entries[position].id()) {
                let mut kids: Vec<usize> = kids.clone();
                kids.sort_by_key(|k| self.entries[*k].timestamp());
                value["children"] =
                    Value::Array(kids.iter().filter_map(|k| built.remove(k)).collect());
            }
            built.insert(position, value);
        }
        roots.iter().filter_map(|r| built.remove(r)).collect()
    }
}
