//! `pith tool <name> [json]`: calls a tool once in the current directory and prints the result
//! as JSON (`content`, `details`, `isError`), for plugin authors trying their tools.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::plugin_host::PluginHost;

/// Runs the call and prints the result; exit code 1 on an error result or a failed call.
pub async fn run(host: &PluginHost, name: &str, arguments: &str) -> ExitCode {
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => {
            eprintln!("pith: the tool arguments must be a JSON object");
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("pith: the tool arguments are not JSON: {err}");
            return ExitCode::from(2);
        }
    };
    match host.call_tool(name, "cli", &arguments, None, None).await {
        Ok(output) => {
            println!(
                "{}",
                json!({"content": output.content, "details": output.details, "isError": output.is_error})
            );
            if output.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(err) => {
            eprintln!("pith: {err}");
            ExitCode::FAILURE
        }
    }
}
