//! Reading entries' lines back: one read of its place for one entry, a window of the file at
//! a time for many ([`Lines`]), so that a reading of the whole file in order takes a few large
//! reads and holds a window, never the file. A line that is no longer where it was (the file
//! was cut or rewritten by another program) reads as missing, and is reported once per
//! reading.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::io::{Read, Seek, SeekFrom};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::SessionFile;
use super::entry::{Entry, Line};

/// How much of the file a reading of many entries holds at once (below glibc's threshold for
/// mapping a block of its own: a window's memory is reused from the heap, not faulted in anew).
const WINDOW: usize = 192 * 1024;

/// Entries' lines, for reading many: the session file read a window at a time.
pub struct Lines<'a> {
    file: &'a SessionFile,
    window: RefCell<Window>,
    lost: Cell<usize>,
}

/// The part of the session file a reading holds.
#[derive(Default)]
struct Window {
    /// The file, once opened.
    handle: Option<std::fs::File>,
    /// True once it could not be opened (not tried again).
    failed: bool,
    /// Where the part starts in the file.
    start: u64,
    /// The part (its buffer is kept from one window to the next).
    bytes: Vec<u8>,
}

impl Window {
    /// The `len` bytes at `offset` of the file at `path`, reading the window there when they
    /// are not in the one held.
    fn line(&mut self, path: &std::path::Path, offset: u64, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(u64::try_from(len).ok()?)?;
        let held_end = self.start + self.bytes.len() as u64;
        if offset < self.start || end > held_end {
            self.fill(path, offset, len.max(WINDOW))?;
        }
        let from = usize::try_from(offset - self.start).ok()?;
        self.bytes.get(from..from.checked_add(len)?)
    }

    fn fill(&mut self, path: &std::path::Path, offset: u64, size: usize) -> Option<()> {
        if self.handle.is_none() && !self.failed {
            match std::fs::File::open(path) {
                Ok(file) => self.handle = Some(file),
                Err(err) => {
                    self.failed = true;
                    tracing::warn!("cannot read the session file {}: {err}", path.display());
                }
            }
        }
        let file = self.handle.as_mut()?;
        self.bytes.clear();
        // Room for the whole window first: reading into a buffer that grows as it goes copies
        // what it read at each growth.
        self.bytes.reserve(size);
        self.start = offset;
        let read = file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| file.take(size as u64).read_to_end(&mut self.bytes));
        if let Err(err) = read {
            tracing::warn!("cannot read the session file {}: {err}", path.display());
            self.bytes.clear();
            return None;
        }
        Some(())
    }
}

impl SessionFile {
    /// For reading many entries' lines: the file read a window at a time.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            file: self,
            window: RefCell::default(),
            lost: Cell::new(0),
        }
    }

    /// One entry's line, read from its place (see [`SessionFile::lines`] for many).
    pub fn text_of<'a>(&'a self, entry: &'a Entry) -> Option<Cow<'a, str>> {
        match &entry.line {
            Line::Held(text) => Some(Cow::Borrowed(text)),
            Line::OnDisk { offset, len } => {
                let path = self.path.as_ref()?;
                let read = || -> std::io::Result<Vec<u8>> {
                    let mut file = std::fs::File::open(path)?;
                    file.seek(SeekFrom::Start(*offset))?;
                    let mut bytes = vec![0; *len as usize];
                    file.read_exact(&mut bytes)?;
                    Ok(bytes)
                };
                let text = read().ok().and_then(|bytes| String::from_utf8(bytes).ok());
                match text.filter(|text| entry.is_line(text)) {
                    Some(text) => Some(Cow::Owned(text)),
                    None => {
                        tracing::warn!(
                            "the session file {} no longer holds entry {} where it was",
                            path.display(),
                            entry.id()
                        );
                        None
                    }
                }
            }
        }
    }

    /// One entry as a JSON object (empty when its line cannot be read back).
    pub fn body(&self, entry: &Entry) -> Map<String, Value> {
        self.text_of(entry)
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// One entry as a JSON value.
    pub fn value(&self, entry: &Entry) -> Value {
        Value::Object(self.body(entry))
    }
}

impl Lines<'_> {
    /// The entry's line as the file holds it.
    pub fn text<'b>(&'b self, entry: &'b Entry) -> Option<Cow<'b, str>> {
        match &entry.line {
            Line::Held(text) => Some(Cow::Borrowed(text)),
            Line::OnDisk { .. } => self.with_text(entry, |text| Cow::Owned(text.to_string())),
        }
    }

    /// `read` of the entry's line, borrowed where the reading holds it (not copied).
    pub fn with_text<R>(&self, entry: &Entry, read: impl FnOnce(&str) -> R) -> Option<R> {
        let text = match &entry.line {
            Line::Held(text) => return Some(read(text)),
            Line::OnDisk { offset, len } => {
                let path = self.file.path.as_ref()?;
                let mut window = self.window.borrow_mut();
                window
                    .line(path, *offset, *len as usize)
                    .and_then(|bytes| std::str::from_utf8(bytes).ok())
                    .filter(|text| entry.is_line(text))
                    .map(read)
            }
        };
        if text.is_none() {
            self.lost.set(self.lost.get() + 1);
        }
        text
    }

    /// The message of a message entry, read where the reading holds its line (not copied).
    pub fn message(
        &self,
        entry: &Entry,
    ) -> Option<crate::agent::conversation::message::AgentMessage> {
        self.with_text(entry, |text| super::held::read_message(text, entry.role()))?
    }

    /// The entry's line read into `T` (a struct naming the keys it needs).
    pub fn read<T: DeserializeOwned>(&self, entry: &Entry) -> Option<T> {
        self.with_text(entry, |text| serde_json::from_str(text).ok())?
    }

    /// The entry as a JSON object (empty when its line cannot be read back).
    pub fn body(&self, entry: &Entry) -> Map<String, Value> {
        self.read(entry).unwrap_or_default()
    }

    /// The entry as a JSON value.
    pub fn value(&self, entry: &Entry) -> Value {
        Value::Object(self.body(entry))
    }
}

impl Drop for Lines<'_> {
    fn drop(&mut self) {
        let lost = self.lost.get();
        if lost > 0 {
            let path = self
                .file
                .path
                .as_ref()
                .map_or_else(String::new, |p| p.display().to_string());
            tracing::warn!(
                "{lost} entries of the session file {path} are no longer where they were \
                 (the file was changed by another program) and were left out"
            );
        }
    }
}
