//! pi 1.5's system prompt sections: named texts in order (`preamble`, `tools`, `rules`, `docs`,
//! `addendum`, `project_context`, `skills`, `cwd`, then any other), as the `system` message
//! carries them. A later `system` message carries a patch: the sections that changed, and
//! `null` for one removed. Replaying them in order gives the prompt in force.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Named prompt sections in order; a `None` text (JSON `null`) removes the section when the
/// sections are a patch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sections(Vec<(String, Option<String>)>);

impl Sections {
    /// No sections.
    pub fn new() -> Sections {
        Sections::default()
    }

    /// True when there is no section (nor removal).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text of section `name`, if it is there.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, text)| text.as_deref())
    }

    /// Sets section `name` to `text`: in its place when it is there, else last.
    pub fn set(&mut self, name: &str, text: Option<String>) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = text,
            None => self.0.push((name.to_string(), text)),
        }
    }

    /// Sets section `name` to `text` unless `text` is empty.
    pub fn set_nonempty(&mut self, name: &str, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.set(name, Some(text));
        }
    }

    /// The sections' names and texts, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.0.iter().map(|(n, t)| (n.as_str(), t.as_deref()))
    }

    /// The prompt: the texts joined by blank lines (pi's `getSystemMessageText`).
    pub fn prompt(&self) -> String {
        self.0
            .iter()
            .filter_map(|(_, text)| text.as_deref())
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// Applies `patch` (a later system message's sections): a text replaces the section in
    /// its place or comes last; `null` removes it.
    pub fn apply(&mut self, patch: &Sections) {
        for (name, text) in &patch.0 {
            match text {
                Some(text) => self.set(name, Some(text.clone())),
                None => self.0.retain(|(n, _)| n != name),
            }
        }
    }

    /// The patch that turns `previous` into `self` (pi's `diffSystemPromptSections`); `None`
    /// when nothing changed.
    pub fn patch_from(&self, previous: &Sections) -> Option<Sections> {
        let mut patch = Sections::new();
        for (name, text) in &self.0 {
            if previous.get(name) != text.as_deref() {
                patch.0.push((name.clone(), text.clone()));
            }
        }
        for (name, _) in &previous.0 {
            if self.get(name).is_none() {
                patch.0.push((name.clone(), None));
            }
        }
        (!patch.is_empty()).then_some(patch)
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, text) in &self.0 {
            map.serialize_entry(name, text)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Sections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Sections, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Sections;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of section names to texts or null")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sections, A::Error> {
                let mut sections = Vec::new();
                while let Some((name, text)) = map.next_entry::<String, Option<String>>()? {
                    sections.push((name, text));
                }
                Ok(Sections(sections))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(pairs: &[(&str, Option<&str>)]) -> Sections {
        Sections(
            pairs
                .iter()
                .map(|(n, t)| (n.to_string(), t.map(str::to_string)))
                .collect(),
        )
    }

    #[test]
    fn a_patch_holds_what_changed_and_replays_to_the_new_sections() {
        let old = sections(&[
            ("preamble", Some("p")),
            ("tools", Some("t")),
            ("cwd", Some("/a")),
        ]);
        let new = sections(&[
            ("preamble", Some("p")),
            ("tools", Some("t2")),
            ("skills", Some("s")),
        ]);
        let patch = new.patch_from(&old).unwrap();
        assert_eq!(
            patch,
            sections(&[("tools", Some("t2")), ("skills", Some("s")), ("cwd", None)])
        );
        let mut replayed = old.clone();
        replayed.apply(&patch);
        assert_eq!(replayed, new);
        assert_eq!(new.patch_from(&new), None);
        assert_eq!(new.prompt(), "p\n\nt2\n\ns");
    }

    #[test]
    fn the_order_and_nulls_survive_json() {
        let patch = sections(&[("zeta", Some("z")), ("alpha", None)]);
        let json = serde_json::to_string(&patch).unwrap();
        assert_eq!(json, r#"{"zeta":"z","alpha":null}"#);
        assert_eq!(serde_json::from_str::<Sections>(&json).unwrap(), patch);
    }
}
