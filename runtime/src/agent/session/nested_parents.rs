//! The parents of nested tool calls (pi's `parentToolCallId`: the calls a `codemode` script
//! makes), kept so an extension can ask which call made one (`session-read.tool-call-parent`),
//! also after the call ended: the last [`KEPT`] are remembered.

use std::collections::{HashMap, VecDeque};

/// How many nested calls are remembered.
pub const KEPT: usize = 4096;

/// The recent nested calls' parents.
#[derive(Debug, Default)]
pub struct NestedParents {
    order: VecDeque<String>,
    parents: HashMap<String, String>,
}

impl NestedParents {
    /// Records that `parent` made the call `id` (the oldest record goes past [`KEPT`]).
    pub fn record(&mut self, id: &str, parent: &str) {
        if self
            .parents
            .insert(id.to_string(), parent.to_string())
            .is_none()
        {
            self.order.push_back(id.to_string());
        }
        while self.order.len() > KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.parents.remove(&oldest);
            }
        }
    }

    /// The call that made `id`, if it is a remembered nested call.
    pub fn parent_of(&self, id: &str) -> Option<String> {
        self.parents.get(id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_records_go_first() {
        let mut parents = NestedParents::default();
        for n in 0..=KEPT {
            parents.record(&format!("c/{n}"), "c");
        }
        assert_eq!(parents.parent_of("c/0"), None);
        assert_eq!(parents.parent_of("c/1").as_deref(), Some("c"));
        assert_eq!(
            parents.parent_of(&format!("c/{KEPT}")).as_deref(),
            Some("c")
        );
        assert_eq!(parents.parent_of("c"), None);
    }
}
