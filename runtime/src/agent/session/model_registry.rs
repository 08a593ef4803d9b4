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
        let (mut fresh, problems) = ModelRegistry::load(
            &self.host,
            &self.sources.models_file,
            &self.sources.auth_file,
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
}
