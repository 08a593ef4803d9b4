//! Session files in pi's format (pi-behaviour §9): JSONL, a version-3 header, then entries with
//! short ids and `parentId` forming a tree. Writes are append-only, one whole line per write;
//! nothing is written until the conversation has an assistant message. A file with bad lines
//! loads the good ones and reports the others.
//!
//! The conversation at the leaf (`context`) is in `context.rs` and the tree view
//! (`get_tree`) in `tree.rs`, child modules, so that the session-file fuzz target, which
//! compiles this file on its own, includes them too.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::agent::conversation::message::AgentMessage;
use crate::time::{iso, now_millis};

mod context;
mod entry;
pub mod held;
pub mod lines;
mod tree;
pub use entry::Entry;
use entry::Line;

/// The buffer a session file is read through when opened.
const READ_BUFFER: usize = 256 * 1024;

/// pi's session format version.
pub const VERSION: u64 = 3;

/// The conversation a session file describes at its leaf.
#[derive(Debug)]
pub struct Context<M = AgentMessage> {
    /// The messages, with their entry ids.
    pub messages: Vec<(String, M)>,
    /// The last thinking level set on the path.
    pub thinking_level: Option<String>,
    /// The last model on the path (provider, id).
    pub model: Option<(String, String)>,
}

impl<M> Context<M> {
    /// The messages and their entry ids, apart (as a session holds them).
    pub fn into_columns(self) -> (Vec<M>, Vec<String>) {
        self.messages
            .into_iter()
            .map(|(id, message)| (message, id))
            .unzip()
    }
}

/// No entry of the session has this id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Entry not found: {0}")]
pub struct UnknownEntry(pub String);

/// Why a session file could not be opened.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum OpenError {
    /// No file there.
    #[error("Session file not found: {0}")]
    Missing(String),
    /// The first line is not a session header.
    #[error("Invalid session file (no session header): {0}")]
    Invalid(String),
    /// It could not be read.
    #[error("Cannot read session file {0}: {1}")]
    Unreadable(String, String),
}

/// A session: its header, its entries, its leaf, and where it is written.
#[derive(Debug, Clone)]
pub struct SessionFile {
    path: Option<PathBuf>,
    header: Map<String, Value>,
    entries: Vec<Entry>,
    /// Entry id → position in `entries`.
    index: HashMap<String, usize>,
    leaf: Option<String>,
    written: bool,
}

impl SessionFile {
    /// A new session (written at `path` once it has an answer; in memory when `None`).
    pub fn create(
        path: Option<PathBuf>,
        id: &str,
        cwd: &Path,
        parent_session: Option<&str>,
    ) -> SessionFile {
        let mut header = Map::new();
        header.insert("type".into(), json!("session"));
        header.insert("version".into(), json!(VERSION));
        header.insert("id".into(), json!(id));
        header.insert("timestamp".into(), json!(iso(now_millis())));
        header.insert("cwd".into(), json!(cwd.display().to_string()));
        if let Some(parent) = parent_session.filter(|p| !p.is_empty()) {
            header.insert("parentSession".into(), json!(parent));
        }
        SessionFile {
            path,
            header,
            entries: Vec::new(),
            index: HashMap::new(),
            leaf: None,
            written: false,
        }
    }

    /// The default file for a new session in `dir`: `<ISO time with - for : and .>_<id>.jsonl`.
    pub fn default_path(dir: &Path, id: &str) -> PathBuf {
        let stamp = iso(now_millis()).replace([':', '.'], "-");
        dir.join(format!("{stamp}_{id}.jsonl"))
    }

    /// pi's directory for sessions of `cwd` under `sessions_root`: `--<cwd with / as ->--`.
    pub fn dir_for(sessions_root: &Path, cwd: &Path) -> PathBuf {
        let text = cwd.display().to_string();
        let trimmed = text.trim_start_matches(['/', '\\']);
        sessions_root.join(format!("--{}--", trimmed.replace(['/', '\\', ':'], "-")))
    }

    /// Opens a session file; bad lines after the header are skipped and returned as problems.
    /// The file is read as a stream, a line at a time: only the entries' heads are kept.
    pub fn open(path: &Path) -> Result<(SessionFile, Vec<String>), OpenError> {
        use std::io::BufRead;
        let shown = path.display().to_string();
        let unreadable =
            |err: std::io::Error| OpenError::Unreadable(shown.clone(), err.to_string());
        let file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(OpenError::Missing(shown));
            }
            Err(err) => return Err(unreadable(err)),
        };
        let mut reader = std::io::BufReader::with_capacity(READ_BUFFER, file);
        let mut line = Vec::new();
        // Each line with its place; a carriage return before the newline dropped.
        let mut offset = 0u64;
        let mut next_line = |line: &mut Vec<u8>| -> Result<Option<u64>, OpenError> {
            line.clear();
            let read = reader.read_until(b'\n', line).map_err(unreadable)?;
            if read == 0 {
                return Ok(None);
            }
            let at = offset;
            offset += read as u64;
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            Ok(Some(at))
        };
        next_line(&mut line)?;
        let header: Map<String, Value> = std::str::from_utf8(&line)
            .ok()
            .and_then(|line| serde_json::from_str::<Map<String, Value>>(line).ok())
            .filter(|h| {
                h.get("type").and_then(Value::as_str) == Some("session") && h.get("id").is_some()
            })
            .ok_or_else(|| OpenError::Invalid(shown.clone()))?;
        let mut entries = Vec::new();
        let mut problems = Vec::new();
        let mut number = 1;
        while let Some(at) = next_line(&mut line)? {
            number += 1;
            if line.trim_ascii().is_empty() {
                continue;
            }
            match std::str::from_utf8(&line)
                .ok()
                .and_then(|line| Entry::on_disk(line, at))
            {
                Some(entry) => entries.push(entry),
                None => problems.push(format!("{shown}:{number}: not a session entry, skipped")),
            }
        }
        let leaf = entries.last().map(|entry| entry.id().to_string());
        let index = index_of(&entries);
        Ok((
            SessionFile {
                path: Some(path.to_path_buf()),
                header,
                entries,
                index,
                leaf,
                written: true,
            },
            problems,
        ))
    }

    /// The session id.
    pub fn id(&self) -> &str {
        self.header.get("id").and_then(Value::as_str).unwrap_or("")
    }

    /// The file, unless in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// True once the file exists on disk.
    pub fn is_written(&self) -> bool {
        self.written
    }

    /// The type of the leaf entry.
    pub fn leaf_type(&self) -> Option<&str> {
        self.leaf
            .as_deref()
            .and_then(|id| self.entry(id))
            .map(Entry::kind)
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index.get(id).and_then(|i| self.entries.get(*i))
    }

    fn new_id(&self) -> String {
        loop {
            let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
            if self.entry(&id).is_none() {
                return id;
            }
        }
    }

    /// Appends an entry of `kind` with `fields` after the leaf; returns its id.
    pub fn append(&mut self, kind: &str, fields: Map<String, Value>) -> String {
        let id = self.new_id();
        let mut entry = Map::new();
        entry.insert("type".into(), json!(kind));
        entry.insert("id".into(), json!(id));
        entry.insert(
            "parentId".into(),
            self.leaf.clone().map_or(Value::Null, Value::String),
        );
        entry.insert("timestamp".into(), json!(iso(now_millis())));
        entry.extend(fields);
        let Some(entry) = Entry::from_map(&entry) else {
            // Only a value that cannot be JSON (a non-finite number) gets here.
            tracing::error!("an entry of type {kind} could not be written as JSON");
            return id;
        };
        self.index.insert(id.clone(), self.entries.len());
        self.entries.push(entry);
        self.leaf = Some(id.clone());
        self.persist();
        id
    }

    /// Appends a message entry.
    pub fn append_message(&mut self, message: &AgentMessage) -> String {
        // pi keeps extension messages as `custom_message` entries.
        if let AgentMessage::Custom(custom) = message {
            let mut fields = Map::new();
            fields.insert("customType".into(), json!(custom.custom_type));
            fields.insert("content".into(), custom.content.clone());
            fields.insert("display".into(), json!(custom.display));
            if let Some(details) = &custom.details {
                fields.insert("details".into(), details.clone());
            }
            return self.append("custom_message", fields);
        }
        let mut fields = Map::new();
        fields.insert("message".into(), message.to_json());
        self.append("message", fields)
    }

    /// Writes what is not on disk yet: everything (header first) once an assistant message
    /// exists, then one line per new entry.
    fn persist(&mut self) {
        let Some(path) = self.path.clone() else {
            return;
        };
        let result = if self.written {
            let last = self.entries.len().saturating_sub(1);
            append_lines(&path, None, &mut self.entries[last..])
        } else if self.entries.iter().any(is_answer) {
            let written = append_lines(&path, Some(&self.header), &mut self.entries);
            self.written = written.is_ok();
            written
        } else {
            Ok(())
        };
        if let Err(err) = result {
            tracing::error!("cannot write the session file {}: {err}", path.display());
        }
    }

    /// The entries from the root to `leaf`, in order.
    fn path_to(&self, leaf: Option<&str>) -> Vec<&Entry> {
        let mut path = Vec::new();
        let mut next = leaf;
        while let Some(id) = next {
            let Some(entry) = self.entry(id) else { break };
            path.push(entry);
            next = entry.parent();
            if path.len() > self.entries.len() {
                break; // a cycle in a damaged file
            }
        }
        path.reverse();
        path
    }

    /// Every user message in the whole file (all branches), in file order: (entry id, text).
    pub fn user_messages(&self) -> Vec<(String, String)> {
        let lines = self.lines();
        self.entries
            .iter()
            .filter(|e| e.kind() == "message")
            .filter_map(|e| match lines.message(e)? {
                AgentMessage::User(user) => Some((e.id().to_string(), user.content.text())),
                _ => None,
            })
            .filter(|(_, text)| !text.is_empty())
            .collect()
    }

    /// The session's name (the latest non-empty `session_info`).
    pub fn name(&self) -> Option<String> {
        self.entries
            .iter()
            .rev()
            .filter(|e| e.kind() == "session_info")
            .find_map(|e| {
                self.body(e)
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
            })
    }

    /// A new session holding the path from the root to `leaf` (labels left out), with this one
    /// as its parent; written at once when it contains an answer.
    pub fn branch(
        &self,
        leaf: Option<&str>,
        path: Option<PathBuf>,
        id: &str,
        cwd: &Path,
    ) -> SessionFile {
        let parent = self.path.as_ref().map(|p| p.display().to_string());
        let mut branched = SessionFile::create(path, id, cwd, parent.as_deref());
        branched.entries = self
            .path_to(leaf)
            .into_iter()
            .filter(|e| e.kind() != "label")
            .cloned()
            .collect();
        branched.index = index_of(&branched.entries);
        branched.leaf = branched.entries.last().map(|e| e.id().to_string());
        // The lines are this file's: held as text until written to the new one.
        let lines = self.lines();
        for entry in &mut branched.entries {
            if let Line::OnDisk { .. } = entry.line {
                let text = lines
                    .text(entry)
                    .map_or_else(|| "{}".to_string(), std::borrow::Cow::into_owned);
                entry.line = Line::Held(text.into_boxed_str());
            }
        }
        drop(lines);
        if branched.entries.iter().any(is_answer) {
            branched.written = false;
            if let Some(path) = branched.path.clone() {
                branched.written =
                    append_lines(&path, Some(&branched.header), &mut branched.entries).is_ok();
            }
        }
        branched
    }

    /// Moves the leaf to the entry `id` (`None`: before the first entry), so that the next
    /// entry starts a branch there; an unknown id is an error.
    pub fn set_leaf(&mut self, id: Option<&str>) -> Result<(), UnknownEntry> {
        if let Some(id) = id
            && !self.index.contains_key(id)
        {
            return Err(UnknownEntry(id.to_string()));
        }
        self.leaf = id.map(str::to_string);
        Ok(())
    }

    /// The header line.
    pub fn header(&self) -> &Map<String, Value> {
        &self.header
    }

    /// The folder the session was saved in (its header's `cwd`), when it names one.
    pub fn saved_cwd(&self) -> Option<std::path::PathBuf> {
        self.header
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|cwd| !cwd.is_empty())
            .map(std::path::PathBuf::from)
    }

    /// The id of the leaf entry, if any.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// `get_entries`: every entry in file order (header left out), or those after `since`.
    pub fn entries_since(&self, since: Option<&str>) -> Result<Vec<Value>, UnknownEntry> {
        let start = match since {
            None => 0,
            Some(id) => {
                self.index
                    .get(id)
                    .copied()
                    .ok_or_else(|| UnknownEntry(id.to_string()))?
                    + 1
            }
        };
        let lines = self.lines();
        Ok(self.entries[start..]
            .iter()
            .map(|entry| lines.value(entry))
            .collect())
    }

    /// The bytes the index of the file holds in memory, estimated: each entry's heads, its line
    /// when not on disk, and its place in the id index.
    pub fn held_bytes(&self) -> usize {
        let index = self.index.capacity() * (std::mem::size_of::<(String, usize)>() + 1)
            + self.index.keys().map(String::len).sum::<usize>();
        self.entries.iter().map(Entry::held_bytes).sum::<usize>() + index
    }

    /// Every entry, in file order.
    pub fn all_entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries from the root to the leaf, borrowed.
    pub fn path_to_leaf(&self) -> Vec<&Entry> {
        self.path_to(self.leaf.as_deref())
    }

    /// The entries from the root to the leaf (pi's branch entries).
    pub fn branch_entries(&self) -> Vec<Value> {
        let lines = self.lines();
        self.path_to_leaf()
            .into_iter()
            .map(|entry| lines.value(entry))
            .collect()
    }
}

/// True for a held message entry holding an answer: a session file is written from its
/// first one (an entry on disk was written already).
fn is_answer(entry: &Entry) -> bool {
    match &entry.line {
        Line::Held(text) if entry.kind() == "message" => {
            entry::message_role(text).as_deref() == Some("assistant")
        }
        _ => false,
    }
}

/// Entry id → position.
fn index_of(entries: &[Entry]) -> HashMap<String, usize> {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id().to_string(), i))
        .collect()
}

/// Appends whole lines, one `write` each (a crash loses at most the line being written): the
/// header first when one is given, then each held entry's line, which is then on disk.
fn append_lines(
    path: &Path,
    header: Option<&Map<String, Value>>,
    entries: &mut [Entry],
) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)?;
    // A file whose last line lacks its newline (pi writes one; an editor might not) gets one
    // first, so the next entry starts on a line of its own.
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::End(-1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    if let Some(header) = header {
        let mut bytes = serde_json::to_vec(header).unwrap_or_default();
        bytes.push(b'\n');
        file.write_all(&bytes)?;
    }
    // The place of each line: where the file ends before it is written (the file is only
    // appended to, by this session).
    let mut end = file.seek(SeekFrom::End(0))?;
    for entry in entries {
        let Line::Held(text) = &entry.line else {
            continue;
        };
        let mut bytes = Vec::with_capacity(text.len() + 1);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(b'\n');
        file.write_all(&bytes)?;
        let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
        entry.line = Line::OnDisk { offset: end, len };
        end += bytes.len() as u64;
    }
    Ok(())
}

/// The newest session file in `dir` whose first line is a session header.
pub fn latest_in(dir: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    candidates.sort();
    candidates
        .into_iter()
        .rev()
        .map(|(_, p)| p)
        .find(|p| SessionFile::open(p).is_ok())
}

/// A fresh session id and, unless sessions stay in memory, the file it goes to in `dir`.
pub fn new_session_file(
    dir: Option<&std::path::Path>,
    id: Option<&str>,
) -> (String, Option<PathBuf>) {
    let id = id.map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_string);
    let path = dir.map(|dir| SessionFile::default_path(dir, &id));
    (id, path)
}
