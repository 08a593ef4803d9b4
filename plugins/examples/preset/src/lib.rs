//! A port of pi's `examples/extensions/preset.ts`: named presets that set the model, the
//! thinking level, the active tools and instructions appended to the system prompt. A preset is
//! applied with `--preset <name>` (at `session_start`) or `/preset <name>`, shown as the status
//! `preset:<name>`, remembered in a `preset-state` custom entry at each `turn_start`, and
//! restored (its instructions only) from that entry when a session starts without the flag.
//! Presets come from a global file and the project's `.pi/presets.json` (the project's win).
//!
//! Differences from pi:
//! - The global presets: pi reads `<agent dir>/presets.json`. A pith extension sees only its
//!   workspace (and the skill folders), never the agent directory, and is not told where it is;
//!   so the global presets are the text of that file given as the plugin's config key
//!   `presets` (`plugins.preset.config.presets` in settings.json, else the environment variable
//!   `presets`; a third-party plugin reads it only once the user grants it: `grant.config`).
//!   The project's `<cwd>/.pi/presets.json` is read as pi reads it, through the workspace grant.
//! - The status is plain `preset:<name>`: pi colours it with `ctx.ui.theme.fg("accent", …)`,
//!   which comes out as ANSI escapes over RPC; pith has no theme API.
//! - `/preset` without a name opens pi's TUI selector (`ctx.ui.custom`), which does nothing
//!   over RPC; the port does nothing either (it still warns when no preset is defined, naming
//!   where pith takes presets from instead of pi's two files). pi's `Ctrl+Shift+U` shortcut
//!   (cycle presets) is TUI-only and left out, with the snapshot of the model, thinking level
//!   and tools that only the selector's and the cycle's `(none)` entry restore.
//! - pith's thinking levels stop at `xhigh`: a preset's `"max"` is set as `xhigh`.
//! - `turn_start` is observed in pith, delivered after the front-end has the frame, so the
//!   `preset-state` entry follows the `turn_start` frame and the turn's first entries (pi
//!   appends it before them).
//! - A preset file that cannot be read or parsed is reported in pith's log (pi: `console.error`,
//!   stderr), with Rust's wording of the error.

use pith_sdk::extension::*;
use pith_sdk::types::ThinkingLevel;
use serde_json::{Map, Value};

/// pi's `CONFIG_DIR_NAME`: the project's folder of pi resources.
const CONFIG_DIR_NAME: &str = ".pi";

/// The custom entry that remembers the active preset.
const STATE_ENTRY: &str = "preset-state";

struct Preset {
    /// Every preset by name, in JavaScript's key order (pi's `presets`).
    presets: Map<String, Value>,
    /// pi's `activePresetName`.
    active_name: Option<String>,
    /// pi's `activePreset`.
    active: Option<Value>,
}

/// JavaScript's truthiness of a JSON value (`presets[name]` is looked up with `!preset`).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A preset's string field, when it is a non-empty string (pi tests them for truthiness).
fn text<'a>(preset: &'a Value, key: &str) -> Option<&'a str> {
    preset.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// True for a key JavaScript orders first, as an array index (`"0"`, `"12"`, not `"01"`).
fn is_array_index(key: &str) -> bool {
    !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_digit())
        && (key == "0" || !key.starts_with('0'))
        && key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// The keys of an object in JavaScript's order (`Object.keys`): array indices ascending, then
/// the other keys in insertion order.
fn js_keys(map: &Map<String, Value>) -> Vec<&str> {
    let mut indices: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| is_array_index(k))
        .collect();
    indices.sort_by_key(|k| k.parse::<u64>().unwrap_or(0));
    indices.extend(
        map.keys()
            .map(String::as_str)
            .filter(|k| !is_array_index(k)),
    );
    indices
}

/// A presets file's text as an object (`JSON.parse`); `Err` with the reason it is not JSON.
/// A JSON value that is not an object holds no preset.
fn parse_presets(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Ok(Map::new()),
        Err(err) => Err(err.to_string()),
    }
}

/// The project's presets file.
fn project_path(cwd: &str) -> String {
    std::path::Path::new(cwd)
        .join(CONFIG_DIR_NAME)
        .join("presets.json")
        .display()
        .to_string()
}

/// pi's `loadPresets`: the global presets with the project's merged over them (a project preset
/// of the same name replaces the global one, keeping its place).
fn load_presets(cwd: &str) -> Map<String, Value> {
    // The global presets: the text of pi's `<agent dir>/presets.json`, as a config value.
    let mut presets = match pith_sdk::host::config("presets") {
        Ok(Some(text)) => parse_presets(&text).unwrap_or_else(|err| {
            pith_sdk::host::warn(&format!(
                "Failed to load global presets from the config key presets: {err}"
            ));
            Map::new()
        }),
        Ok(None) => Map::new(),
        Err(pith_sdk::host::ConfigError::NotGranted(_)) => {
            pith_sdk::host::debug(
                "no global presets: the config key presets is not granted (grant.config)",
            );
            Map::new()
        }
    };
    let path = project_path(cwd);
    match std::fs::read_to_string(&path) {
        Ok(text) => match parse_presets(&text) {
            Ok(project) => presets.extend(project),
            Err(err) => pith_sdk::host::warn(&format!(
                "Failed to load project presets from {path}: {err}"
            )),
        },
        // pi's `existsSync` is false: no project presets.
        Err(err)
            if err.kind() == std::io::ErrorKind::NotFound
                && pith_sdk::host::workspace_dir().is_some() => {}
        // Unreadable, or no workspace grant (`file_error` says which).
        Err(err) => pith_sdk::host::warn(&format!(
            "Failed to load project presets: {}",
            pith_sdk::host::file_error(&path, &err)
        )),
    }
    presets
}

/// A thinking level by pi's name; pith has no `max`, its highest is `xhigh`.
fn thinking_level(name: &str) -> Option<ThinkingLevel> {
    Some(match name {
        "off" => ThinkingLevel::Off,
        "minimal" => ThinkingLevel::Minimal,
        "low" => ThinkingLevel::Low,
        "medium" => ThinkingLevel::Medium,
        "high" => ThinkingLevel::High,
        "xhigh" | "max" => ThinkingLevel::Xhigh,
        _ => return None,
    })
}

/// JavaScript's `trim()`: its white space is Unicode's without U+0085, and with U+FEFF.
fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

fn notify(message: &str, kind: ui::NotifyKind) {
    ui::notify(message, Some(kind));
}

impl Preset {
    /// `Available: …` of the unknown-preset messages.
    fn available(&self) -> String {
        let names = js_keys(&self.presets).join(", ");
        if names.is_empty() {
            "(none defined)".into()
        } else {
            names
        }
    }

    /// pi's `applyPreset`.
    fn apply_preset(&mut self, name: &str, preset: &Value) {
        // pi snapshots the model, thinking level and tools here for its TUI selector's and
        // shortcut's `(none)` entry, which the port leaves out.

        // The model, if the preset names one.
        if let (Some(provider), Some(model)) = (text(preset, "provider"), text(preset, "model")) {
            if models::find(provider, model).is_some() {
                match session_control::set_model(provider, model) {
                    Ok(()) => {}
                    Err(session_control::SetModelError::NoCredentials) => notify(
                        &format!("Preset \"{name}\": No API key for {provider}/{model}"),
                        ui::NotifyKind::Warning,
                    ),
                    Err(session_control::SetModelError::UnknownModel) => notify(
                        &format!("Preset \"{name}\": Model {provider}/{model} not found"),
                        ui::NotifyKind::Warning,
                    ),
                }
            } else {
                notify(
                    &format!("Preset \"{name}\": Model {provider}/{model} not found"),
                    ui::NotifyKind::Warning,
                );
            }
        }

        // The thinking level, if the preset sets one.
        if let Some(level) = text(preset, "thinkingLevel").and_then(thinking_level) {
            session_control::set_thinking_level(level);
        }

        // The tools, if the preset lists any.
        if let Some(tools) = preset
            .get("tools")
            .and_then(Value::as_array)
            .filter(|t| !t.is_empty())
        {
            let all: Vec<String> = session_control::all_tools()
                .into_iter()
                .map(|tool| tool.name)
                .collect();
            let known = |tool: &Value| tool.as_str().is_some_and(|t| all.iter().any(|a| a == t));
            let valid: Vec<String> = tools
                .iter()
                .filter(|t| known(t))
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            let invalid: Vec<String> = tools
                .iter()
                .filter(|t| !known(t))
                .map(|t| match t {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            if !invalid.is_empty() {
                notify(
                    &format!("Preset \"{name}\": Unknown tools: {}", invalid.join(", ")),
                    ui::NotifyKind::Warning,
                );
            }
            if !valid.is_empty() {
                let _ = session_control::set_active_tools(&valid);
            }
        }

        // Kept for the system prompt's instructions.
        self.active_name = Some(name.to_string());
        self.active = Some(preset.clone());
    }

    /// pi's `updateStatus`.
    fn update_status(&self) {
        match &self.active_name {
            Some(name) => ui::set_status("preset", Some(&format!("preset:{name}"))),
            None => ui::set_status("preset", None),
        }
    }

    /// pi's `session_start` handler.
    fn on_session_start(&mut self) {
        let cwd = session_read::cwd();
        self.presets = load_presets(&cwd);

        // The --preset flag.
        let flag = pith_sdk::extension::flag_text("preset").filter(|f| !f.is_empty());
        if let Some(flag) = &flag {
            match self.presets.get(flag).filter(|p| truthy(p)).cloned() {
                Some(preset) => {
                    self.apply_preset(flag, &preset);
                    notify(
                        &format!("Preset \"{flag}\" activated"),
                        ui::NotifyKind::Info,
                    );
                }
                None => notify(
                    &format!("Unknown preset \"{flag}\". Available: {}", self.available()),
                    ui::NotifyKind::Warning,
                ),
            }
        }

        // The preset the session had, from its last `preset-state` entry: its instructions
        // only, the model and tools are not applied again.
        if flag.is_none() {
            let remembered = session_read::all_entries()
                .into_iter()
                .filter_map(|entry| match entry.body {
                    entries::EntryBody::Custom(custom) if custom.custom_type == STATE_ENTRY => {
                        Some(custom.data)
                    }
                    _ => None,
                })
                .next_back()
                .flatten()
                .and_then(|data| serde_json::from_str::<Value>(&data).ok())
                .and_then(|data| data.get("name")?.as_str().map(str::to_string))
                .filter(|name| !name.is_empty());
            if let Some(name) = remembered
                && let Some(preset) = self.presets.get(&name).filter(|p| truthy(p)).cloned()
            {
                self.active_name = Some(name);
                self.active = Some(preset);
            }
        }

        self.update_status();
    }

    /// `/preset` without a name: pi's selector.
    fn show_preset_selector(&self) {
        if self.presets.is_empty() {
            notify(
                &format!(
                    "No presets defined. Add presets to the preset plugin's config key presets \
                     (plugins.preset.config.presets in settings.json) or {}",
                    project_path(&session_read::cwd())
                ),
                ui::NotifyKind::Warning,
            );
        }
        // pi shows its presets in a TUI list here (`ctx.ui.custom`), which over RPC does
        // nothing; pith has no TUI, so nothing is chosen.
    }
}

impl Extension for Preset {
    fn new() -> Self {
        Preset {
            presets: Map::new(),
            active_name: None,
            active: None,
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("preset")
            .on(&["session_start", "before_agent_start", "turn_start"])
            .command("preset", "Switch preset configuration")
            .flag(FlagSpec::text("preset", "Preset configuration to use"))
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::SessionStart(_) => self.on_session_start(),
            // The preset's instructions go after the system prompt.
            Event::BeforeAgentStart(start) => {
                if let Some(instructions) = self
                    .active
                    .as_ref()
                    .and_then(|preset| text(preset, "instructions"))
                {
                    return Ok(EventResult::AgentStart(AgentStartChanges {
                        message: None,
                        system_prompt: Some(format!("{}\n\n{instructions}", start.system_prompt)),
                    }));
                }
            }
            // The active preset is remembered in the session.
            Event::Agent(AgentEvent::TurnStart) => {
                if let Some(name) = &self.active_name {
                    let data = serde_json::json!({ "name": name });
                    session::append_entry(STATE_ENTRY, Some(&data.to_string()));
                }
            }
            _ => {}
        }
        Ok(EventResult::Continue)
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        if name != "preset" {
            return Err(format!("Unknown command: {name}"));
        }
        let name = js_trim(args);
        if name.is_empty() {
            self.show_preset_selector();
            return Ok(());
        }
        let Some(preset) = self.presets.get(name).filter(|p| truthy(p)).cloned() else {
            notify(
                &format!("Unknown preset \"{name}\". Available: {}", self.available()),
                ui::NotifyKind::Error,
            );
            return Ok(());
        };
        self.apply_preset(name, &preset);
        notify(
            &format!("Preset \"{name}\" activated"),
            ui::NotifyKind::Info,
        );
        self.update_status();
        Ok(())
    }
}

pith_sdk::export_extension!(Preset);
