//! One running script's side in the host (the [`ScriptHost`] its engine reaches): its tool
//! calls run concurrently through the session's tool pipeline (pi's nested calls, ids
//! `<call>/<n>`), the globals the host answers (`searchTools`, `describeTool`,
//! `describeNamespace`), its output, and the records of its calls (`details.calls` for hosts,
//! `nestedCalls` on its result message).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::catalog::Callable;
use super::declaration::to_identifier;
use super::result::Item;
use crate::agent::session::shared::Shared;
use crate::agent::tools::SessionTool;
use crate::content::{Content, ToolOutput};
use crate::plugin_host::script_host::{CallKind, OutputKind, ScriptHost, Settlement};
use crate::plugin_host::session_context::BoxFuture;

/// Runs a nested call through the session's pipeline (the run's `run_nested_call`): the
/// session, the calling call's id, the call's id, the tool, its arguments, the callable tools.
pub type NestedCall =
    for<'a> fn(
        &'a Arc<Shared>,
        &'a str,
        &'a str,
        &'a str,
        &'a Value,
        &'a [SessionTool],
        &'a CancellationToken,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ToolOutput> + Send + 'a>>;

/// pi's limits of the nested-call record on a result message.
const MAX_RECORDED_CALLS: usize = 256;
const MAX_ARGUMENT_BYTES_PER_CALL: usize = 8 * 1024;
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
const MAX_ERROR_CHARS: usize = 500;
/// pi's preview sizes of `details.calls`.
const ARGS_PREVIEW_CHARS: usize = 200;

/// The first `chars` characters of `text`, with `...` when cut (pi's `truncateText`).
fn preview(text: &str, chars: usize) -> String {
    if text.chars().count() > chars {
        let kept: String = text.chars().take(chars.saturating_sub(3)).collect();
        format!("{kept}...")
    } else {
        text.to_string()
    }
}

/// The record of a script's nested calls (pi's `NestedCallRecorder`).
#[derive(Default)]
struct Recorder {
    calls: Vec<Value>,
    complete: bool,
    argument_bytes: usize,
}

/// One script's host side.
pub struct ScriptRun {
    shared: Arc<Shared>,
    parent: String,
    callable: Vec<Callable>,
    tools: Vec<SessionTool>,
    cancel: CancellationToken,
    nested: NestedCall,
    next_call: AtomicU32,
    pending: AtomicUsize,
    ended: mpsc::UnboundedSender<Settlement>,
    receiver: tokio::sync::Mutex<mpsc::UnboundedReceiver<Settlement>>,
    output: Mutex<Vec<Item>>,
    /// `details.calls`: `{id, name, args, status, durationMs?, error?}`.
    calls: Mutex<Vec<Value>>,
    recorder: Mutex<Recorder>,
    updates: mpsc::UnboundedSender<ToolOutput>,
}

impl ScriptRun {
    /// The host side of the script the call `parent` runs, calling `callable` tools.
    pub fn new(
        shared: Arc<Shared>,
        parent: String,
        callable: Vec<Callable>,
        cancel: CancellationToken,
        nested: NestedCall,
        updates: mpsc::UnboundedSender<ToolOutput>,
    ) -> ScriptRun {
        let (ended, receiver) = mpsc::unbounded_channel();
        let tools = callable.iter().map(|c| c.tool.clone()).collect();
        ScriptRun {
            shared,
            parent,
            callable,
            tools,
            cancel,
            nested,
            next_call: AtomicU32::new(1),
            pending: AtomicUsize::new(0),
            ended,
            receiver: tokio::sync::Mutex::new(receiver),
            output: Mutex::new(Vec::new()),
            calls: Mutex::new(Vec::new()),
            recorder: Mutex::new(Recorder {
                complete: true,
                ..Recorder::default()
            }),
            updates,
        }
    }

    /// The tools as the engine gets them: `[{name, jsName, description}]`.
    pub fn tools_json(&self) -> String {
        let tools: Vec<Value> = self
            .callable
            .iter()
            .map(|tool| {
                json!({"name": tool.name(), "jsName": to_identifier(tool.name()), "description": tool.sample()})
            })
            .collect();
        Value::Array(tools).to_string()
    }

    /// The output so far.
    pub fn take_output(&self) -> Vec<Item> {
        std::mem::take(&mut *self.output.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// `details`: the calls (those still running marked cancelled when `finished`).
    pub fn details(&self, finished: bool) -> Value {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if finished {
            for call in calls.iter_mut() {
                if call["status"] == "running" {
                    call["status"] = json!("cancelled");
                }
            }
        }
        json!({"calls": calls.clone()})
    }

    /// The tool calls made, as `name (status)` (for a failed script's summary).
    pub fn call_summary(&self) -> String {
        let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if calls.is_empty() {
            return "No tool calls were made.".into();
        }
        let listed: Vec<String> = calls
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    c["name"].as_str().unwrap_or(""),
                    c["status"].as_str().unwrap_or("")
                )
            })
            .collect();
        format!(
            "Tool calls made before the failure (they are not undone): {}",
            listed.join(", ")
        )
    }

    /// pi's `nestedCalls`: `{calls, complete}`, or none when no call was made.
    pub fn nested_record(&self) -> Option<Value> {
        let recorder = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if recorder.calls.is_empty() && recorder.complete {
            return None;
        }
        let complete =
            recorder.complete && recorder.calls.iter().all(|c| c["status"] != "unfinished");
        Some(json!({"calls": recorder.calls.clone(), "complete": complete}))
    }

    fn publish(&self) {
        let _ = self.updates.send(ToolOutput {
            content: Vec::new(),
            details: Some(self.details(false)),
            is_error: false,
            structured: None,
        });
    }

    fn settle(&self, id: u32, result: Result<Option<String>, String>) {
        let settlement = match result {
            Ok(payload) => Settlement {
                id,
                ok: true,
                payload,
                properties: None,
            },
            Err(message) => Settlement {
                id,
                ok: false,
                payload: Some(message),
                properties: None,
            },
        };
        let _ = self.ended.send(settlement);
    }

    /// Starts a tool call in its own task.
    fn start_tool(self: &Arc<Self>, id: u32, name: String, arguments: Option<String>) {
        let args: Value = arguments
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_else(|| json!({}));
        let call_id = format!(
            "{}/{}",
            self.parent,
            self.next_call.fetch_add(1, Ordering::SeqCst)
        );
        let position = {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            // pi's: the record names the call `<script>/?` until it returns.
            calls.push(json!({
                "id": format!("{}/?", self.parent),
                "name": name,
                "args": preview(&args.to_string(), ARGS_PREVIEW_CHARS),
                "status": "running",
            }));
            calls.len() - 1
        };
        let recorded = self.record_start(&call_id, &name, &args);
        self.publish();
        let run = self.clone();
        tokio::spawn(async move {
            let began = std::time::Instant::now();
            let output = (run.nested)(
                &run.shared,
                &run.parent,
                &call_id,
                &name,
                &args,
                &run.tools,
                &run.cancel,
            )
            .await;
            let duration = began.elapsed();
            let text = output.text();
            let failed = text_or(&text, &name);
            {
                let mut calls = run.calls.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(call) = calls.get_mut(position) {
                    if !run.cancel.is_cancelled() {
                        call["id"] = json!(call_id);
                    }
                    call["durationMs"] = json!(duration.as_secs_f64() * 1000.0);
                    if output.is_error {
                        call["status"] = json!(if run.cancel.is_cancelled() {
                            "cancelled"
                        } else {
                            "error"
                        });
                        call["error"] = json!(preview(&failed, MAX_ERROR_CHARS));
                    } else {
                        call["status"] = json!("ok");
                    }
                }
            }
            run.record_finish(recorded, output.is_error, &text, duration);
            run.publish();
            let value = run.script_value(&name, &output, duration);
            run.settle(id, value.map(|v| Some(v.to_string())));
        });
    }

    /// pi's `toScriptValue`: a tool with an output schema resolves to its structured result
    /// (on failure too, when it has one); others to their text; failures reject with their text.
    fn script_value(
        &self,
        name: &str,
        output: &ToolOutput,
        duration: std::time::Duration,
    ) -> Result<Value, String> {
        let has_schema = self
            .callable
            .iter()
            .find(|c| c.name() == name)
            .is_some_and(|c| c.output_schema().is_some());
        if has_schema && let Some(structured) = structured_value(name, output, duration) {
            return Ok(structured);
        }
        let text = output.text();
        if output.is_error {
            return Err(text_or(&text, name));
        }
        Ok(Value::String(text))
    }

    fn record_start(&self, id: &str, name: &str, args: &Value) -> Option<usize> {
        let mut recorder = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if recorder.calls.len() >= MAX_RECORDED_CALLS {
            recorder.complete = false;
            return None;
        }
        let mut record = json!({"id": id, "name": name, "status": "unfinished"});
        let bytes = args.to_string().len();
        if bytes > MAX_ARGUMENT_BYTES_PER_CALL
            || recorder.argument_bytes + bytes > MAX_ARGUMENT_BYTES_TOTAL
        {
            record["argumentsBytes"] = json!(bytes);
            recorder.complete = false;
        } else {
            record["arguments"] = args.clone();
            recorder.argument_bytes += bytes;
        }
        recorder.calls.push(record);
        Some(recorder.calls.len() - 1)
    }

    fn record_finish(
        &self,
        index: Option<usize>,
        is_error: bool,
        text: &str,
        duration: std::time::Duration,
    ) {
        let Some(index) = index else { return };
        let mut recorder = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(record) = recorder.calls.get_mut(index) {
            record["status"] = json!(if is_error { "error" } else { "ok" });
            record["durationMs"] = json!(duration.as_millis() as u64);
            if is_error && !text.is_empty() {
                record["error"] = json!(text.chars().take(MAX_ERROR_CHARS).collect::<String>());
            }
        }
    }

    /// A global's answer (pi's discovery globals), its arguments the JSON array it got.
    fn global(&self, name: &str, arguments: Option<&str>) -> Result<Option<Value>, String> {
        let args: Vec<Value> = arguments
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default();
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
        match name {
            "searchTools" => {
                let Value::String(query) = arg(0) else {
                    return Err("searchTools() expects a query string".into());
                };
                let options = arg(1);
                let limit = match options.get("limit") {
                    None | Some(Value::Null) => 8,
                    Some(limit) => match limit.as_u64().filter(|l| *l > 0) {
                        Some(limit) => limit as usize,
                        None => return Err("searchTools() limit must be a positive integer".into()),
                    },
                };
                let namespace = match options.get("namespace") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(n)) if n.is_empty() => None,
                    Some(Value::String(n)) => Some(n.clone()),
                    Some(_) => return Err("searchTools() namespace must be a string".into()),
                };
                Ok(Some(super::discovery::search(
                    &self.callable,
                    &query,
                    limit,
                    namespace.as_deref(),
                )))
            }
            "describeTool" => {
                let Value::String(name) = arg(0) else {
                    return Err("describeTool() expects a tool name".into());
                };
                Ok(self
                    .callable
                    .iter()
                    .find(|c| c.name() == name || to_identifier(c.name()) == name)
                    .map(|c| Value::String(c.sample())))
            }
            "describeNamespace" => {
                let Value::String(name) = arg(0) else {
                    return Err("describeNamespace() expects a namespace name".into());
                };
                Ok(super::discovery::namespace(&self.callable, &name))
            }
            other => Err(format!("{other} is not available")),
        }
    }
}

/// `Tool "<name>" failed` when a failure has no text.
fn text_or(text: &str, name: &str) -> String {
    if text.is_empty() {
        format!("Tool \"{name}\" failed")
    } else {
        text.to_string()
    }
}

/// What bash, read and MCP tools resolve to: pi 1.5's structured results (a shell's on a
/// non-zero exit too; read's image block for an image).
fn structured_value(
    name: &str,
    output: &ToolOutput,
    duration: std::time::Duration,
) -> Option<Value> {
    if let Some(structured) = &output.structured {
        return Some(structured.clone());
    }
    let millis = Some(duration.as_millis() as u64);
    match name {
        "bash" | "powershell" if output.is_error => {
            let text = output.text();
            let (body, code) = text.rsplit_once("\n\nCommand exited with code ")?;
            let code: i64 = code.trim().parse().ok()?;
            Some(json!({
                "output": body,
                "truncated": false,
                "exit_code": code,
                "wall_time_seconds": duration.as_secs(),
            }))
        }
        "read" if !output.is_error => {
            let image = output.content.iter().find_map(|c| match c {
                Content::Image { data, mime_type } => Some((data, mime_type)),
                _ => None,
            });
            match image {
                Some((data, mime_type)) => Some(json!({
                    "type": "image",
                    "data": data,
                    "mimeType": mime_type,
                    "note": output.text(),
                })),
                None => crate::agent::events::structured_content(name, output, millis),
            }
        }
        _ => crate::agent::events::structured_content(name, output, millis),
    }
}

impl ScriptHost for Arc<ScriptRun> {
    fn start_call(&self, kind: CallKind, id: u32, name: String, arguments: Option<String>) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        match kind {
            CallKind::Tool => self.start_tool(id, name, arguments),
            CallKind::Global => {
                let answer = self.global(&name, arguments.as_deref());
                self.settle(id, answer.map(|v| v.map(|v| v.to_string())));
            }
        }
    }

    fn wait_calls(&self) -> BoxFuture<Vec<Settlement>> {
        let run = self.clone();
        Box::pin(async move {
            if run.pending.load(Ordering::SeqCst) == 0 {
                return Vec::new();
            }
            let mut receiver = run.receiver.lock().await;
            let Some(first) = receiver.recv().await else {
                return Vec::new();
            };
            let mut ended = vec![first];
            while let Ok(more) = receiver.try_recv() {
                ended.push(more);
            }
            run.pending.fetch_sub(ended.len(), Ordering::SeqCst);
            ended
        })
    }

    fn output(&self, kind: OutputKind, data: String, mime_type: Option<String>) {
        let item = match kind {
            OutputKind::Text => Item::Text {
                text: data,
                console: false,
            },
            OutputKind::Console => Item::Text {
                text: data,
                console: true,
            },
            OutputKind::Image => Item::Image {
                data,
                mime_type: mime_type.unwrap_or_else(|| "image/png".into()),
            },
        };
        self.output
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(item);
    }
}
