//! Running a `codemode` script in the script engine (the first-party `script-engine` plugin):
//! what the script reaches is the [`ScriptHost`] the session gives, and the call runs with the
//! engine's limits (memory, guest time) like any plugin call.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::call::{CallOptions, fresh_call};
use super::error::CallError;
use super::host::PluginHost;
use super::manifest::Kind;
use super::plugin::Plugin;
use super::script_host::{Ending, Script, ScriptHost};

impl PluginHost {
    /// The script engine: the first-party `script-engine` plugin, unless settings disabled it.
    pub fn script_engine(&self) -> Option<Arc<Plugin>> {
        self.plugins()
            .iter()
            .find(|p| p.manifest.has_kind(Kind::ScriptEngine) && p.is_first_party())
            .cloned()
    }

    /// Runs `script`, reaching `host`; how it ended, or why the engine stopped it (its memory
    /// or computation limit, an abort).
    pub async fn run_script(
        &self,
        script: Script,
        host: Arc<dyn ScriptHost>,
        cancel: CancellationToken,
    ) -> Result<Ending, CallError> {
        let plugin = self.script_engine().ok_or_else(|| {
            CallError::NotFound(
                "the codemode engine is not loaded (settings plugins.codemode.enabled is false)"
                    .into(),
            )
        })?;
        let loaded = self.loaded(&plugin).await?;
        let pre = loaded.script_engine.clone().ok_or_else(|| {
            CallError::NotFound(format!("{} is not a script engine", plugin.manifest.id))
        })?;
        self.run_call(
            &plugin,
            CallOptions {
                cancel: Some(cancel),
                script_host: Some(host),
                ..CallOptions::default()
            },
            fresh_call!(pre, |instance, store| instance
                .pith_plugin0_2_0_script_engine()
                .call_run(&mut *store, &script)
                .await),
        )
        .await
    }
}
