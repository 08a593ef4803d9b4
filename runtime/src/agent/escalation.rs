//! Approvals for the host (`sandbox.approval: "on-escalation"`): when a first-party tool call
//! would write where the sandbox mode does not allow, or read a path on the deny list, pith
//! asks the host with pi's `extension_ui_request` `confirm` (every host can answer it) and, on
//! yes, lets that one call reach the directory it needs. A "no", a cancel or a timeout leaves
//! the call to the mode, which refuses it with its reason. The shell is not asked: what a
//! command will touch is not known before it runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::session::Shared;
use super::tools::SessionTool;
use crate::plugin_host::discovery::Origin;
use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};
use crate::sandbox::{Approval, SandboxPolicy};

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
) -> Option<PathBuf> {
    let SessionTool::Plugin(spec, plugin) = tool else {
        return None;
    };
    let policy = shared.host.sandbox();
    if policy.approval != Approval::OnEscalation || plugin.origin != Origin::Embedded {
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
