//! Hot reload: a watcher on the plugin directories. Changes to manifests and components are
//! debounced, then the host reloads (see [`super::reload`]) and the caller hears what changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::host::PluginHost;
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
    let roots: Vec<PathBuf> = host
        .plugin_dirs()
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    let watched = roots.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && is_relevant(&event, &watched)
        {
            let _ = changed.send(());
        }
    })?;
    for dir in &roots {
        watcher.watch(dir, RecursiveMode::Recursive)?;
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

/// True for changes to manifests and components, and for entries coming into or leaving a
/// plugin directory whole (a plugin folder moved in or out, as an installer's rename or a
/// `mv` does: one event that names the folder only). Not reads, not other files.
fn is_relevant(event: &notify::Event, roots: &[PathBuf]) -> bool {
    let kind = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
    );
    kind && event.paths.iter().any(|path| {
        is_plugin_file(path) || path.parent().is_some_and(|p| roots.iter().any(|r| r == p))
    })
}

fn is_plugin_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "wasm" || ext == "toml")
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{ModifyKind, RenameMode};

    fn event(kind: EventKind, path: &str) -> notify::Event {
        notify::Event::new(kind).add_path(PathBuf::from(path))
    }

    #[test]
    fn a_plugin_folder_moved_in_or_out_is_a_change() {
        let roots = [PathBuf::from("/p")];
        let renamed = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        assert!(is_relevant(&event(renamed, "/p/word-count"), &roots));
        let gone = EventKind::Modify(ModifyKind::Name(RenameMode::From));
        assert!(is_relevant(&event(gone, "/p/word-count"), &roots));
        let component = EventKind::Create(notify::event::CreateKind::File);
        assert!(is_relevant(
            &event(component, "/p/word-count/tool.wasm"),
            &roots
        ));
        let other = EventKind::Create(notify::event::CreateKind::File);
        assert!(!is_relevant(
            &event(other, "/p/word-count/notes.md"),
            &roots
        ));
        let read = EventKind::Access(notify::event::AccessKind::Read);
        assert!(!is_relevant(&event(read, "/p/word-count"), &roots));
    }
}
