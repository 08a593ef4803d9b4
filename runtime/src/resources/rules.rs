//! Streamed rules: markdown files (`<agent-dir>/rules/*.md`, `.pi/rules/*.md`) and extension
//! rules with a `trigger` regex. While the model streams, its text and tool-call arguments are
//! matched against the triggers; a match stops the answer and the rule is given to the model
//! as a reminder before it goes on (`ttsr_triggered`).

use std::path::Path;

use regex::Regex;
use serde_json::{Value, json};

use super::{ResourceDirs, frontmatter};
use crate::plugin_host::PluginHost;

/// A streamed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its name.
    pub name: String,
    /// What it is about.
    pub description: String,
    /// Globs of the files it concerns.
    pub globs: Vec<String>,
    /// The trigger, as written.
    pub trigger: String,
    /// The text given to the model when it triggers.
    pub content: String,
    /// Its file, or `extension:<plugin id>`.
    pub path: String,
    regex: Regex,
}

impl Rule {
    /// A rule; `None` when the trigger is not a valid regular expression.
    pub fn new(
        name: String,
        description: String,
        globs: Vec<String>,
        trigger: String,
        content: String,
        path: String,
    ) -> Option<Rule> {
        let regex = match Regex::new(&trigger) {
            Ok(regex) => regex,
            Err(err) => {
                tracing::warn!("rule {name} ({path}) ignored: its trigger is not a regex: {err}");
                return None;
            }
        };
        Some(Rule {
            name,
            description,
            globs,
            trigger,
            content,
            path,
            regex,
        })
    }

    /// What identifies the rule (each triggers once per session).
    pub fn key(&self) -> String {
        format!("{}\u{0}{}", self.path, self.name)
    }

    /// The rule as `ttsr_triggered` lists it.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "path": self.path,
            "content": self.content,
            "globs": self.globs,
            "description": self.description,
            "ttsrTrigger": self.trigger,
        })
    }

    /// The reminder the model gets when the rule triggers.
    pub fn reminder(&self) -> String {
        format!(
            "<system-reminder>\nYour output matched the rule \"{}\" ({}). Follow it, then continue:\n\n{}\n</system-reminder>",
            self.name,
            self.path,
            self.content.trim()
        )
    }
}

/// The rules with a trigger: the user's, the project's, then the extensions'.
pub fn discover(dirs: &ResourceDirs, host: &PluginHost) -> Vec<Rule> {
    let mut rules: Vec<Rule> = Vec::new();
    for dir in std::iter::once(dirs.agent_dir.join("rules")).chain(dirs.project_dir("rules")) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        rules.extend(files.iter().filter_map(|file| load_file(file)));
    }
    for plugin in host.plugins().iter() {
        let Some(meta) = &plugin.meta.extension else {
            continue;
        };
        for rule in &meta.rules {
            rules.extend(Rule::new(
                rule.name.clone(),
                rule.description.clone(),
                rule.globs.clone(),
                rule.trigger.clone(),
                rule.content.clone(),
                format!("extension:{}", plugin.manifest.id),
            ));
        }
    }
    rules
}

fn load_file(path: &Path) -> Option<Rule> {
    let text = std::fs::read_to_string(path).ok()?;
    let parsed = frontmatter::parse(&text);
    let trigger = parsed
        .get("trigger")
        .or_else(|| parsed.get("ttsrTrigger"))
        .filter(|t| !t.is_empty())?
        .to_string();
    let name = parsed
        .get("name")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()))?;
    let globs = parsed.list("globs").unwrap_or_default();
    Rule::new(
        name,
        parsed.get("description").unwrap_or("").to_string(),
        globs,
        trigger,
        parsed.body.trim().to_string(),
        path.display().to_string(),
    )
}

/// Watches one streamed answer for rule triggers.
pub struct RuleWatch<'a> {
    rules: Vec<&'a Rule>,
    streamed: String,
    checked: usize,
}

/// How far back a check looks past what was already checked (a trigger may span deltas).
const OVERLAP: usize = 512;

impl<'a> RuleWatch<'a> {
    /// A watch for `rules`.
    pub fn new(rules: Vec<&'a Rule>) -> RuleWatch<'a> {
        RuleWatch {
            rules,
            streamed: String::new(),
            checked: 0,
        }
    }

    /// True when there is nothing to watch for.
    pub fn is_idle(&self) -> bool {
        self.rules.is_empty()
    }

    /// Adds streamed text or tool-call arguments.
    pub fn push(&mut self, delta: &str) {
        if !self.rules.is_empty() {
            self.streamed.push_str(delta);
        }
    }

    /// The rules whose trigger matches what streamed so far (checking the new part).
    pub fn check(&mut self) -> Vec<&'a Rule> {
        if self.rules.is_empty() || self.checked == self.streamed.len() {
            return Vec::new();
        }
        let mut from = self.checked.saturating_sub(OVERLAP);
        while !self.streamed.is_char_boundary(from) {
            from -= 1;
        }
        let window = &self.streamed[from..];
        self.checked = self.streamed.len();
        self.rules
            .iter()
            .filter(|rule| rule.regex.is_match(window))
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(trigger: &str) -> Rule {
        Rule::new(
            "r".into(),
            String::new(),
            Vec::new(),
            trigger.into(),
            "c".into(),
            "p".into(),
        )
        .unwrap()
    }

    #[test]
    fn a_trigger_split_across_deltas_matches() {
        let rules = [rule(r"unwrap\(\)")];
        let mut watch = RuleWatch::new(rules.iter().collect());
        watch.push("value.unw");
        assert!(watch.check().is_empty());
        watch.push("rap() here");
        assert_eq!(watch.check().len(), 1);
    }

    #[test]
    fn an_invalid_trigger_is_no_rule() {
        assert!(
            Rule::new(
                "r".into(),
                String::new(),
                Vec::new(),
                "(".into(),
                String::new(),
                "p".into()
            )
            .is_none()
        );
    }
}
