//! `pith:plugin/tool-progress`: partial results of a running tool call.

use crate::content::ToolOutput;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::ToolResult;
use crate::plugin_host::bindings::tool_world::pith::plugin0_1_0::tool_progress::Host;
use crate::plugin_host::sandbox::StoreState;

impl Host for StoreState {
    async fn report(&mut self, partial: ToolResult) {
        if let Some(sink) = &self.progress {
            // A closed receiver only means nobody listens any more.
            let _ = sink.send(ToolOutput::from_wit(partial, false));
        }
    }
}
