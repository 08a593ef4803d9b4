//! `cli-flags` (0.2): the values of an extension's command-line flags.
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::cli_flags;
use crate::plugin_host::meta::FlagValue;
use crate::plugin_host::sandbox::StoreState;

impl cli_flags::Host for StoreState {
    async fn value(&mut self, name: String) -> Option<cli_flags::FlagValue> {
        let plugin = self.spec.plugin_id.clone();
        match self.with_session(|s| s.flag(&plugin, &name)).flatten()? {
            FlagValue::Boolean(on) => Some(cli_flags::FlagValue::Boolean(on)),
            FlagValue::Text(text) => Some(cli_flags::FlagValue::Text(text)),
        }
    }
}
