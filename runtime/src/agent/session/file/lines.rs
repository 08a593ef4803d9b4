//! Reading entries' lines back: one read of its place for one entry, the file read once for
//! many ([`Lines`]). The text read when the session was opened serves the first reading (the
//! conversation), so opening a session reads its file once. A line that is no longer where it
//! was (the file was cut or rewritten by another program) reads as missing, and is reported
//! once per reading.

use std::borrow::Cow;
use std::io::{Read, Seek, SeekFrom};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::SessionFile;
use super::entry::{Entry, Line};

/// Entries' lines, for reading many: the session file's text, read once.
pub struct Lines<'a> {
    file: &'a SessionFile,
    text: Option<bytes::Bytes>,
    lost: std::cell::Cell<usize>,
}

impl SessionFile {
    /// For reading many entries' bodies: the file read once (or the text read at opening).
    pub fn lines(&self) -> Lines<'_> {
        let on_disk = || {
            self.entries
                .iter()
                .any(|entry| matches!(entry.line, Line::OnDisk { .. }))
        };
        let text = self.warm.take().or_else(|| {
            let path = self.path.as_ref().filter(|_| on_disk())?;
            match std::fs::read(path) {
                Ok(bytes) => Some(bytes.into()),
                Err(err) => {
                    tracing::warn!("cannot read the session file {}: {err}", path.display());
                    None
                }
            }
        });
        Lines {
            file: self,
            text,
            lost: std::cell::Cell::new(0),
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
    pub fn text<'b>(&'b self, entry: &'b Entry) -> Option<&'b str> {
        let text = match &entry.line {
            Line::Held(text) => return Some(text),
            Line::OnDisk { offset, len } => self.text.as_ref().and_then(|all| {
                let start = usize::try_from(*offset).ok()?;
                let bytes = all.get(start..start.checked_add(*len as usize)?)?;
                std::str::from_utf8(bytes).ok()
            }),
        };
        let text = text.filter(|text| entry.is_line(text));
        if text.is_none() {
            self.lost.set(self.lost.get() + 1);
        }
        text
    }

    /// The entry's line read into `T` (a struct naming the keys it needs).
    pub fn read<T: DeserializeOwned>(&self, entry: &Entry) -> Option<T> {
        serde_json::from_str(self.text(entry)?).ok()
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
