//! An example extension: notifies on session start, registers `/hello` (whose argument
//! completes to a few names), and blocks bash calls that would wipe the root directory.

use pith_sdk::extension::*;

struct Hello {
    greeted: u32,
}

impl Extension for Hello {
    fn new() -> Self {
        Hello { greeted: 0 }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("hello")
            .on(&["session_start", "tool_call"])
            .command("hello", "Say hello")
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::SessionStart(_) => {
                ui::notify("hello from an extension", None);
                Ok(EventResult::Continue)
            }
            Event::ToolCall(call)
                if call.tool_name == "bash"
                    && call
                        .argument("command")
                        .is_some_and(|c| c.ends_with("rm -rf /")) =>
            {
                Ok(EventResult::block("Refusing to delete the root directory"))
            }
            _ => Ok(EventResult::Continue),
        }
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        if name != "hello" {
            return Err(format!("Unknown command: {name}"));
        }
        self.greeted += 1;
        ui::notify(&format!("hello {args} (#{})", self.greeted), None);
        Ok(())
    }

    fn complete_argument(&mut self, command: &str, prefix: &str) -> Vec<Completion> {
        if command != "hello" {
            return Vec::new();
        }
        ["world", "pith", "wasm"]
            .iter()
            .filter(|name| name.starts_with(prefix.trim_start()))
            .map(|name| Completion {
                value: name.to_string(),
                label: None,
                description: Some(format!("Say hello to {name}")),
            })
            .collect()
    }
}

pith_sdk::export_extension!(Hello);
