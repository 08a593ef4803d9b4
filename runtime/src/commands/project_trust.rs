//! pi's `project_trust` at start-up: when a project has configuration of its own and nothing
//! decided its trust yet (no `--approve`/`--no-approve`, nothing in `trusted-projects.json`),
//! the user's extensions and those named with `-e` are asked first, in load order; the first
//! `yes` or `no` decides (and, with `remember`, is written to the record). The project's own
//! extensions are not asked: they load only once it is trusted. There is no session yet, so
//! the extensions run with a context of their own: dialogs get no answer and notices go to
//! stderr, as pi prints them.

use std::path::Path;
use std::sync::Arc;

use crate::agent::extensions::hooks::{
    Event, EventResult, ProjectTrustEvent, TrustAnswer, TrustDecision,
};
use crate::plugin_host::extension::ExtensionInstance;
use crate::plugin_host::session_context::Sessionless;
use crate::plugin_host::{HostOptions, PluginHost};

const EVENT: &str = "project_trust";

/// An extension's decision on the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Trusted or not.
    pub trusted: bool,
    /// To be written to `trusted-projects.json`.
    pub remember: bool,
    /// The extension that decided (its manifest's path).
    pub by: String,
}

/// True when `cwd` has configuration whose loading trust decides: pi's `.pi/` and
/// `.agents/skills/`, pith's `.pith/`.
pub fn has_own_configuration(cwd: &Path) -> bool {
    cwd.join(".pi").is_dir() || cwd.join(".pith").is_dir() || cwd.join(".agents/skills").is_dir()
}

/// Asks the extensions of `options` (the user's and `-e`'s; no project directory) that hear
/// `project_trust`; `None` when none of them decides. A failing extension is reported on
/// stderr and passed over.
pub async fn ask_extensions(
    options: HostOptions,
    mode: crate::agent::session::RunMode,
) -> Option<Verdict> {
    let cwd = options.workspace.display().to_string();
    let host = match PluginHost::load_deferring(options, false).await {
        Ok((host, _)) => host,
        Err(err) => {
            eprintln!("pith: the extensions could not be asked about the project's trust: {err}");
            return None;
        }
    };
    let plugins = host.plugins();
    let asked = plugins.iter().filter(|plugin| {
        plugin
            .meta
            .extension
            .as_ref()
            .is_some_and(|meta| meta.wants(EVENT))
    });
    for plugin in asked {
        let mut instance = ExtensionInstance::new(plugin.clone(), Arc::new(Sessionless));
        let event = Event::ProjectTrust(ProjectTrustEvent {
            cwd: cwd.clone(),
            mode: mode.into(),
            has_ui: false,
        });
        let trusted = match instance.on_event(&host, event).await {
            Ok(Ok(EventResult::Trust(TrustDecision { trusted, remember }))) => match trusted {
                TrustAnswer::Yes => Some((true, remember)),
                TrustAnswer::No => Some((false, remember)),
                TrustAnswer::Undecided => None,
            },
            Ok(Ok(_)) => None,
            Ok(Err(message)) => {
                eprintln!("pith: {}: project_trust failed: {message}", plugin.path);
                None
            }
            Err(err) => {
                eprintln!("pith: {}: project_trust failed: {err}", plugin.path);
                None
            }
        };
        if let Some((trusted, remember)) = trusted {
            return Some(Verdict {
                trusted,
                remember,
                by: plugin.path.clone(),
            });
        }
    }
    None
}
