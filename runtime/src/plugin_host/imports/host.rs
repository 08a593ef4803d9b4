//! `pith:plugin/host`: logging, granted config values, the workspace path.

use crate::plugin_host::bindings::imports::pith::plugin0_1_0::host::{ConfigError, Host, LogLevel};
use crate::plugin_host::sandbox::StoreState;

/// The longest log line kept from a plugin.
const MAX_LOG_LINE: usize = 4096;

impl Host for StoreState {
    async fn log(&mut self, level: LogLevel, message: String) {
        let plugin = self.spec.plugin_id.as_str();
        let mut message = message;
        if message.len() > MAX_LOG_LINE {
            let cut = (0..=MAX_LOG_LINE)
                .rev()
                .find(|i| message.is_char_boundary(*i))
                .unwrap_or(0);
            message.truncate(cut);
            message.push('…');
        }
        match level {
            LogLevel::Trace => tracing::trace!(plugin, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, "{message}"),
            LogLevel::Info => tracing::info!(plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, "{message}"),
            LogLevel::Error => tracing::error!(plugin, "{message}"),
        }
    }

    async fn get_config(&mut self, key: String) -> Result<Option<String>, ConfigError> {
        if !self.spec.capabilities.allows_config(&key) {
            return Err(ConfigError::NotGranted(key));
        }
        Ok(self
            .spec
            .config
            .get(&key)
            .cloned()
            .or_else(|| std::env::var(&key).ok()))
    }

    async fn workspace_dir(&mut self) -> Option<String> {
        self.workspace_guest.clone()
    }
}
