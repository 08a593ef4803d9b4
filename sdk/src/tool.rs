//! Tool plugins: implement [`Tool`] for each tool and list them in [`export_tools!`](crate::export_tools).

pub use crate::bindings::imports::pith::plugin0_1_0::types::{
    Content, ToolError, ToolResult, ToolSpec,
};
pub use crate::host::{resolve_path, workspace_dir};
pub use serde_json::{Value, json};

/// One call of a tool.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The call's id.
    pub id: String,
    /// The arguments the model gave (a JSON object that matched the schema).
    pub arguments: Value,
}

impl ToolCall {
    /// Deserializes the arguments into `T`; a mismatch is an error the model sees.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, ToolError> {
        serde_json::from_value(self.arguments.clone())
            .map_err(|err| ToolError::new(format!("Invalid arguments: {err}")))
    }
}

/// A tool the model can call.
pub trait Tool {
    /// The name the model calls it by.
    const NAME: &'static str;
    /// The description the model reads.
    const DESCRIPTION: &'static str;

    /// The JSON schema of the arguments object.
    fn parameters() -> Value;

    /// Runs one call.
    fn execute(call: ToolCall) -> Result<ToolResult, ToolError>;

    /// A human label; the name by default.
    fn label() -> String {
        Self::NAME.to_string()
    }

    /// A one-line summary for the system prompt's tool list.
    fn prompt_snippet() -> Option<String> {
        None
    }

    /// Guideline lines this tool adds to the system prompt.
    fn prompt_guidelines() -> Vec<String> {
        Vec::new()
    }

    /// The whole spec, from the items above.
    fn spec() -> ToolSpec {
        ToolSpec {
            name: Self::NAME.to_string(),
            label: Self::label(),
            description: Self::DESCRIPTION.to_string(),
            parameters: Self::parameters().to_string(),
            prompt_snippet: Self::prompt_snippet(),
            prompt_guidelines: Self::prompt_guidelines(),
        }
    }
}

/// Reports the accumulated partial result of the running call (a `tool_execution_update`).
pub fn report_progress(partial: &ToolResult) {
    crate::bindings::tool_world::pith::plugin0_1_0::tool_progress::report(partial);
}

/// Runs `T` when `name` is its name; used by [`export_tools!`](crate::export_tools).
#[doc(hidden)]
pub fn __try_execute<T: Tool>(
    name: &str,
    call_id: &str,
    arguments: &str,
) -> Option<Result<ToolResult, ToolError>> {
    if name != T::NAME {
        return None;
    }
    Some(match serde_json::from_str::<Value>(arguments) {
        Ok(arguments) => T::execute(ToolCall {
            id: call_id.to_string(),
            arguments,
        })
        .map_err(|mut error| {
            if let Some(hint) = crate::sandbox::grant_hint(&error.message) {
                error.message.push_str(&hint);
            }
            error
        }),
        Err(err) => Err(ToolError::new(format!("Invalid arguments JSON: {err}"))),
    })
}

/// Exports the listed [`Tool`]s as this component's `tool` interface.
///
/// ```ignore
/// pith_sdk::export_tools!(WordCount, LineCount);
/// ```
#[macro_export]
macro_rules! export_tools {
    ($($tool:ty),+ $(,)?) => {
        #[doc(hidden)]
        pub struct __PithTools;

        impl $crate::bindings::tool_world::exports::pith::plugin0_1_0::tool::Guest for __PithTools {
            fn describe() -> ::std::vec::Vec<$crate::tool::ToolSpec> {
                ::std::vec![$(<$tool as $crate::tool::Tool>::spec()),+]
            }

            fn execute(
                name: ::std::string::String,
                call_id: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<$crate::tool::ToolResult, $crate::tool::ToolError> {
                $(
                    if let Some(result) = $crate::tool::__try_execute::<$tool>(&name, &call_id, &arguments) {
                        return result;
                    }
                )+
                Err($crate::tool::ToolError::new(::std::format!("Unknown tool: {name}")))
            }
        }

        $crate::bindings::tool_world::__export_tool_world!(__PithTools);
    };
}
