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
                        Ok(resolved) => into.push(resolved),
                        Err(why) => tracing::warn!(
                            "{plugin_path}: resources_discover named {path:?}, {why}: left out"
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

/// `path` made absolute against the extension's `folder`, with its links followed, when it
/// stays inside that folder or the workspace `cwd`; else why not.
fn resolve(folder: Option<&Path>, cwd: &Path, path: &str) -> Result<PathBuf, &'static str> {
    let given = Path::new(path);
    let full = match (given.is_absolute(), folder) {
        (true, _) => given.to_path_buf(),
        (false, Some(folder)) => folder.join(given),
        (false, None) => return Err("relative, and the extension has no folder"),
    };
    // Links followed: a link inside the folder cannot name a file outside it.
    let real = std::fs::canonicalize(&full).map_err(|_| "which does not exist")?;
    let inside = |root: &Path| std::fs::canonicalize(root).is_ok_and(|root| real.starts_with(root));
    if folder.is_some_and(inside) || inside(cwd) {
        Ok(real)
    } else {
        Err("outside the extension's folder and the workspace")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_extension_folder_or_the_workspace_links_followed() {
        let root = tempfile::tempdir().unwrap();
        let folder = root.path().join("ext");
        let work = root.path().join("work");
        let outside = root.path().join("outside");
        for dir in [&folder, &work, &outside] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(folder.join("SKILL.md"), "x").unwrap();
        std::fs::write(work.join("t.md"), "x").unwrap();
        std::fs::write(outside.join("secret.md"), "x").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), folder.join("link.md")).unwrap();
        let real = |p: &Path| std::fs::canonicalize(p).unwrap();
        let resolve = |path: &str| resolve(Some(&folder), &work, path);
        assert_eq!(resolve("SKILL.md"), Ok(real(&folder.join("SKILL.md"))));
        let in_work = work.join("t.md").display().to_string();
        assert_eq!(resolve(&in_work), Ok(real(&work.join("t.md"))));
        assert!(resolve("../outside/secret.md").is_err());
        assert!(resolve("link.md").is_err(), "a link out of the folder");
        assert_eq!(resolve("missing.md"), Err("which does not exist"));
        assert!(super::resolve(None, &work, "SKILL.md").is_err());
    }
}
