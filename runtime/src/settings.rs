//! Settings: the global `settings.json` in the agent directory deep-merged with a trusted
//! project's `.pi/settings.json` (pi's) and then `.pith/settings.json` (the project wins, and
//! pith's file over pi's), as pi merges its files.
//!
//! Only the parts pith reads live here as typed accessors; the rest is kept as JSON so that
//! writing a setting back never drops keys pith does not know (pi's keys included).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The keys only the agent directory's settings may set: pith's sandbox and session host caps,
/// and pi's agent-directory-only keys.
const AGENT_DIR_ONLY: [&str; 5] = [
    "sandbox",
    "sessionHost",
    "defaultProjectTrust",
    "httpProxy",
    "cacheWarming",
];

/// Takes out of a project's settings what a project may not set — [`AGENT_DIR_ONLY`], and
/// each plugin's grant and limits (`plugins.<id>.grant`, `plugins.<id>.limits`); returns the
/// keys removed.
fn forbid(project: &mut serde_json::Map<String, Value>) -> Vec<String> {
    let mut removed = Vec::new();
    for key in AGENT_DIR_ONLY {
        if project.remove(key).is_some() {
            removed.push(key.to_string());
        }
    }
    if let Some(Value::Object(plugins)) = project.get_mut("plugins") {
        for (id, plugin) in plugins.iter_mut() {
            if let Some(fields) = plugin.as_object_mut() {
                for key in ["grant", "limits"] {
                    if fields.remove(key).is_some() {
                        removed.push(format!("plugins.{id}.{key}"));
                    }
                }
            }
        }
    }
    removed
}

/// The merged settings and where they came from.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    merged: Value,
    /// Each file's resource lists (`extensions`), with the directory their relative paths
    /// start from, in the order the files apply.
    resources: Vec<(PathBuf, Value)>,
    /// Files that could not be read or parsed, with the reason; reported, never fatal.
    pub problems: Vec<String>,
    /// True when a file could not be read or parsed (what it holds is missing from these
    /// settings, so `reload` keeps the ones it has).
    pub incomplete: bool,
}

impl Settings {
    /// Loads `<agent_dir>/settings.json` (`global`) and, for a trusted `project` directory,
    /// its [`Settings::project_files`].
    pub fn load(global: &Path, project: Option<&Path>) -> Settings {
        let mut settings = Settings {
            merged: Value::Object(Default::default()),
            resources: Vec::new(),
            problems: Vec::new(),
            incomplete: false,
        };
        let project_files = project.map(Settings::project_files).unwrap_or_default();
        let files = std::iter::once((global.to_path_buf(), false))
            .chain(project_files.into_iter().map(|file| (file, true)));
        for (file, is_project) in files {
            let file = file.as_path();
            match read_json_object(file) {
                Ok(Some(mut value)) => {
                    // A project can never widen the sandbox or grant a plugin anything.
                    if is_project && let Some(fields) = value.as_object_mut() {
                        for key in forbid(fields) {
                            settings.problems.push(format!(
                                "{}: \"{key}\" is ignored in a project's settings (set it in the agent directory's settings.json)",
                                file.display()
                            ));
                        }
                    }
                    // pi's resource paths resolve from the agent directory in its settings and
                    // from the file's own folder (`.pi/`) in a project's.
                    if let Some(base) = file.parent() {
                        settings.resources.push((base.to_path_buf(), value.clone()));
                    }
                    merge(&mut settings.merged, value)
                }
                Ok(None) => {}
                Err(problem) => {
                    settings.problems.push(problem);
                    settings.incomplete = true;
                }
            }
        }
        settings
    }

    /// Settings from a JSON value (tests, embedding).
    pub fn from_value(value: Value) -> Settings {
        Settings {
            merged: value,
            resources: Vec::new(),
            problems: Vec::new(),
            incomplete: false,
        }
    }

    /// A project's settings files, in the order they apply: pi's `.pi/settings.json`, then
    /// pith's `.pith/settings.json`.
    pub fn project_files(project: &Path) -> [PathBuf; 2] {
        [
            project.join(".pi").join("settings.json"),
            project.join(".pith").join("settings.json"),
        ]
    }

    /// The number at `section.key` (e.g. `retry.maxRetries`), when it is a non-negative integer.
    pub fn number(&self, section: &str, key: &str) -> Option<u64> {
        self.merged.get(section)?.get(key)?.as_u64()
    }

    /// The paths of a resource list (pi's `extensions`, `skills`, `prompts`) from every file,
    /// the global one first (pi loads what each lists): each relative to its file's folder,
    /// `~` expanded, `+path` taken as `path`, and `-path` dropping one listed before. Entries
    /// pith cannot follow (pi's `builtin:` names, `!glob` exclusions) are returned as
    /// problems.
    pub fn resource_paths(&self, key: &str) -> (Vec<PathBuf>, Vec<String>) {
        let (mut paths, mut problems) = (Vec::new(), Vec::new());
        for (base, value) in &self.resources {
            let Some(entries) = value.get(key).and_then(Value::as_array) else {
                continue;
            };
            for entry in entries.iter().filter_map(Value::as_str) {
                let bare = entry.trim_start_matches(['+', '-']);
                if bare.starts_with("builtin:") || entry.starts_with('!') {
                    problems.push(format!(
                        "settings {key}: \"{entry}\" is not followed (pith has no pi built-in extensions and no glob exclusions)"
                    ));
                    continue;
                }
                let path = match bare.strip_prefix("~/") {
                    Some(rest) => std::env::var_os("HOME").map_or_else(
                        || PathBuf::from(bare),
                        |home| PathBuf::from(home).join(rest),
                    ),
                    None => base.join(bare),
                };
                if entry.starts_with('-') {
                    paths.retain(|p| *p != path);
                } else if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        (paths, problems)
    }

    /// Everything merged, as JSON (pi's `getSettings`).
    pub fn merged(&self) -> &Value {
        &self.merged
    }

    /// The raw merged value at a top-level key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.merged.get(key)
    }
}

/// Reads a JSON object file: `Ok(None)` when it does not exist.
fn read_json_object(path: &Path) -> Result<Option<Value>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value @ Value::Object(_)) => Ok(Some(value)),
        Ok(_) => Err(format!("{}: not a JSON object", path.display())),
        Err(err) => Err(format!("{}: {err}", path.display())),
    }
}

/// Deep-merges `overlay` into `base`: objects merge key by key, anything else replaces.
fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn project_overrides_global_key_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("g.json");
        let [pi, pith] = Settings::project_files(dir.path());
        std::fs::create_dir_all(pi.parent().unwrap()).unwrap();
        std::fs::create_dir_all(pith.parent().unwrap()).unwrap();
        std::fs::write(
            &global,
            r#"{"a":1,"b":1,"plugins":{"x":{"enabled":true,"config":{"K":"g"}}}}"#,
        )
        .unwrap();
        std::fs::write(&pi, r#"{"a":2,"b":2,"httpProxy":"http://p"}"#).unwrap();
        std::fs::write(
            &pith,
            r#"{"b":3,"plugins":{"x":{"config":{"K":"p"},"grant":{"process":true}}},"sandbox":{"mode":"full-access"}}"#,
        )
        .unwrap();
        let settings = Settings::load(&global, Some(dir.path()));
        // pi's project file over the global one, pith's over pi's.
        assert_eq!(settings.get("a"), Some(&json!(2)));
        assert_eq!(settings.get("b"), Some(&json!(3)));
        assert_eq!(settings.get("httpProxy"), None);
        // A project configures plugins but never grants them anything or widens the sandbox.
        assert_eq!(
            settings.get("plugins"),
            Some(&json!({"x": {"enabled": true, "config": {"K": "p"}}}))
        );
        assert_eq!(settings.get("sandbox"), None);
        assert_eq!(settings.problems.len(), 3, "{:?}", settings.problems);
    }

    #[test]
    fn broken_file_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("g.json");
        std::fs::write(&global, "{not json").unwrap();
        let settings = Settings::load(&global, None);
        assert_eq!(settings.problems.len(), 1);
        assert!(settings.problems[0].contains("g.json"));
    }
}
