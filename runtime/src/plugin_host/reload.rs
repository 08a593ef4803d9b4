//! Reloading the plugin set from disk: every candidate is validated, compiled and
//! pre-instantiated before the new set replaces the old one in a single swap. A plugin whose
//! new version fails keeps its old version serving; a removed file unloads its plugin.

use std::sync::Arc;

use super::discovery::Found;
use super::error::LoadError;
use super::host::{PluginHost, insert};
use super::plugin::Plugin;

/// What a reload changed.
#[derive(Debug, Default, Clone)]
pub struct ReloadReport {
    /// Ids of plugins that appeared.
    pub added: Vec<String>,
    /// Ids of plugins whose component or manifest changed.
    pub updated: Vec<String>,
    /// Ids of plugins that went away.
    pub removed: Vec<String>,
    /// Plugins that failed to load (an old version, if any, goes on serving).
    pub errors: Vec<LoadError>,
}

impl ReloadReport {
    /// True when the plugin set did not change.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.updated.is_empty() && self.removed.is_empty()
    }
}

impl PluginHost {
    /// The settings grants, limits and plugin config come from now.
    pub fn settings(&self) -> Arc<crate::settings::Settings> {
        self.settings
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Replaces the settings; the next [`PluginHost::reload`] grants every plugin again (a
    /// plugin whose grants, limits or config changed counts as updated). The engine's and the
    /// HTTP client's settings stay as they were at start-up.
    pub fn set_settings(&self, settings: crate::settings::Settings) {
        *self
            .settings
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(settings);
        self.regrant
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Re-reads the plugin directories and swaps in the new set at once. Unchanged plugins keep
    /// their compiled code; new versions are compiled and pre-instantiated before the swap.
    pub async fn reload(&self) -> ReloadReport {
        let _one_at_a_time = self.reloading.lock().await;
        let regrant = self
            .regrant
            .swap(false, std::sync::atomic::Ordering::SeqCst);
        let settings = self.settings();
        let old = self.plugins();
        let mut report = ReloadReport::default();
        let mut next: Vec<Arc<Plugin>> = Vec::new();
        for candidate in self.candidates(&mut report.errors) {
            let path = match &candidate {
                Found::Embedded(embedded) => format!("<embedded>/{}", embedded.name),
                Found::File { manifest, .. } => manifest.display().to_string(),
            };
            let previous = old.iter().find(|p| p.path == path).cloned();
            if let (Found::Embedded(_), Some(previous), false) = (&candidate, &previous, regrant) {
                insert(&mut next, previous.clone());
                continue;
            }
            let outcome = match self.register(candidate, &settings, false).await {
                Ok(Some(plugin)) => match &previous {
                    Some(previous)
                        if previous.hash == plugin.hash
                            && previous.manifest == plugin.manifest
                            && previous.capabilities == plugin.capabilities
                            && previous.config == plugin.config =>
                    {
                        Ok(Some(previous.clone()))
                    }
                    _ => match self.loaded(&plugin).await {
                        Ok(_) => Ok(Some(Arc::new(plugin))),
                        Err(err) => Err(LoadError::new(&path, err.to_string())),
                    },
                },
                Ok(None) => Ok(None),
                Err(err) => Err(err),
            };
            match outcome {
                Ok(Some(plugin)) => insert(&mut next, plugin),
                Ok(None) => {}
                Err(err) => {
                    report.errors.push(err);
                    if let Some(previous) = previous {
                        insert(&mut next, previous);
                    }
                }
            }
        }
        self.cache.flush_index();
        for plugin in &next {
            match old.iter().find(|p| p.manifest.id == plugin.manifest.id) {
                None => report.added.push(plugin.manifest.id.clone()),
                Some(before) if !Arc::ptr_eq(before, plugin) => {
                    report.updated.push(plugin.manifest.id.clone())
                }
                Some(_) => {}
            }
        }
        report.removed = old
            .iter()
            .filter(|p| !next.iter().any(|n| n.manifest.id == p.manifest.id))
            .map(|p| p.manifest.id.clone())
            .collect();
        if !report.is_unchanged() {
            self.swap(next);
        }
        report
    }
}
