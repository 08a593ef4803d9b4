//! The session's model registry: read by every run, rebuilt by `reload` and whenever the plugin
//! set changes (a provider added at run time is offered at once).

use super::*;

impl Shared {
    /// The model registry now (a reload or a new provider plugin replaces it).
    pub fn models(&self) -> Arc<ModelRegistry> {
        self.models
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Builds the registry again from the provider plugins loaded now, `models.json` and
    /// `auth.json` (keys given on the command line kept); returns the models added and
    /// removed (`provider/id`) and the files' problems.
    pub fn refresh_models(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        let old = self.models();
        let changes = self
            .provider_changes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        let (mut fresh, problems) = ModelRegistry::load_with_changes(
            &self.host,
            &self.sources.models_file,
            &self.sources.auth_file,
            &changes,
        );
        fresh.runtime_keys = old.runtime_keys.clone();
        let names = |registry: &ModelRegistry| -> Vec<String> {
            registry
                .all()
                .iter()
                .map(|m| format!("{}/{}", m.provider, m.id))
                .collect()
        };
        let (before, after) = (names(&old), names(&fresh));
        let added = after
            .iter()
            .filter(|m| !before.contains(m))
            .cloned()
            .collect();
        let removed = before
            .iter()
            .filter(|m| !after.contains(m))
            .cloned()
            .collect();
        // The current and the scoped models take their new definitions (base URL, headers,
        // window); one that is gone stays as it was until another is chosen.
        {
            let mut state = self.state();
            if let Some(current) = &state.model
                && let Some(updated) = fresh.find(&current.provider, &current.id)
            {
                state.model = Some(updated);
            }
            for (scoped, _) in state.scoped_models.iter_mut() {
                if let Some(updated) = fresh.find(&scoped.provider, &scoped.id) {
                    *scoped = updated;
                }
            }
        }
        *self
            .models
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(fresh);
        (added, removed, problems)
    }

    /// Registers (or replaces) `plugin`'s provider and builds the registry again; `Err` names
    /// what is wrong with it (nothing is registered then).
    pub fn register_provider(
        &self,
        plugin: &str,
        registration: crate::agent::models::ProviderRegistration,
    ) -> Result<(), String> {
        let source = format!("extension {plugin}");
        let mut problems = Vec::new();
        ModelRegistry::default()
            .add_provider(
                &source,
                &registration.name,
                registration.config.clone(),
                true,
                &mut problems,
            )
            .map_err(|problem| format!("{source}: {problem}"))?;
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        self.change_providers(crate::agent::models::ProviderChange::Register {
            plugin: plugin.to_string(),
            registration: Box::new(registration),
        });
        Ok(())
    }

    /// Removes the provider `name` that `plugin` registered (its built-in models come back).
    pub fn unregister_provider(&self, plugin: &str, name: &str) {
        self.change_providers(crate::agent::models::ProviderChange::Unregister {
            plugin: plugin.to_string(),
            name: name.to_string(),
        });
    }

    /// Registers (or replaces) a virtual model that `plugin` routes, and builds the registry
    /// again: it is offered at once. One another extension routes is refused.
    pub fn register_virtual_model(
        &self,
        plugin: &str,
        model: crate::model::Model,
    ) -> Result<(), String> {
        if let Some(other) = self
            .models()
            .router(&model.provider, &model.id)
            .filter(|router| *router != plugin)
        {
            return Err(format!(
                "the virtual model {} is routed by the extension {other}",
                model.key()
            ));
        }
        self.change_providers(crate::agent::models::ProviderChange::RegisterVirtual {
            plugin: plugin.to_string(),
            model: Box::new(model),
        });
        Ok(())
    }

    /// Forgets the run-time model changes of `plugins`: a plugin loaded again starts over,
    /// registering what its new version registers.
    pub fn forget_model_changes(&self, plugins: &[String]) {
        self.provider_changes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .retain(|change| !plugins.iter().any(|p| p == change.plugin()));
    }

    /// Removes the virtual model `provider/id` that `plugin` registered.
    pub fn unregister_virtual_model(&self, plugin: &str, provider: &str, id: &str) {
        self.change_providers(crate::agent::models::ProviderChange::UnregisterVirtual {
            plugin: plugin.to_string(),
            provider: provider.to_string(),
            id: id.to_string(),
        });
    }

    fn change_providers(&self, change: crate::agent::models::ProviderChange) {
        self.provider_changes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(change);
        let (added, removed, _) = self.refresh_models();
        tracing::info!("providers changed: added {added:?}, removed {removed:?}");
    }
}
