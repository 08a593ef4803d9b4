//! The session's side of hot reload and of `reload`: after the plugin set changed, extensions
//! are brought in line (new and updated ones get `session_start`), skills and templates are
//! found again, the models of provider plugins are offered at once, the host hears
//! `plugins_changed`, and each plugin that failed to load is an `extension_error`. `reload`
//! also reads the settings, `models.json` and `auth.json` again and answers with what changed.

use std::sync::Arc;

use crate::agent::event::SessionEvent;
use crate::agent::extensions::hooks::{DiscoverReason, SessionStartReason};
use crate::agent::session::Session;
use crate::agent::session::answers::{
    ModelsChange, PluginList, PluginsReload, ReloadSummary, SettingsReload,
};
use crate::agent::session::policies::Policies;
use crate::plugin_host::reload::ReloadReport;
use crate::settings::Settings;

impl Session {
    /// Applies a reload of the plugin set; when it changed, the models it added and removed.
    pub async fn plugins_reloaded(
        &self,
        report: ReloadReport,
    ) -> Option<(Vec<String>, Vec<String>)> {
        self.plugins_changed(report, SessionStartReason::Reload, true)
            .await
    }

    /// Takes in the plugins that were still compiling when the session started: to their
    /// extensions this is the session's start (`session_start` with `startup`, as pi loads
    /// every extension before it serves).
    pub async fn deferred_plugins_loaded(&self, report: ReloadReport) {
        self.plugins_changed(report, SessionStartReason::Startup, true)
            .await;
    }

    /// `discover`: ask the extensions for resources afterwards (else the caller does).
    async fn plugins_changed(
        &self,
        report: ReloadReport,
        reason: SessionStartReason,
        discover: bool,
    ) -> Option<(Vec<String>, Vec<String>)> {
        let shared = self.shared();
        for error in &report.errors {
            shared
                .extensions
                .error(&error.path, "reload", &error.reason);
        }
        if report.is_unchanged() {
            return None;
        }
        let fresh = shared.extensions.refresh();
        // A plugin loaded again starts over: its old version's run-time registrations go.
        let reloaded: Vec<String> = report
            .added
            .iter()
            .chain(&report.updated)
            .chain(&report.removed)
            .cloned()
            .collect();
        shared.forget_model_changes(&reloaded);
        shared.reload_resources().await;
        let (added, removed, problems) = shared.refresh_models();
        for problem in problems {
            tracing::warn!("{problem}");
        }
        if !added.is_empty() || !removed.is_empty() {
            tracing::info!(?added, ?removed, "the models changed with the plugins");
        }
        let models = (added, removed);
        shared.emit(&SessionEvent::PluginsChanged {
            added: report.added,
            updated: report.updated,
            removed: report.removed,
        });
        // A plugin loaded while the session runs starts with it (pi's `reload` reason); what
        // it sends on the events bus while starting is heard before a command waiting for it.
        shared.extensions.session_start(&fresh, reason, None).await;
        shared.extensions.observed_so_far().await;
        if discover {
            let discover = match reason {
                SessionStartReason::Startup => DiscoverReason::Startup,
                _ => DiscoverReason::Reload,
            };
            shared.discover_resources(discover).await;
        }
        Some(models)
    }

    /// `reload`: reads the settings, the plugin directories, skills and templates,
    /// `models.json` and `auth.json` again and answers with what changed. The sandbox, the
    /// engine and the HTTP client keep their start-up settings. The extensions are asked for
    /// resources (`resources_discover`, `reload`) whether or not a plugin changed.
    pub async fn reload(&self) -> ReloadSummary {
        let summary = self.read_again().await;
        self.shared()
            .discover_resources(DiscoverReason::Reload)
            .await;
        summary
    }

    /// [`Session::reload`] without asking the extensions for resources.
    async fn read_again(&self) -> ReloadSummary {
        let shared = self.shared();
        let sources = &shared.sources;
        let settings = Settings::load(&sources.global_settings, sources.project_dir.as_deref());
        let mut problems = settings.problems.clone();
        // A file that does not read or parse (a typo, an editor's half-written save) would read
        // as empty and revoke every grant: the settings in force stay until it is fixed.
        let kept = settings.incomplete;
        let policies_changed = if kept {
            problems.push("the settings in force are kept until the file reads again".into());
            false
        } else {
            let changed = shared
                .state()
                .apply_policies(Policies::from_settings(&settings));
            shared.host.set_settings(settings);
            changed
        };
        let report = shared.host.reload().await;
        let plugins = PluginsReload {
            added: report.added.clone(),
            updated: report.updated.clone(),
            removed: report.removed.clone(),
            errors: report
                .errors
                .iter()
                .map(|e| format!("{}: {}", e.path, e.reason))
                .collect(),
        };
        let changed = self
            .plugins_changed(report, SessionStartReason::Reload, false)
            .await;
        let (mut added, mut removed) = match changed {
            Some(models) => models,
            None => {
                shared.reload_resources().await;
                (Vec::new(), Vec::new())
            }
        };
        let (more_added, more_removed, model_problems) = shared.refresh_models();
        added.extend(more_added);
        removed.extend(more_removed);
        problems.extend(model_problems);
        let resources = shared.resources();
        let mcp = shared.reload_mcp();
        ReloadSummary {
            settings: SettingsReload {
                changed: policies_changed,
                kept,
                problems,
            },
            mcp,
            plugins,
            models: ModelsChange { added, removed },
            skills: resources.skills.len(),
            prompt_templates: resources.templates.len(),
        }
    }

    /// An extension's `reload` (pi's `ctx.reload`): refused while a run streams or a
    /// compaction runs (pi's texts); else every extension gets `session_shutdown` (`reload`),
    /// everything is read again as by [`Session::reload`], and every extension starts afresh
    /// with `session_start` (`reload`).
    pub async fn reload_from_extension(&self) -> Result<(), String> {
        let shared = self.shared();
        if shared.state().is_streaming() {
            return Err("Wait for the current response to finish before reloading.".into());
        }
        if !*shared.not_compacting.borrow() {
            return Err("Wait for compaction to finish before reloading.".into());
        }
        shared
            .extensions
            .session_shutdown(
                crate::agent::extensions::hooks::ShutdownReason::Reload,
                None,
            )
            .await;
        let before = shared.extensions.slots();
        self.read_again().await;
        // The extensions the reload brought in have had their `session_start`.
        let kept: Vec<_> = shared
            .extensions
            .slots()
            .iter()
            .filter(|slot| before.iter().any(|old| Arc::ptr_eq(old, slot)))
            .cloned()
            .collect();
        shared
            .extensions
            .restart_slots(
                &kept,
                crate::agent::extensions::hooks::SessionStartReason::Reload,
                None,
            )
            .await;
        shared.discover_resources(DiscoverReason::Reload).await;
        Ok(())
    }

    /// `get_plugins`: every loaded plugin, as `pith plugins --json` lists it.
    pub fn plugins(&self) -> PluginList {
        PluginList {
            plugins: self.shared().host.describe_plugins(),
        }
    }
}
