//! What extensions add to their session while it runs: tools registered at run time (pi's
//! `registerTool` after load), the messages of the events bus between extensions (pi's
//! `pi.events`), and the calls whose tool asked the run to end (pi's `terminate`).

use super::{Extensions, hooks, lock};
use crate::plugin_host::tool::ToolSpec;

/// The event kind prefix of a bus channel's messages.
pub(super) const BUS: &str = "bus:";

impl Extensions {
    /// Registers `spec` as a tool of the extension `plugin` (replacing one of its name).
    pub fn register_tool(&self, plugin: &str, spec: ToolSpec) -> bool {
        let Some(slot) = self.slot_of(plugin) else {
            return false;
        };
        let mut tools = lock(&slot.dynamic_tools);
        tools.retain(|tool| tool.name != spec.name);
        tools.push(spec);
        true
    }

    /// Removes the run-time tool `name` of the extension `plugin`; false when it had none.
    pub fn unregister_tool(&self, plugin: &str, name: &str) -> bool {
        self.slot_of(plugin).is_some_and(|slot| {
            let mut tools = lock(&slot.dynamic_tools);
            let before = tools.len();
            tools.retain(|tool| tool.name != name);
            tools.len() != before
        })
    }

    /// The extension `plugin` hears (or with `hear` false, stops hearing) `channel`.
    pub fn subscribe(&self, plugin: &str, channel: &str, hear: bool) {
        if let Some(slot) = self.slot_of(plugin) {
            let mut channels = lock(&slot.channels);
            if hear {
                channels.insert(channel.to_string());
            } else {
                channels.remove(channel);
            }
        }
    }

    /// Sends `data` on `channel` to every extension hearing it (the sender too, as pi's
    /// emitter calls every listener), in order with the observed events.
    pub fn emit_on_bus(&self, channel: &str, data: String) {
        let kind = format!("{BUS}{channel}");
        self.observe_typed(&kind, || hooks::Event::Bus((channel.to_string(), data)));
    }

    /// True when every call of the batch `call_ids` asked the run to end (each is forgotten).
    pub fn batch_terminates(&self, call_ids: &[&str]) -> bool {
        let mut terminating = lock(&self.terminating);
        let all = !call_ids.is_empty() && call_ids.iter().all(|id| terminating.contains(*id));
        for id in call_ids {
            terminating.remove(*id);
        }
        all
    }

    fn slot_of(&self, plugin: &str) -> Option<std::sync::Arc<super::Slot>> {
        self.slots()
            .iter()
            .find(|slot| slot.plugin.manifest.id == plugin)
            .cloned()
    }
}
