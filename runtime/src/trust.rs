//! Remembered project trust: `pith trust [path]` and `pith untrust [path]` record, in the agent
//! directory's `trusted-projects.json`, whether a project's own plugins, settings and resources
//! may load. `--approve` / `--no-approve` decide for one run and win over the record; without
//! either, a directory inside a recorded one follows its record, and anything else follows pi's
//! `defaultProjectTrust` (`"always"` trusts it; `"ask"`, the default, and `"never"` do not:
//! nothing is asked headless).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The recorded decisions.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TrustRecord {
    /// Projects whose own configuration loads.
    #[serde(default)]
    pub trusted: Vec<PathBuf>,
    /// Projects refused.
    #[serde(default)]
    pub untrusted: Vec<PathBuf>,
}

/// The file of the record in `agent_dir`.
pub fn record_file(agent_dir: &Path) -> PathBuf {
    agent_dir.join("trusted-projects.json")
}

/// The trust of a project nothing decided: pi's `defaultProjectTrust`, read from the agent
/// directory's settings only (a project cannot trust itself).
pub fn default_trust(agent_settings: &crate::settings::Settings) -> bool {
    agent_settings
        .get("defaultProjectTrust")
        .and_then(serde_json::Value::as_str)
        == Some("always")
}

impl TrustRecord {
    /// Reads the record (empty when there is none; an unreadable one is an error naming it).
    pub fn load(agent_dir: &Path) -> Result<TrustRecord, String> {
        let file = record_file(agent_dir);
        match std::fs::read_to_string(&file) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(TrustRecord::default()),
            Err(err) => Err(format!("cannot read {}: {err}", file.display())),
            Ok(text) => serde_json::from_str(&text)
                .map_err(|err| format!("{} is not a trust record: {err}", file.display())),
        }
    }

    /// The decision for `project`: that of the nearest recorded directory holding it.
    pub fn decision(&self, project: &Path) -> Option<bool> {
        let nearest = |list: &[PathBuf]| {
            list.iter()
                .filter(|p| project.starts_with(p))
                .map(|p| p.components().count())
                .max()
        };
        match (nearest(&self.trusted), nearest(&self.untrusted)) {
            (Some(t), Some(u)) => Some(t > u),
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// Records `project` as trusted or not, and writes the record.
    pub fn set(&mut self, agent_dir: &Path, project: &Path, trusted: bool) -> Result<(), String> {
        self.trusted.retain(|p| p != project);
        self.untrusted.retain(|p| p != project);
        if trusted {
            self.trusted.push(project.to_path_buf());
        } else {
            self.untrusted.push(project.to_path_buf());
        }
        let file = record_file(agent_dir);
        // Written whole, then renamed over the record: a crash never leaves half a record.
        let fresh = file.with_extension("json.tmp");
        std::fs::create_dir_all(agent_dir)
            .and_then(|_| {
                std::fs::write(
                    &fresh,
                    serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
                )
            })
            .and_then(|_| std::fs::rename(&fresh, &file))
            .map_err(|err| format!("cannot write {}: {err}", file.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_decision_wins() {
        let dir = tempfile::tempdir().unwrap();
        let mut record = TrustRecord::default();
        assert_eq!(record.decision(Path::new("/src/app")), None);
        record.set(dir.path(), Path::new("/src"), true).unwrap();
        record
            .set(dir.path(), Path::new("/src/vendor"), false)
            .unwrap();
        assert_eq!(record.decision(Path::new("/src/app")), Some(true));
        assert_eq!(record.decision(Path::new("/src/vendor/lib")), Some(false));
        assert_eq!(record.decision(Path::new("/elsewhere")), None);
        let reread = TrustRecord::load(dir.path()).unwrap();
        assert_eq!(reread.decision(Path::new("/src/vendor")), Some(false));
    }
}
