//! pi 1.5.2's `codemode` tool: the model writes a JavaScript script that calls the session's
//! other tools; only what the script outputs reaches the model. The script runs in the
//! first-party script engine (a WebAssembly component with a JavaScript engine, held to its
//! memory and computation limits by wasmtime); each tool call it makes runs through the
//! session's ordinary tool pipeline, concurrently, as a nested call (`parentToolCallId`).
//!
//! - [`catalog`]: what scripts may call and how the tool presents it.
//! - [`declaration`], [`source`]: pi's TypeScript declarations and the options line.
//! - `script_run`: the script's host side; `discovery`: its search globals; `store`: its
//!   values across scripts; `result`: pi's layout of its result.

pub mod catalog;
#[cfg(test)]
mod catalog_tests;
pub mod declaration;
mod discovery;
mod result;
mod script_run;
pub mod source;
mod store;

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::session::shared::Shared;
use crate::content::{Content, ToolOutput};
use crate::plugin_host::CallError;
use crate::plugin_host::script_host::{Ending, Script, ScriptHost};

pub use script_run::NestedCall;
pub use source::constrained_sampling;

/// The globals the host answers, as the engine gets them.
const GLOBALS: &str = r#"[{"name":"searchTools","spread":true},{"name":"describeTool","spread":true},{"name":"describeNamespace","spread":true}]"#;

/// How a script that did not complete failed (pi's `formatError` head).
fn failure_head(ending: &Result<Ending, String>) -> Option<String> {
    match ending {
        Ok(ending) if ending.ok => None,
        Ok(ending) => {
            let error: Value = ending
                .payload
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or(Value::Null);
            let stack = error.get("stack").and_then(Value::as_str);
            let name = error.get("name").and_then(Value::as_str).unwrap_or("Error");
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            Some(match stack {
                Some(stack) => stack.to_string(),
                None => format!("{name}: {message}"),
            })
        }
        Err(head) => Some(head.clone()),
    }
}

/// Why the engine stopped a script, as pi words its heads.
fn stopped(err: CallError, timeout_ms: Option<u64>) -> String {
    match err {
        CallError::Cancelled { .. } => "Script aborted: Execution aborted".into(),
        CallError::Deadline { deadline_ms, .. } => format!(
            "Script timed out: the script computed for more than {deadline_ms} ms (settings plugins.codemode.limits.deadlineMs)"
        ),
        CallError::Timeout { .. } => format!(
            "Script timed out: Execution timed out after {} ms",
            timeout_ms.unwrap_or(0)
        ),
        CallError::MemoryLimit { limit_mb, .. } => format!(
            "InternalError: out of memory (a script has {limit_mb} MB; filter or aggregate large data instead of accumulating it)"
        ),
        CallError::StackOverflow { .. } => "InternalError: stack overflow".into(),
        other => format!("Script sandbox failed: {other}"),
    }
}

/// pi's `valueText`: a returned value as a text item (strings as they are, else compact JSON).
fn value_text(payload: &str) -> Option<String> {
    match serde_json::from_str::<Value>(payload).ok()? {
        Value::String(text) => Some(text),
        other => Some(other.to_string()),
    }
}

/// Runs the `codemode` call `id` with `args` (`{code}`); its result in pi's layout. `nested`
/// runs the script's tool calls through the session's pipeline.
pub async fn run(
    shared: &Arc<Shared>,
    id: &str,
    args: &Value,
    cancel: &CancellationToken,
    updates: mpsc::UnboundedSender<ToolOutput>,
    nested: NestedCall,
) -> ToolOutput {
    let began = std::time::Instant::now();
    let code = args.get("code").and_then(Value::as_str).unwrap_or("");
    let source = match source::parse_source(code) {
        Ok(source) => source,
        Err(message) => {
            return ToolOutput {
                details: Some(json!({})),
                ..ToolOutput::error(message)
            };
        }
    };
    // A script that names an MCP server's tools, or looks tools up, waits for the servers'
    // first connections (pi's `reachesTools`).
    if code.contains("mcp__")
        || [
            "searchTools",
            "describeNamespace",
            "describeTool",
            "ALL_TOOLS",
        ]
        .iter()
        .any(|global| code.contains(global))
    {
        let hub = shared.mcp();
        tokio::select! {
            _ = hub.wait_settled() => {}
            _ = cancel.cancelled() => {}
        }
    }
    let callable = catalog::callable(
        &shared.declared_tools(&shared.host.tools()),
        shared.mcp().tools(),
        &catalog::guidelines_of,
    );
    let values = store::read(shared);
    let scripts = cancel.child_token();
    let run = Arc::new(script_run::ScriptRun::new(
        shared.clone(),
        id.to_string(),
        callable,
        scripts.clone(),
        nested,
        updates,
    ));
    let script = Script {
        code: source.code.clone(),
        tools: run.tools_json(),
        globals: GLOBALS.to_string(),
        store: store::engine_json(&values),
    };
    let host: Arc<dyn ScriptHost> = Arc::new(run.clone());
    let running = shared.host.run_script(script, host, scripts.clone());
    let ended = match source.timeout_ms {
        Some(ms) => match tokio::time::timeout(std::time::Duration::from_millis(ms), running).await
        {
            Ok(ended) => ended,
            Err(_) => Err(CallError::Timeout {
                plugin: "codemode".into(),
                timeout_ms: ms,
            }),
        },
        None => running.await,
    };
    // Calls still running when the script ends are cancelled.
    scripts.cancel();
    let ending = if cancel.is_cancelled() {
        Err("Script aborted: Execution aborted".to_string())
    } else {
        ended.map_err(|err| stopped(err, source.timeout_ms))
    };
    let mut output = run.take_output();
    if let Ok(ending) = &ending
        && ending.ok
    {
        if let Some(writes) = &ending.writes {
            store::append_writes(shared, writes);
        }
        if let Some(text) = ending.payload.as_deref().and_then(value_text) {
            output.push(result::Item::Text {
                text,
                console: false,
            });
        }
    }
    let head = failure_head(&ending);
    let mut items = result::format_output(&output);
    if let Some(head) = &head {
        items.push(Content::text(format!(
            "Script error:\n{head}\n\n{}",
            run.call_summary()
        )));
    }
    let max_tokens = source
        .max_output_tokens
        .unwrap_or(result::DEFAULT_MAX_OUTPUT_TOKENS);
    let (items, full_output) =
        result::truncate_output(result::join_adjacent_text(items), max_tokens);
    let items = result::join_adjacent_text(result::save_images(items));
    let mut content = vec![result::header(head.is_none(), began.elapsed())];
    content.extend(items);
    let mut details = run.details(true);
    if let Some(path) = full_output {
        details["fullOutputPath"] = json!(path);
    }
    if let Some(record) = run.nested_record() {
        shared
            .nested_calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_string(), record);
    }
    ToolOutput {
        content,
        details: Some(details),
        is_error: head.is_some(),
        structured: None,
    }
}
