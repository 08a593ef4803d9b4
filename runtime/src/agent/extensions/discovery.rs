//! pi's `resources_discover`: after `session_start`, extensions may add skills and prompt
//! templates, named relative to their own folder (where their `pith.toml` is) or absolutely
//! inside that folder or the workspace; a path elsewhere is left out with a warning.

use std::path::{Path, PathBuf};

use super::Extensions;
use super::hooks::{
    DiscoverReason, DiscoveredResources, Event, EventResult, ResourcesDiscoverEvent,
};

/// The skill and template paths the extensions added, absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovered {
    /// Skill files or folders.
    pub skills: Vec<PathBuf>,
    /// Prompt-template files or folders.
    pub templates: Vec<PathBuf>,
}

impl Extensions {
    /// Asks the extensions that hear `resources_discover` for their skills and templates.
    pub async fn discover_resources(&self, cwd: &Path, reason: DiscoverReason) -> Discovered {
        let mut found = Discovered::default();
        if !self.wants("resources_discover") {
            return found;
        }
        let event = Event::ResourcesDiscover(ResourcesDiscoverEvent {
            cwd: cwd.display().to_string(),
            reason,
        });
        let outcome = self.hook("resources_discover", event).await;
        for (plugin_path, result) in outcome.results {
            let EventResult::Resources(DiscoveredResources {
                skill_paths,
                prompt_paths,
            }) = result
            else {
                continue;
            };
            let folder = Path::new(&plugin_path).parent().filter(|d| d.is_absolute());
            let place = |paths: Vec<String>, into: &mut Vec<PathBuf>| {
                for path in paths {
                    match resolve(folder, cwd, &path) {
                        Some(resolved) => into.push(resolved),
                        None => tracing::warn!(
                            "{plugin_path}: resources_discover named {path:?}, outside the \
                             extension's folder and the workspace: left out"
                        ),
                    }
                }
            };
            place(skill_paths, &mut found.skills);
            place(prompt_paths, &mut found.templates);
        }
        found
    }
}

/// `path` made absolute against the extension's `folder`, when it stays inside that folder
/// or the workspace `cwd`.
fn resolve(folder: Option<&Path>, cwd: &Path, path: &str) -> Option<PathBuf> {
    let given = Path::new(path);
    let full = match (given.is_absolute(), folder) {
        (true, _) => given.to_path_buf(),
        (false, Some(folder)) => folder.join(given),
        (false, None) => return None,
    };
    let full = crate::sandbox::paths::normalize(&full);
    let inside = |root: &Path| full.starts_with(crate::sandbox::paths::normalize(root));
    (folder.is_some_and(inside) || inside(cwd)).then_some(full)
}
