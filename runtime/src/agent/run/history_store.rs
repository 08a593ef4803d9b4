//! The prefix cache on disk: a session reopened by a later process takes its provider prefix
//! from the file the last one left, instead of learning the whole conversation again.
//!
//! One file per session file, in the cache directory (`history/<hash of the session's
//! path>.prefix`): a header line naming the cache key (the model, its settings and the
//! provider plugin, as in memory), then records, each the items a prefix grew by and what the
//! prefix then covers: a message count and the *identity chain* of those messages (each
//! message's entry id and the place of its line in the session file, or its content when it
//! is not a plain line, chained with a hash). A record is only used when the conversation's
//! chain at its count is the same; the first one that differs ends what is used. Files are
//! appended to as the prefix grows (a turn writes what it added) and the least recently
//! written ones beyond [`KEPT_FILES`] are removed.
//!
//! The prefix a session holds is the file's records, read when a request is sent (see
//! `plugin_host::history_prefix`): a long session's prefix costs no memory.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, IoSlice, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::agent::conversation::messages::Messages;
use crate::plugin_host::history_prefix::{Prefix, Segment, StoredRun};

/// How many sessions' prefixes the cache directory keeps.
pub const KEPT_FILES: usize = 32;

const MAGIC: &str = "pith-history-prefix 1";

/// Where the prefix of the session file `session` is kept.
pub fn location(session: &Path) -> PathBuf {
    let full = std::fs::canonicalize(session).unwrap_or_else(|_| session.to_path_buf());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    full.hash(&mut hasher);
    crate::agent_dir::cache_dir()
        .join("history")
        .join(format!("{:016x}.prefix", hasher.finish()))
}

/// A conversation's identity chain, extended message by message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Chain {
    /// How many messages it covers.
    pub messages: usize,
    /// Their chained identities.
    pub hash: u64,
}

impl Chain {
    /// The chain extended to `to` messages of `messages`; `None` when one of them has no
    /// identity (a conversation not from a session file).
    pub fn extended(self, messages: &dyn Messages, to: usize) -> Option<Chain> {
        let mut chain = self;
        while chain.messages < to {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            chain.hash.hash(&mut hasher);
            messages.identity(chain.messages)?.hash(&mut hasher);
            chain = Chain {
                messages: chain.messages + 1,
                hash: hasher.finish(),
            };
        }
        Some(chain)
    }
}

/// A prefix read back: what it covers and its items.
pub struct Loaded {
    /// The chain at its end.
    pub chain: Chain,
    /// The items (runs of the file, not read).
    pub prefix: Prefix,
    /// True when every record of the file was taken (one that no longer matches the
    /// conversation leaves the file to be written anew).
    pub whole: bool,
    /// Where the records taken end.
    pub end: u64,
}

/// A session's prefix file, open: appended to as the prefix grows, and read by the prefix's
/// stored runs.
#[derive(Debug, Clone)]
pub struct PrefixFile {
    file: Arc<File>,
}

impl PrefixFile {
    /// A new prefix file at `path` under `key`, empty. It is written beside the path and moved
    /// there, so that the runs of a file it replaces stay readable.
    pub fn create(path: &Path, key: u64) -> io::Result<PrefixFile> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let fresh = path.with_extension("prefix.new");
        let _ = std::fs::remove_file(&fresh);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&fresh)?;
        file.write_all(format!("{MAGIC} {key:016x}\n").as_bytes())?;
        std::fs::rename(&fresh, path)?;
        forget_old(path);
        Ok(PrefixFile {
            file: Arc::new(file),
        })
    }

    /// The file's length now.
    pub fn size(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    /// Records that the prefix grew by `items` (in pieces) to cover `chain`; the items' place
    /// in the file. The record is one write of its head and the pieces.
    pub fn append(&self, items: &[Bytes], chain: Chain) -> io::Result<StoredRun> {
        let len: usize = items.iter().map(Bytes::len).sum();
        let mut head = Vec::with_capacity(RECORD_HEAD);
        head.push(b'R');
        head.extend_from_slice(&(chain.messages as u64).to_le_bytes());
        head.extend_from_slice(&chain.hash.to_le_bytes());
        head.extend_from_slice(&(len as u64).to_le_bytes());
        let end = self.file.metadata()?.len();
        let mut slices: Vec<IoSlice<'_>> = std::iter::once(&head[..])
            .chain(items.iter().map(|item| &item[..]))
            .map(IoSlice::new)
            .collect();
        let mut left = &mut slices[..];
        while !left.is_empty() {
            match (&*self.file).write_vectored(left) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(written) => IoSlice::advance_slices(&mut left, written),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(StoredRun {
            file: self.file.clone(),
            offset: end + RECORD_HEAD as u64,
            len,
        })
    }
}

/// A record's head: `R`, the message count, the chain's hash, the items' length.
const RECORD_HEAD: usize = 25;

/// Reads the longest prefix of the file at `path` stored under `key` whose chain is the
/// conversation's: the records' heads are read, their items left in the file.
pub fn load(path: &Path, key: u64, messages: &dyn Messages) -> Option<(PrefixFile, Loaded)> {
    let file = Arc::new(
        std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .ok()?,
    );
    let size = file.metadata().ok()?.len();
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, &*file);
    let header = format!("{MAGIC} {key:016x}\n");
    let mut head = vec![0; header.len()];
    reader.read_exact(&mut head).ok()?;
    if head != header.as_bytes() {
        return None;
    }
    let mut at = header.len() as u64;
    let mut chain = Chain::default();
    let mut runs = Vec::new();
    let mut whole = true;
    let mut record = [0u8; RECORD_HEAD];
    while at < size {
        whole = false;
        if reader.read_exact(&mut record).is_err() || record[0] != b'R' {
            break;
        }
        let word =
            |from: usize| u64::from_le_bytes(record[from..from + 8].try_into().unwrap_or_default());
        let (count, hash, len) = (word(1), word(9), word(17));
        let Some(end) = (at + RECORD_HEAD as u64)
            .checked_add(len)
            .filter(|&end| end <= size)
        else {
            break; // a record cut short (a write that did not finish)
        };
        let (Ok(count), Ok(len)) = (usize::try_from(count), usize::try_from(len)) else {
            break;
        };
        if count > messages.len() || count < chain.messages {
            break;
        }
        chain = match chain.extended(messages, count) {
            Some(next) if next.hash == hash => next,
            _ => break,
        };
        runs.push(Segment::Stored(StoredRun {
            file: file.clone(),
            offset: at + RECORD_HEAD as u64,
            len,
        }));
        if reader.seek_relative(i64::try_from(len).ok()?).is_err() {
            break;
        }
        at = end;
        whole = true;
    }
    (!runs.is_empty()).then(|| {
        (
            PrefixFile { file },
            Loaded {
                chain,
                prefix: Prefix::from_segments(runs),
                whole,
                end: at,
            },
        )
    })
}

/// Removes the least recently written prefix files beyond [`KEPT_FILES`] (other than `kept`).
fn forget_old(kept: &Path) {
    let Some(dir) = kept.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|x| x == "prefix") && path != kept)
        .filter_map(|path| Some((std::fs::metadata(&path).ok()?.modified().ok()?, path)))
        .collect();
    if files.len() < KEPT_FILES {
        return;
    }
    files.sort();
    let surplus = files.len() + 1 - KEPT_FILES;
    for (_, path) in files.into_iter().take(surplus) {
        let _ = std::fs::remove_file(path);
    }
}
