//! `pith:plugin/script-host`: what a codemode script reaches, handed to the session's
//! [`ScriptHost`](crate::plugin_host::script_host::ScriptHost). A store without one (any
//! plugin but the script engine run for a script) traps.

use crate::plugin_host::bindings::script_engine_world::pith::plugin0_2_0::script_host::{
    CallKind, Host, OutputKind, Settlement,
};
use crate::plugin_host::sandbox::StoreState;
use crate::plugin_host::script_host::ScriptHost;

impl StoreState {
    fn script(&self) -> wasmtime::Result<std::sync::Arc<dyn ScriptHost>> {
        self.script_host.clone().ok_or_else(|| {
            wasmtime::Error::msg("the script host is for pith's codemode engine only")
        })
    }
}

impl Host for StoreState {
    async fn start_call(
        &mut self,
        kind: CallKind,
        id: u32,
        name: String,
        arguments: Option<String>,
    ) -> wasmtime::Result<()> {
        let host = self.script()?;
        let _host_time = self.clock.enter_host();
        host.start_call(kind, id, name, arguments);
        Ok(())
    }

    async fn wait_calls(&mut self) -> wasmtime::Result<Vec<Settlement>> {
        let host = self.script()?;
        let _host_time = self.clock.enter_host();
        Ok(host.wait_calls().await)
    }

    async fn output(
        &mut self,
        kind: OutputKind,
        data: String,
        mime_type: Option<String>,
    ) -> wasmtime::Result<()> {
        let host = self.script()?;
        let _host_time = self.clock.enter_host();
        host.output(kind, data, mime_type);
        Ok(())
    }
}
