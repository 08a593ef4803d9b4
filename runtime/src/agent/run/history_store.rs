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

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::agent::conversation::messages::Messages;
use crate::plugin_host::history_splice::Prefix;

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
    /// The items.
    pub prefix: Prefix,
}

/// Reads the longest prefix of `file` stored under `key` whose chain is the conversation's.
pub fn load(file: &Path, key: u64, messages: &dyn Messages) -> Option<Loaded> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    let bytes = bytes::Bytes::from(bytes);
    let header = format!("{MAGIC} {key:016x}\n");
    let mut rest = bytes.strip_prefix(header.as_bytes())?;
    let mut chain = Chain::default();
    let mut runs = Vec::new();
    while let Some((record, after)) = Record::read(rest) {
        if record.messages > messages.len() || record.messages < chain.messages {
            break;
        }
        chain = match chain.extended(messages, record.messages) {
            Some(next) if next.hash == record.hash => next,
            _ => break,
        };
        // The file's bytes are shared by the prefix, not copied.
        runs.push(bytes.slice_ref(record.items));
        rest = after;
    }
    (!runs.is_empty()).then(|| Loaded {
        chain,
        prefix: Prefix::from_runs(runs),
    })
}

/// Records that the prefix grew by `items` to cover `chain`: appended to `file` when it holds
/// the prefix under `key` up to where this one grew from (`fresh` false), else written anew.
pub fn append(file: &Path, key: u64, fresh: bool, items: &[u8], chain: Chain) {
    let written = (|| -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = if fresh {
            let mut out = std::fs::File::create(file)?;
            out.write_all(format!("{MAGIC} {key:016x}\n").as_bytes())?;
            forget_old(file);
            out
        } else {
            std::fs::OpenOptions::new().append(true).open(file)?
        };
        let mut record = Vec::with_capacity(items.len() + 25);
        record.push(b'R');
        record.extend_from_slice(&(chain.messages as u64).to_le_bytes());
        record.extend_from_slice(&chain.hash.to_le_bytes());
        record.extend_from_slice(&(items.len() as u64).to_le_bytes());
        record.extend_from_slice(items);
        out.write_all(&record)
    })();
    if let Err(err) = written {
        tracing::warn!(
            "cannot keep the conversation's provider prefix in {}: {err}",
            file.display()
        );
    }
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

/// One record as stored.
struct Record<'a> {
    messages: usize,
    hash: u64,
    items: &'a [u8],
}

impl Record<'_> {
    /// The record at the start of `bytes` and what follows it; `None` at the end or at a
    /// record cut short (a write that did not finish).
    fn read(bytes: &[u8]) -> Option<(Record<'_>, &[u8])> {
        let word = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
        };
        if bytes.first() != Some(&b'R') {
            return None;
        }
        let messages = usize::try_from(word(1)?).ok()?;
        let hash = word(9)?;
        let len = usize::try_from(word(17)?).ok()?;
        let end = 25usize.checked_add(len)?;
        let items = bytes.get(25..end)?;
        Some((
            Record {
                messages,
                hash,
                items,
            },
            &bytes[end..],
        ))
    }
}
