//! The timers and file watches extensions set (`wake-ups`): each calls its extension back with
//! a `timer` or `file-change` event, queued with the observed events so it arrives in order and
//! only when the extension is free. They end with the instance that set them (a new session's
//! fresh instance, a reload) and with the session.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::hooks::{Event, FileChangeEvent};
use super::{Extensions, lock};

/// The kind of the events a wake-up queues for one extension: `wake:<plugin id>`.
pub(super) const WAKE: &str = "wake:";

/// How long a watched path must stay quiet before its changes are called back, as one event.
const SETTLE: Duration = Duration::from_millis(50);

/// The wake-ups of a session's extensions, by (plugin id, the extension's id).
#[derive(Default)]
pub(super) struct WakeUps {
    timers: Mutex<HashMap<(String, String), tokio::task::JoinHandle<()>>>,
    watches: Mutex<HashMap<(String, String), RecommendedWatcher>>,
}

impl WakeUps {
    /// Ends every wake-up of `plugin`.
    pub(super) fn clear(&self, plugin: &str) {
        lock(&self.timers).retain(|(owner, _), timer| {
            let keep = owner != plugin;
            if !keep {
                timer.abort();
            }
            keep
        });
        lock(&self.watches).retain(|(owner, _), _| owner != plugin);
    }
}

impl Drop for WakeUps {
    fn drop(&mut self) {
        for timer in lock(&self.timers).values() {
            timer.abort();
        }
    }
}

impl Extensions {
    /// Calls `plugin` back with `timer(id)` after `delay` (and every `delay` when `repeat`).
    pub fn set_timer(self: &Arc<Self>, plugin: &str, id: &str, delay: Duration, repeat: bool) {
        let extensions: Weak<Extensions> = Arc::downgrade(self);
        let (owner, name) = (plugin.to_string(), id.to_string());
        let timer = tokio::spawn(async move {
            loop {
                tokio::time::sleep(delay).await;
                let Some(extensions) = extensions.upgrade() else {
                    return;
                };
                extensions.wake(&owner, Event::Timer(name.clone()));
                if !repeat {
                    return;
                }
            }
        });
        let key = (plugin.to_string(), id.to_string());
        if let Some(replaced) = lock(&self.wake_ups.timers).insert(key, timer) {
            replaced.abort();
        }
    }

    /// Cancels `plugin`'s timer `id`; false when none was pending.
    pub fn cancel_timer(&self, plugin: &str, id: &str) -> bool {
        let key = (plugin.to_string(), id.to_string());
        lock(&self.wake_ups.timers)
            .remove(&key)
            .is_some_and(|timer| {
                let pending = !timer.is_finished();
                timer.abort();
                pending
            })
    }

    /// Watches `path` (existing, already checked to be one the extension may read) for
    /// `plugin`, calling it back with `file-change(id, paths)`.
    pub fn watch(
        self: &Arc<Self>,
        plugin: &str,
        id: &str,
        path: &Path,
        hidden: Vec<PathBuf>,
    ) -> Result<(), String> {
        let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel::<Vec<PathBuf>>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event
                    && matches!(
                        event.kind,
                        EventKind::Create(_)
                            | EventKind::Modify(_)
                            | EventKind::Remove(_)
                            | EventKind::Any
                    )
                {
                    let _ = changed.send(event.paths);
                }
            })
            .map_err(|err| format!("cannot watch {}: {err}", path.display()))?;
        watcher
            .watch(path, RecursiveMode::Recursive)
            .map_err(|err| format!("cannot watch {}: {err}", path.display()))?;
        let extensions: Weak<Extensions> = Arc::downgrade(self);
        let (owner, name) = (plugin.to_string(), id.to_string());
        tokio::spawn(async move {
            while let Some(first) = changes.recv().await {
                let mut paths = first;
                // A burst settles into one event.
                loop {
                    match tokio::time::timeout(SETTLE, changes.recv()).await {
                        Ok(Some(more)) => paths.extend(more),
                        Ok(None) => return,
                        Err(_) => break,
                    }
                }
                let mut seen = std::collections::BTreeSet::new();
                // Changes under a protected path (beneath the watched one) are not told.
                let paths: Vec<String> = paths
                    .into_iter()
                    .filter(|p| !hidden.iter().any(|h| p.starts_with(h)))
                    .map(|p| p.display().to_string())
                    .filter(|p| seen.insert(p.clone()))
                    .collect();
                if paths.is_empty() {
                    continue;
                }
                let Some(extensions) = extensions.upgrade() else {
                    return;
                };
                extensions.wake(
                    &owner,
                    Event::FileChange(FileChangeEvent {
                        id: name.clone(),
                        paths,
                    }),
                );
            }
        });
        lock(&self.wake_ups.watches).insert((plugin.to_string(), id.to_string()), watcher);
        Ok(())
    }

    /// Stops `plugin`'s watch `id`; false when there was none.
    pub fn unwatch(&self, plugin: &str, id: &str) -> bool {
        lock(&self.wake_ups.watches)
            .remove(&(plugin.to_string(), id.to_string()))
            .is_some()
    }

    /// Queues `event` for `plugin` alone, in order with the observed events.
    fn wake(&self, plugin: &str, event: Event) {
        self.observe_typed(&format!("{WAKE}{plugin}"), || event);
    }
}
