//! The `codemode` loadout as pi 1.5.2 presents it: the description's parts, the inline budget,
//! and the two modes.

use serde_json::json;

use super::catalog::{self, CodemodeSettings, Mode};
use crate::agent::tools::SessionTool;
use crate::agent::tools::host_tools::HostToolDefinition;

fn tool(name: &str, description: &str) -> SessionTool {
    SessionTool::Host(HostToolDefinition {
        name: name.into(),
        label: None,
        description: description.into(),
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        timeout_ms: None,
    })
}

fn codemode_description(tools: &[SessionTool]) -> String {
    match tools.last() {
        Some(SessionTool::Codemode(definition)) => definition.description.clone(),
        other => panic!("codemode comes last: {other:?}"),
    }
}

#[test]
fn with_mode_on_declared_tools_say_how_scripts_call_them() {
    let tools = vec![tool("bash", "Run a command."), tool("my-tool", "Mine.")];
    let offered = catalog::offer(tools, Vec::new(), &CodemodeSettings::default());
    assert_eq!(offered.len(), 3);
    assert_eq!(
        offered[0].description(),
        "Run a command.\n\nCodemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."
    );
    assert_eq!(
        offered[1].description(),
        "Mine.\n\nCodemode: `tools.my_tool(args)` resolves to a string."
    );
    // Every callable tool is declared: the description lists none.
    let description = codemode_description(&offered);
    assert!(description.starts_with("Run JavaScript that calls other tools."));
    assert!(description.ends_with("such as MCP tools."), "{description}");
    assert!(!description.contains("Nested tools:"));
}

#[test]
fn with_mode_only_the_tools_are_listed_in_codemode_and_not_declared() {
    let settings = CodemodeSettings {
        mode: Mode::Only,
        ..CodemodeSettings::default()
    };
    let offered = catalog::offer(
        vec![tool("bash", "Run a command."), tool("my-tool", "Mine.")],
        Vec::new(),
        &settings,
    );
    assert_eq!(offered.len(), 1, "only codemode is declared");
    let description = codemode_description(&offered);
    assert!(description.contains("\n\nNested tools:\n\n### `bash`\nRun a command.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { bash(args: "), "{description}");
    assert!(
        description.contains("### `my_tool` (`my-tool`)"),
        "{description}"
    );
}

#[test]
fn the_inline_budget_bounds_the_listed_declarations() {
    let settings = CodemodeSettings {
        mode: Mode::Only,
        inline_budget: 0,
        ..CodemodeSettings::default()
    };
    let offered = catalog::offer(vec![tool("bash", "Run a command.")], Vec::new(), &settings);
    let description = codemode_description(&offered);
    assert!(description.ends_with("Nested tools:"), "{description}");
}

#[test]
fn settings_are_read_as_pi_reads_them() {
    let settings = crate::settings::Settings::from_value(json!({
        "codemode": {"mode": "only", "inlineBudget": 10},
        "autoEnableCodemode": false,
    }));
    let read = CodemodeSettings::from_settings(&settings);
    assert_eq!(
        read,
        CodemodeSettings {
            mode: Mode::Only,
            inline_budget: 10,
            auto_enable: false
        }
    );
    let bad = crate::settings::Settings::from_value(
        json!({"codemode": {"mode": "sometimes", "inlineBudget": -1}}),
    );
    assert_eq!(
        CodemodeSettings::from_settings(&bad),
        CodemodeSettings::default()
    );
}

#[test]
fn an_mcp_tool_resolves_to_pis_call_tool_result_type() {
    assert_eq!(
        super::declaration::render_output_type(Some(&catalog::call_tool_result_schema())),
        "{ content: Array<{ data?: string; mimeType?: string; text?: string; type: \"text\" | \"image\" | \"audio\" | \"resource_link\" | \"resource\"; [key: string]: unknown; }>; isError?: boolean; structuredContent?: unknown; [key: string]: unknown; }"
    );
}
