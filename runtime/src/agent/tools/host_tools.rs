//! Host-defined tools (`set_host_tools`): tools the host executes. The runtime emits
//! `host_tool_call`, the host answers with any number of `host_tool_update` and one
//! `host_tool_result`; on abort the runtime emits `host_tool_cancel`. Late or unknown ids are
//! ignored; stdin EOF fails every pending call; an optional per-tool timeout turns a silent
//! host into a tool error instead of a hung run.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::event::{EventSink, SessionEvent};
use crate::content::{Content, ToolOutput};
use std::sync::Arc;

/// A tool the host implements, as `set_host_tools` declares it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostToolDefinition {
    /// The name the model calls.
    pub name: String,
    /// A label for UIs (the name by default).
    #[serde(default)]
    pub label: Option<String>,
    /// The description the model reads.
    pub description: String,
    /// The JSON schema of the arguments.
    pub parameters: Value,
    /// Fails the call when the host has not answered in this many milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl HostToolDefinition {
    /// Checks a definition list as the fork does: non-empty unique names, a description, an
    /// object schema.
    pub fn validate_all(tools: &[HostToolDefinition]) -> Result<(), HostToolError> {
        let mut seen = std::collections::HashSet::new();
        for (index, tool) in tools.iter().enumerate() {
            if tool.name.trim().is_empty() {
                return Err(HostToolError::Unnamed(index));
            }
            if tool.description.trim().is_empty() {
                return Err(HostToolError::Undescribed(tool.name.clone()));
            }
            if !tool.parameters.is_object() {
                return Err(HostToolError::NoSchema(tool.name.clone()));
            }
            if !seen.insert(tool.name.trim().to_string()) {
                return Err(HostToolError::Twice(tool.name.clone()));
            }
        }
        Ok(())
    }
}

/// Why `set_host_tools` refused a tool set (nothing changes then).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostToolError {
    /// A tool without a name (its index).
    #[error("Host tool at index {0} must provide a non-empty name")]
    Unnamed(usize),
    /// A tool without a description.
    #[error("Host tool \"{0}\" must provide a non-empty description")]
    Undescribed(String),
    /// A tool whose parameters are no JSON Schema object.
    #[error("Host tool \"{0}\" must provide a JSON Schema object")]
    NoSchema(String),
    /// Two tools with one name.
    #[error("Host tool \"{0}\" is declared twice")]
    Twice(String),
}

enum Reply {
    Result(ToolOutput),
    Closed,
}

struct Pending {
    tool: String,
    reply: oneshot::Sender<Reply>,
    updates: Option<mpsc::UnboundedSender<ToolOutput>>,
    /// The `host_tool_call` event, for a host that attaches while it waits.
    call: SessionEvent,
}

/// The bridge between tool calls and the host.
pub struct HostToolBridge {
    out: Arc<dyn EventSink>,
    pending: Mutex<HashMap<String, Pending>>,
    next_call: AtomicU64,
    next_cancel: AtomicU64,
    closed: AtomicBool,
}

/// A `result` or `partialResult` object from the host.
#[derive(Debug, Deserialize)]
pub struct HostResult {
    /// The content blocks.
    pub content: Vec<Content>,
    /// Details.
    #[serde(default)]
    pub details: Option<Value>,
}

impl HostToolBridge {
    /// A bridge sending its calls to `out`.
    pub fn new(out: Arc<dyn EventSink>) -> HostToolBridge {
        HostToolBridge {
            out,
            pending: Mutex::new(HashMap::new()),
            next_call: AtomicU64::new(1),
            next_cancel: AtomicU64::new(1),
            closed: AtomicBool::new(false),
        }
    }

    /// Asks the host to run `tool`; resolves with its result, or an error on abort, timeout or
    /// stdin EOF.
    pub async fn call(
        &self,
        tool_call_id: &str,
        tool: &HostToolDefinition,
        arguments: &Value,
        cancel: &CancellationToken,
        updates: Option<mpsc::UnboundedSender<ToolOutput>>,
    ) -> ToolOutput {
        if cancel.is_cancelled() {
            return ToolOutput::error(format!("Host tool \"{}\" was aborted", tool.name));
        }
        if self.closed.load(Ordering::SeqCst) {
            return ToolOutput::error(format!(
                "Host tool \"{}\" failed: the host closed its input",
                tool.name
            ));
        }
        let id = format!("host_{}", self.next_call.fetch_add(1, Ordering::SeqCst));
        let (reply, answer) = oneshot::channel();
        let call = SessionEvent::HostToolCall {
            id: id.clone(),
            tool_call_id: tool_call_id.to_string(),
            tool_name: tool.name.clone(),
            arguments: arguments.clone(),
        };
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                id.clone(),
                Pending {
                    tool: tool.name.clone(),
                    reply,
                    updates,
                    call: call.clone(),
                },
            );
        }
        self.out.emit(&call);
        let timeout = async {
            match tool.timeout_ms {
                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            answer = answer => match answer {
                Ok(Reply::Result(output)) => output,
                Ok(Reply::Closed) | Err(_) => ToolOutput::error(format!("Host tool \"{}\" failed: the host closed its input", tool.name)),
            },
            _ = cancel.cancelled() => {
                self.cancel(&id);
                ToolOutput::error(format!("Host tool \"{}\" was aborted", tool.name))
            }
            _ = timeout => {
                self.cancel(&id);
                ToolOutput::error(format!("Host tool \"{}\" timed out after {} ms", tool.name, tool.timeout_ms.unwrap_or(0)))
            }
        }
    }

    /// The `host_tool_call` events still waiting for their result, oldest first.
    pub fn pending_calls(&self) -> Vec<SessionEvent> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut calls: Vec<(u64, SessionEvent)> = pending
            .iter()
            .map(|(id, p)| {
                let order = id
                    .strip_prefix("host_")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                (order, p.call.clone())
            })
            .collect();
        calls.sort_by_key(|(order, _)| *order);
        calls.into_iter().map(|(_, call)| call).collect()
    }

    fn cancel(&self, id: &str) {
        let removed = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        if removed.is_some() {
            let cancel_id = format!(
                "host_cancel_{}",
                self.next_cancel.fetch_add(1, Ordering::SeqCst)
            );
            self.out.emit(&SessionEvent::HostToolCancel {
                id: cancel_id,
                target_id: id.to_string(),
            });
        }
    }

    /// A `host_tool_result`; unknown or late ids are ignored.
    pub fn on_result(&self, id: &str, result: HostResult, is_error: bool) {
        let Some(pending) = self.pending.lock().ok().and_then(|mut p| p.remove(id)) else {
            return;
        };
        let output = if is_error {
            let text: Vec<String> = result
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.clone()),
                    Content::Image { .. } => None,
                })
                .collect();
            let message = if text.is_empty() {
                "Host tool execution failed".to_string()
            } else {
                text.join("\n")
            };
            ToolOutput {
                structured: None,
                content: vec![Content::text(message)],
                details: Some(result.details.unwrap_or_else(|| json!({}))),
                is_error: true,
            }
        } else {
            ToolOutput {
                structured: None,
                content: result.content,
                details: result.details,
                is_error: false,
            }
        };
        tracing::debug!("host tool {} answered", pending.tool);
        let _ = pending.reply.send(Reply::Result(output));
    }

    /// A `host_tool_update`; unknown ids are ignored.
    pub fn on_update(&self, id: &str, partial: HostResult) {
        let Ok(pending) = self.pending.lock() else {
            return;
        };
        if let Some(updates) = pending.get(id).and_then(|p| p.updates.as_ref()) {
            let _ = updates.send(ToolOutput {
                structured: None,
                content: partial.content,
                details: partial.details,
                is_error: false,
            });
        }
    }

    /// stdin closed: every pending call fails, and later calls fail at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let drained: Vec<Pending> = self
            .pending
            .lock()
            .map(|mut p| p.drain().map(|(_, v)| v).collect())
            .unwrap_or_default();
        for pending in drained {
            let _ = pending.reply.send(Reply::Closed);
        }
    }
}
