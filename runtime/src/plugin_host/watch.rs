//! Hot reload: a watcher on the plugin directories. Changes to manifests and components are
//! debounced, then the host reloads (see [`super::reload`]) and the caller hears what changed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::PluginHost;
use super::reload::ReloadReport;

/// How long the directories must stay quiet before a reload.
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// Keeps the watch alive; dropping it stops watching.
pub struct PluginWatcher {
    _watcher: RecommendedWatcher,
}

/// Watches the host's plugin directories that exist; `on_reload` hears every reload that
/// changed the plugin set or met an error.
pub fn watch(
    host: Arc<PluginHost>,
    on_reload: impl Fn(ReloadReport) + Send + Sync + 'static,
) -> notify::Result<PluginWatcher> {
    let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && is_relevant(&event)
        {
            let _ = changed.send(());
        }
    })?;
    for dir in host.plugin_dirs() {
        if dir.is_dir() {
            watcher.watch(&dir, RecursiveMode::Recursive)?;
        }
    }
    tokio::spawn(async move {
        while changes.recv().await.is_some() {
            // Wait for the burst of events (a copy, a build) to settle.
            if !settled(&mut changes, DEBOUNCE).await {
                return;
            }
            let report = host.reload().await;
            if !report.is_unchanged() || !report.errors.is_empty() {
                on_reload(report);
            }
        }
    });
    Ok(PluginWatcher { _watcher: watcher })
}

/// Waits until `changes` stay quiet for `quiet`; false when the sender went away.
pub async fn settled(
    changes: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
    quiet: Duration,
) -> bool {
    loop {
        match tokio::time::timeout(quiet, changes.recv()).await {
            Ok(Some(())) => continue,
            Ok(None) => return false,
            Err(_) => return true,
        }
    }
}

/// True for changes to manifests and components (not reads, not other files).
fn is_relevant(event: &notify::Event) -> bool {
    let kind = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
    );
    kind && event.paths.iter().any(|path| is_plugin_file(path))
}

fn is_plugin_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "wasm" || ext == "toml")
}
