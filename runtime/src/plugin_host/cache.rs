//! The on-disk cache, keyed by content hash: compiled components (so a restart does not
//! recompile), each plugin's `describe()` metadata (so startup needs neither), and an index
//! from plugin file to hash (so startup does not re-hash unchanged files). Every write goes to
//! a temporary file that is then renamed, so a crash never leaves a torn entry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use wasmtime::component::Component;

use super::engine::PluginEngine;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Deserialized from the disk cache.
    Hit,
    /// Compiled (and written to the cache when there is one).
    Compiled,
    /// Loaded from native code compiled when pith was built (first-party components).
    Precompiled,
}

/// The cache directory, or none (everything is compiled in memory).
pub struct Cache {
    dir: Option<PathBuf>,
    index: Mutex<HashIndex>,
    compiled: AtomicUsize,
    hits: AtomicUsize,
    precompiled: AtomicUsize,
}

/// Counts of how components were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Components compiled from WebAssembly.
    pub compiled: usize,
    /// Components deserialized from the disk cache.
    pub hits: usize,
    /// First-party components loaded from the native code built into the binary.
    pub precompiled: usize,
}

#[derive(Default, Serialize, Deserialize)]
struct HashIndex {
    /// Plugin file path → (length, modification time in ns, content hash).
    files: HashMap<String, (u64, u128, String)>,
    #[serde(skip)]
    dirty: bool,
}

impl Cache {
    /// A cache in `dir` (created on first write), or an in-memory-only one with `None`.
    pub fn new(dir: Option<PathBuf>) -> Cache {
        let index = dir
            .as_ref()
            .and_then(|d| std::fs::read(d.join("index.json")).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Cache {
            dir,
            index: Mutex::new(index),
            compiled: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
            precompiled: AtomicUsize::new(0),
        }
    }

    /// The content hash of the file at `path`, from the index when its length and modification
    /// time are unchanged, else by reading and hashing it.
    pub fn file_hash(&self, path: &Path) -> std::io::Result<String> {
        let meta = std::fs::metadata(path)?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let key = path.to_string_lossy().into_owned();
        if let Ok(index) = self.index.lock()
            && let Some((len, time, hash)) = index.files.get(&key)
            && *len == meta.len()
            && *time == mtime
        {
            return Ok(hash.clone());
        }
        let hash = content_hash(&std::fs::read(path)?);
        if let Ok(mut index) = self.index.lock() {
            index.files.insert(key, (meta.len(), mtime, hash.clone()));
            index.dirty = true;
        }
        Ok(hash)
    }

    /// Writes the file-hash index if it changed.
    pub fn flush_index(&self) {
        let (Some(dir), Ok(mut index)) = (&self.dir, self.index.lock()) else {
            return;
        };
        if !index.dirty {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(&*index)
            && write_atomic(&dir.join("index.json"), &bytes).is_ok()
        {
            index.dirty = false;
        }
    }

    /// The component with content `hash`: from the native code built into the binary when
    /// there is some that fits this engine, else deserialized from the cache, else compiled
    /// from `bytes()` and cached. A corrupt cache entry is recompiled and replaced.
    pub fn component(
        &self,
        engine: &PluginEngine,
        hash: &str,
        precompiled: &'static [u8],
        bytes: impl FnOnce() -> std::io::Result<Vec<u8>>,
    ) -> Result<(Component, CacheOutcome), CompileError> {
        if !precompiled.is_empty() {
            // SAFETY: `precompiled` is built into the binary by its build script from
            // `Engine::precompile_component` (never read from outside), and wasmtime checks the
            // header and that the code fits this engine's configuration before using it.
            match unsafe { Component::deserialize(engine.engine(), precompiled) } {
                Ok(component) => {
                    self.precompiled.fetch_add(1, Ordering::Relaxed);
                    return Ok((component, CacheOutcome::Precompiled));
                }
                Err(err) => tracing::info!(
                    "compiling a first-party component: its built-in native code does not fit \
                     this engine ({err})"
                ),
            }
        }
        let path = self.dir.as_ref().map(|d| {
            d.join("components")
                .join(format!("{hash}-{}.cwasm", engine.compatibility_tag()))
        });
        if let Some(component) = path
            .as_deref()
            .and_then(|path| self.read_entry(engine, path))
        {
            return Ok((component, CacheOutcome::Hit));
        }
        // Several pith processes started at once with a new plugin compile it once: the others
        // wait for the first one's entry and read it.
        let compiling = path.as_deref().and_then(compile_lock);
        if compiling.is_some()
            && let Some(component) = path
                .as_deref()
                .and_then(|path| self.read_entry(engine, path))
        {
            return Ok((component, CacheOutcome::Hit));
        }
        let bytes =
            bytes().map_err(|err| CompileError(format!("cannot read the component: {err}")))?;
        let component = Component::new(engine.engine(), &bytes)
            .map_err(|err| CompileError(describe_compile_error(&err)))?;
        if let Some(path) = &path {
            match component.serialize() {
                Ok(serialized) => {
                    if let Err(err) = write_atomic(path, &serialized) {
                        tracing::warn!("cannot cache {}: {err}", path.display());
                    }
                }
                Err(err) => tracing::warn!("cannot serialize a compiled component: {err}"),
            }
        }
        self.compiled.fetch_add(1, Ordering::Relaxed);
        Ok((component, CacheOutcome::Compiled))
    }

    /// The entry at `path`, when there is a good one (counted as a hit).
    fn read_entry(&self, engine: &PluginEngine, path: &Path) -> Option<Component> {
        // Read into memory rather than mapping the file: a file truncated under a mapping
        // would fault the process (SIGBUS), and a copy cannot be changed underneath us.
        let serialized = std::fs::read(path).ok()?;
        // SAFETY: files in this directory are written only by `write_atomic` from
        // `Component::serialize` of this engine configuration (the tag is in the name), and
        // wasmtime checks the header and engine compatibility before using them.
        match unsafe { Component::deserialize(engine.engine(), &serialized) } {
            Ok(component) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(component)
            }
            Err(err) => {
                tracing::warn!("recompiling {}: {err}", path.display());
                None
            }
        }
    }

    /// How components were obtained so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
            precompiled: self.precompiled.load(Ordering::Relaxed),
        }
    }

    /// The cached metadata for content `hash`, if any.
    pub fn metadata<T: for<'de> Deserialize<'de>>(&self, hash: &str) -> Option<T> {
        let path = self.dir.as_ref()?.join("meta").join(format!("{hash}.json"));
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Stores metadata for content `hash`.
    pub fn store_metadata<T: Serialize>(&self, hash: &str, value: &T) {
        let Some(dir) = &self.dir else { return };
        let path = dir.join("meta").join(format!("{hash}.json"));
        if let Ok(bytes) = serde_json::to_vec(value)
            && let Err(err) = write_atomic(&path, &bytes)
        {
            tracing::warn!("cannot cache {}: {err}", path.display());
        }
    }
}

/// Why a component could not be compiled.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CompileError(pub String);

fn describe_compile_error(err: &wasmtime::Error) -> String {
    let chain: Vec<String> = err.chain().map(|e| e.to_string()).collect();
    format!("not a valid WebAssembly component: {}", chain.join(": "))
}

/// The content hash used as a cache key (BLAKE3, hex).
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// An exclusive lock on compiling the entry at `path` (a file in the cache's `locks/`, held
/// until dropped), waited for while another process holds it; `None` when the lock cannot be
/// had (a read-only cache), and the component is compiled all the same.
fn compile_lock(path: &Path) -> Option<std::fs::File> {
    let locks = path.parent()?.parent()?.join("locks");
    std::fs::create_dir_all(&locks).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(locks.join(path.file_name()?).with_extension("lock"))
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
