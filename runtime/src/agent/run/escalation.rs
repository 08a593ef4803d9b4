//! Approvals for the host (`sandbox.approval`), asked with pi's `extension_ui_request`
//! `confirm` (every host can answer it). A "no", a cancel or a timeout leaves the call to the
//! mode, which refuses it with its reason.
//!
//! - `"on-escalation"` (and `"on-failure"`): when a first-party file tool's call would write
//!   where the mode does not allow, or read a path on the deny list, yes lets that one call
//!   reach the directory it needs. The shell is not asked before it runs: what a command will
//!   touch is not known then.
//! - `"on-failure"`: after a `bash` call failed with output that reads like a sandbox denial,
//!   yes runs that one command again outside the sandbox, and its result replaces the first.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::session::shared::Shared;
use crate::agent::tools::SessionTool;
use crate::content::ToolOutput;
use crate::plugin_host::Escalation;
use crate::plugin_host::discovery::Origin;
use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};
use crate::sandbox::{Approval, SandboxMode, SandboxPolicy};

/// What a first-party tool does with its `path`.
fn access(tool: &str) -> Option<bool> {
    match tool {
        "write" | "edit" => Some(true),
        "read" | "ls" | "find" | "grep" => Some(false),
        _ => None,
    }
}

/// `path` resolved against `cwd` and cleaned of `.` and `..`.
fn resolve(cwd: &Path, path: &str) -> PathBuf {
    crate::sandbox::clean(&cwd.join(path.trim_start_matches('@')))
}

/// The directory a call needs beyond the mode, and the reason the mode refuses it; `None` when
/// the mode allows the call.
pub fn needed(
    policy: &SandboxPolicy,
    cwd: &Path,
    tool: &str,
    args: &Value,
) -> Option<(PathBuf, String)> {
    let writes = access(tool)?;
    let path = resolve(cwd, args.get("path").and_then(Value::as_str).unwrap_or("."));
    let (dir, reason) = if writes {
        if policy.may_write(&path) {
            return None;
        }
        // The nearest directory that exists (the tool creates what is missing below it).
        let dir = path
            .ancestors()
            .skip(1)
            .find(|d| d.is_dir())?
            .canonicalize()
            .ok()?;
        // Never a directory that holds the deny list or the agent directory, nor `/`.
        if dir.parent().is_none() || policy.holds_protected(&dir) {
            return None;
        }
        (dir, policy.write_denial(&path))
    } else {
        if !policy.read_denied(&path) {
            return None;
        }
        let dir = if path.is_dir() {
            path.clone()
        } else {
            path.parent()?.to_path_buf()
        };
        (
            dir.canonicalize().ok()?,
            pith_sdk::sandbox::read_denied(&path),
        )
    };
    Some((dir, reason))
}

/// Asks the host about the call `call_id` when it needs more than the mode allows; the
/// directory to open for it when the host says yes.
pub async fn approve(
    shared: &Shared,
    call_id: &str,
    tool: &SessionTool,
    args: &Value,
) -> Escalation {
    Escalation {
        directory: approve_directory(shared, call_id, tool, args).await,
        unsandboxed_shell: false,
    }
}

async fn approve_directory(
    shared: &Shared,
    call_id: &str,
    tool: &SessionTool,
    args: &Value,
) -> Option<PathBuf> {
    let SessionTool::Plugin(spec, plugin) = tool else {
        return None;
    };
    let policy = shared.sandbox();
    if !policy.approval.asks_before() || plugin.origin != Origin::Embedded {
        return None;
    }
    let (dir, reason) = needed(&policy, &shared.cwd, &spec.name, args)?;
    let answer = shared
        .ui
        .request_about(
            UiRequest::Confirm {
                title: format!("Allow the {} tool beyond the sandbox?", spec.name),
                message: format!(
                    "{reason}. Allow this one call to use {:?}?",
                    dir.display().to_string()
                ),
                timeout_ms: None,
            },
            Some(call_id.to_string()),
        )
        .await;
    matches!(answer, UiAnswer::Confirmed(true)).then_some(dir)
}

/// What the sandbox denied a failed `bash` call, by its output (see
/// [`pith_sdk::sandbox::View::shell_hint`]), when `sandbox.approval` is `"on-failure"`.
fn shell_denial(policy: &SandboxPolicy, tool: &SessionTool, output: &ToolOutput) -> Option<String> {
    let SessionTool::Plugin(spec, plugin) = tool else {
        return None;
    };
    let applies = policy.approval == Approval::OnFailure
        && policy.mode != SandboxMode::FullAccess
        && plugin.origin == Origin::Embedded
        && (spec.name == "bash" || spec.name == "powershell")
        && output.is_error;
    if !applies {
        return None;
    }
    let view = pith_sdk::sandbox::View {
        mode: policy.mode.as_str().into(),
        writable: policy.writable(),
        deny_read: policy.deny_read.clone(),
        protected: policy.protected(),
        network: policy.network,
        home: Some(crate::agent_dir::home_dir()),
    };
    let hint = view.shell_hint(&output.text())?;
    // The lines that name what was denied, without the closing word on ownership.
    let named: Vec<&str> = hint
        .lines()
        .filter(|line| !line.contains("chown"))
        .map(|line| line.trim_start_matches("[sandbox] "))
        .collect();
    Some(named.join("\n"))
}

/// After a `bash` call failed on a sandbox denial (`"on-failure"`), asks the host whether to
/// run the command once more outside the sandbox; the escalation for that run on yes.
pub async fn approve_rerun(
    shared: &Shared,
    call_id: &str,
    tool: &SessionTool,
    args: &Value,
    output: &ToolOutput,
) -> Option<Escalation> {
    let policy = shared.sandbox();
    let denial = shell_denial(&policy, tool, output)?;
    let command = args.get("command").and_then(Value::as_str).unwrap_or("");
    let answer = shared
        .ui
        .request_about(
            UiRequest::Confirm {
                title: "Run this command outside the sandbox?".into(),
                message: format!(
                    "{command:?} failed in sandbox mode {}: {denial}. Run it once more without the sandbox?",
                    policy.mode.as_str()
                ),
                timeout_ms: None,
            },
            Some(call_id.to_string()),
        )
        .await;
    matches!(answer, UiAnswer::Confirmed(true)).then_some(Escalation {
        directory: None,
        unsandboxed_shell: true,
    })
}
