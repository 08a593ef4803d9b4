//! A port of pi's `examples/extensions/dynamic-tools.ts`: tools registered after the session
//! has started. `session_start` registers `echo_session` (and notifies
//! `Registered dynamic tool: echo_session`); `/add-echo-tool <tool_name>` registers another echo
//! tool at run time (the name trimmed and lower-cased, `[a-z0-9_]+` only), refusing a name it
//! already registered. Each tool answers `<prefix><message>` with the details
//! `{"tool","prefix"}`, and brings a prompt snippet and a prompt guideline, as pi's.
//!
//! Differences from pi: pi keeps the extension (its set of registered names and the tools
//! registered) across `new_session`/`switch_session`; pith gives each session a fresh instance
//! and forgets its run-time tools, so a new session starts with `echo_session` only, and
//! `/add-echo-tool` can register a name again there. pi draws nothing of its own for these tools
//! (no `renderCall`/`renderResult`), so nothing is left out.

use std::collections::BTreeMap;

use pith_sdk::extension::*;

/// pi's `ECHO_PARAMS` (`Type.Object({message: Type.String({description})})`), as TypeBox
/// writes it (its key order).
const ECHO_PARAMS: &str = r#"{"type":"object","required":["message"],"properties":{"message":{"type":"string","description":"Message to echo"}}}"#;

/// The usage warning of `/add-echo-tool`.
const USAGE: &str = "Usage: /add-echo-tool <tool_name> (lowercase, numbers, underscores)";

struct DynamicTools {
    /// The names this instance registered (pi's `registeredToolNames`), with their prefixes.
    registered: BTreeMap<String, String>,
}

/// pi's `normalizeToolName`: trimmed, lower-cased, and only `[a-z0-9_]+`.
fn normalize_tool_name(input: &str) -> Option<String> {
    // JavaScript's `trim` also removes the byte-order mark, which Rust's does not.
    let trimmed = input
        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .to_lowercase();
    if trimmed.is_empty() {
        return None;
    }
    trimmed
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        .then_some(trimmed)
}

/// `text` as a JSON string.
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

impl DynamicTools {
    /// pi's `registerEchoTool`: false when this instance already registered `name`.
    fn register_echo_tool(
        &mut self,
        name: &str,
        label: &str,
        prefix: &str,
    ) -> Result<bool, String> {
        if self.registered.contains_key(name) {
            return Ok(false);
        }
        self.registered.insert(name.to_string(), prefix.to_string());
        let spec = ToolSpec {
            name: name.to_string(),
            label: label.to_string(),
            description: format!("Echo a message with prefix: {prefix}"),
            parameters: ECHO_PARAMS.to_string(),
            prompt_snippet: Some(format!(
                "Echo back user-provided text with {} prefix",
                prefix.trim()
            )),
            prompt_guidelines: vec![
                "Use echo_session when the user asks for exact echo output.".to_string(),
            ],
        };
        session_control::register_tool(&spec)?;
        Ok(true)
    }
}

impl Extension for DynamicTools {
    fn new() -> Self {
        DynamicTools {
            registered: BTreeMap::new(),
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("dynamic-tools")
            .on(&["session_start"])
            .command(
                "add-echo-tool",
                "Register a new echo tool dynamically: /add-echo-tool <tool_name>",
            )
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        if let Event::SessionStart(_) = event {
            self.register_echo_tool("echo_session", "Echo Session", "[session] ")?;
            ui::notify(
                "Registered dynamic tool: echo_session",
                Some(ui::NotifyKind::Info),
            );
        }
        Ok(EventResult::Continue)
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        if name != "add-echo-tool" {
            return Err(format!("Unknown command: {name}"));
        }
        let Some(tool_name) = normalize_tool_name(args) else {
            ui::notify(USAGE, Some(ui::NotifyKind::Warning));
            return Ok(());
        };
        let created = self.register_echo_tool(
            &tool_name,
            &format!("Echo {tool_name}"),
            &format!("[{tool_name}] "),
        )?;
        if !created {
            ui::notify(
                &format!("Tool already registered: {tool_name}"),
                Some(ui::NotifyKind::Warning),
            );
            return Ok(());
        }
        ui::notify(
            &format!("Registered dynamic tool: {tool_name}"),
            Some(ui::NotifyKind::Info),
        );
        Ok(())
    }

    fn execute_tool(
        &mut self,
        name: &str,
        _call_id: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolResult, ToolError> {
        let Some(prefix) = self.registered.get(name).cloned() else {
            return Err(ToolError::new(format!("Unknown tool: {name}")));
        };
        // The host checks the arguments against the schema, so `message` is a string.
        let message = match &arguments["message"] {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let mut result = ToolResult::text(format!("{prefix}{message}"));
        // pi's `{ tool: name, prefix }`, in its key order.
        result.details = Some(format!(
            "{{\"tool\":{},\"prefix\":{}}}",
            json_string(name),
            json_string(&prefix)
        ));
        Ok(result)
    }
}

pith_sdk::export_extension!(DynamicTools);
