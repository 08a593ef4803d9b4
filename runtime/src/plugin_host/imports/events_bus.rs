//! `events-bus` (0.2): the bus extensions talk to each other on.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::events_bus;
use crate::plugin_host::sandbox::StoreState;

impl events_bus::Host for StoreState {
    async fn emit(&mut self, channel: String, data: String) {
        self.with_session(|s| s.emit(&channel, data));
    }

    async fn subscribe(&mut self, channel: String) {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.subscribe(&plugin, &channel, true));
    }

    async fn unsubscribe(&mut self, channel: String) {
        let plugin = self.spec.plugin_id.clone();
        self.with_session(|s| s.subscribe(&plugin, &channel, false));
    }
}
