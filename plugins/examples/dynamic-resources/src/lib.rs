//! A port of pi's `examples/extensions/dynamic-resources/`: on `resources_discover`, the
//! extension adds the skill (`SKILL.md`) and the prompt template (`dynamic.md`) that sit in its
//! folder, beside its `pith.toml`.
//!
//! Difference from pi: pi's example also adds a theme (`dynamic.json`); pith draws no terminal,
//! so it has no themes and the port leaves it out.

use pith_sdk::extension::*;

struct DynamicResources;

impl Extension for DynamicResources {
    fn new() -> Self {
        DynamicResources
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("dynamic-resources").on(&["resources_discover"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        Ok(match event {
            // Paths relative to the extension's folder.
            Event::ResourcesDiscover(_) => EventResult::Resources(DiscoveredResources {
                skill_paths: vec!["SKILL.md".into()],
                prompt_paths: vec!["dynamic.md".into()],
            }),
            _ => EventResult::Continue,
        })
    }
}

pith_sdk::export_extension!(DynamicResources);
