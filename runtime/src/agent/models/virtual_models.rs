//! The virtual models extensions register (pi's `registerVirtualModel`), at load or at run
//! time, and the extension that routes each.

use super::{ModelRegistry, replace_or_push};
use crate::agent::model::Model;

impl ModelRegistry {
    /// Adds (or replaces) a virtual model routed by the extension `plugin`: a later
    /// registration of the same model replaces an earlier one, and its router with it (pi's).
    pub(super) fn add_virtual(&mut self, plugin: &str, model: Model) {
        self.virtual_routers.insert(model.key(), plugin.to_string());
        replace_or_push(&mut self.virtual_models, model);
    }

    /// Removes the virtual model `provider/id` when `plugin` routes it (pi's
    /// `unregisterVirtualModel`); another extension's stays.
    pub(super) fn remove_virtual(&mut self, plugin: &str, provider: &str, id: &str) {
        let key = format!("{provider}/{id}");
        if self.virtual_routers.get(&key).map(String::as_str) != Some(plugin) {
            return;
        }
        self.virtual_routers.remove(&key);
        self.virtual_models.retain(|m| !m.is(provider, id));
    }

    /// The extension that routes the virtual model `provider/id`, if one is registered.
    pub fn router(&self, provider: &str, id: &str) -> Option<&str> {
        self.virtual_routers
            .get(&format!("{provider}/{id}"))
            .map(String::as_str)
    }
}
