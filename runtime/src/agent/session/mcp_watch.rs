//! A changed `mcp.json` (the user's or the trusted project's) applies without a restart, as
//! the plugin directories do: the files' directories are watched, a burst of changes settles,
//! and the servers start anew when their configuration changed (see [`Shared::reload_mcp`]).

use std::sync::{Arc, Weak};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::agent::session::shared::Shared;

/// How long the files must stay quiet before they are read again.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// Watches the MCP files of `shared`'s session when one of them exists (a file made later is
/// read by `reload`); `None` when there is nothing to watch or the platform refuses. Dropping
/// the watcher stops watching.
pub fn watch(shared: &Arc<Shared>) -> Option<RecommendedWatcher> {
    let files = shared.mcp_files();
    if !files.iter().any(|f| f.is_file()) {
        return None;
    }
    let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
    let names: Vec<std::path::PathBuf> = files.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && matches!(
                event.kind,
                EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
            )
            && event.paths.iter().any(|p| names.iter().any(|n| n == p))
        {
            let _ = changed.send(());
        }
    })
    .ok()?;
    let mut watching = false;
    for file in &files {
        if let Some(dir) = file.parent().filter(|d| d.is_dir()) {
            watching |= watcher.watch(dir, RecursiveMode::NonRecursive).is_ok();
        }
    }
    if !watching {
        return None;
    }
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        while changes.recv().await.is_some() {
            if !crate::plugin_host::watch::settled(&mut changes, DEBOUNCE).await {
                return;
            }
            let Some(shared) = weak.upgrade() else { return };
            shared.reload_mcp();
        }
    });
    Some(watcher)
}
