//! The provider-history prefix cache of a session: what a long conversation's requests do not
//! hand to the provider plugin again.
//!
//! Each request's conversation is cut at the last *boundary* (an answer that ended the turn,
//! followed by a user message): the messages before it are the prefix, which a later request
//! takes from the cache, encoded as the provider encoded it, instead of handing them over and
//! having them encoded again. The provider gets a marker message in the prefix's place and one
//! at the boundary; the host splices the body it sends (see `plugin_host::history_splice`), so
//! the bytes on the wire are those of the whole conversation. A request encodes only the
//! messages since the cached prefix's end.
//!
//! The cache holds while the model, its settings and the provider are the same and the
//! conversation only grew (the session's message generation is unchanged): a compaction, a
//! branch switch, a retry's dropped answer or any other change starts over from an empty
//! prefix. It serves the first-party providers only (their encoding is known to keep a marker
//! message as a message of its own), and only conversations of at least [`MIN_BYTES`].

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::agent::conversation::message::{AgentMessage, AssistantBlock, StopReason, UserContent};
use crate::agent::conversation::messages::Messages;
use crate::agent::run::history_store::{self, Chain, PrefixFile};
use crate::content::Content;
use crate::plugin_host::history_prefix::StoredRun;
use crate::plugin_host::history_splice::{HistorySplice, Learned, Prefix};

/// The wire formats whose first-party providers encode a marker message as a message of its
/// own. Not Google's (it merges neighbouring messages of one role) nor the faux provider (it
/// answers from the messages themselves and sends no body).
pub const SERVED_APIS: [&str; 5] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "azure-openai-responses",
    "mistral-conversations",
];

/// True when `PITH_NO_HISTORY_CACHE` is set: every request hands the whole conversation over
/// (to compare, or to rule the cache out).
fn switched_off() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OFF.get_or_init(|| std::env::var_os("PITH_NO_HISTORY_CACHE").is_some())
}

/// The conversation size (its texts, in bytes) from which requests use the cache: below it,
/// encoding the whole conversation costs less than a millisecond.
pub const MIN_BYTES: usize = 256 * 1024;

/// What the cached prefix is the encoding of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Covers {
    /// The model, its settings and the provider (a hash).
    key: u64,
    /// The session's message generation.
    generation: u64,
    /// How many of the session's messages.
    messages: usize,
}

/// A session's cache.
#[derive(Debug, Default)]
pub struct HistoryCache {
    state: Mutex<CacheState>,
    /// Set when a provider's body lost a marker: the session hands whole conversations over.
    refused: Arc<AtomicBool>,
}

#[derive(Debug, Default)]
struct CacheState {
    /// The encoded prefix and what it covers.
    cached: Option<(Covers, Prefix)>,
    /// The prefix the last request is learning, until its body is sent.
    pending: Option<(Covers, Learned)>,
    /// The prefix's file.
    disk: Disk,
}

/// The prefix's file on disk (see `history_store`), and how far it is written.
#[derive(Debug, Default)]
struct Disk {
    /// The session file the prefix file is for, and the prefix file.
    file: Option<(PathBuf, PathBuf)>,
    /// What the prefix file holds, and the file, open.
    written: Option<(Written, PrefixFile)>,
    /// The key and generation a reading of the file was tried for.
    tried: Option<(u64, u64)>,
}

/// What a prefix file holds: a prefix under a key, for a message generation, up to a chain.
#[derive(Debug, Clone, Copy)]
struct Written {
    key: u64,
    generation: u64,
    chain: Chain,
    /// The file's length after the last record this process wrote or read.
    end: u64,
    /// The prefix's length in bytes.
    len: usize,
}

impl Disk {
    /// True when the prefix file is no longer as this process left it (another program cut or
    /// wrote it): its runs cannot be trusted.
    fn changed(&self) -> bool {
        self.written
            .as_ref()
            .is_some_and(|(written, file)| file.size().ok() != Some(written.end))
    }

    /// The prefix file of `session`.
    fn location(&mut self, session: &Path) -> PathBuf {
        match &self.file {
            Some((known, file)) if known == session => file.clone(),
            _ => {
                let file = history_store::location(session);
                self.file = Some((session.to_path_buf(), file.clone()));
                self.written = None;
                file
            }
        }
    }

    /// Writes what `prefix` (covering `covers` of `messages`) adds to the file; the prefix
    /// with what it added read from there (`None` when it could not be written: the prefix
    /// stays in memory).
    fn keep(
        &mut self,
        session: Option<&Path>,
        covers: Covers,
        prefix: &Prefix,
        messages: &dyn Messages,
    ) -> Option<Prefix> {
        let session = session?;
        let path = self.location(session);
        let continued = self.written.take().filter(|(w, _)| {
            w.key == covers.key
                && w.generation == covers.generation
                && w.chain.messages <= covers.messages
                && w.len <= prefix.len()
        });
        let (start, from) = continued
            .as_ref()
            .map_or((Chain::default(), 0), |(w, _)| (w.chain, w.len));
        let chain = start.extended(messages, covers.messages)?;
        let written = (|| -> std::io::Result<(PrefixFile, StoredRun)> {
            let file = match continued {
                Some((_, file)) => file,
                None => PrefixFile::create(&path, covers.key)?,
            };
            let run = file.append(&prefix.tail(from)?, chain)?;
            Ok((file, run))
        })();
        match written {
            Ok((file, run)) => {
                let stored = prefix.with_stored_tail(from, run.clone());
                self.written = Some((
                    Written {
                        key: covers.key,
                        generation: covers.generation,
                        chain,
                        end: run.offset + run.len as u64,
                        len: stored.len(),
                    },
                    file,
                ));
                Some(stored)
            }
            Err(err) => {
                tracing::warn!(
                    "cannot keep the conversation's provider prefix in {}: {err}",
                    path.display()
                );
                None
            }
        }
    }

    /// The prefix the file holds for `messages` under `key`, read once per key and generation.
    fn load(
        &mut self,
        session: Option<&Path>,
        key: u64,
        generation: u64,
        messages: &dyn Messages,
    ) -> Option<(Covers, Prefix)> {
        let session = session?;
        if self.tried == Some((key, generation)) {
            return None;
        }
        self.tried = Some((key, generation));
        let path = self.location(session);
        let (file, loaded) = history_store::load(&path, key, messages)?;
        tracing::debug!(
            target: "pith::history_cache",
            messages = loaded.chain.messages,
            bytes = loaded.prefix.len(),
            "prefix read from disk"
        );
        // A file with records past the ones taken is written anew by the next growth.
        self.written = loaded.whole.then(|| {
            (
                Written {
                    key,
                    generation,
                    chain: loaded.chain,
                    end: loaded.end,
                    len: loaded.prefix.len(),
                },
                file,
            )
        });
        let covers = Covers {
            key,
            generation,
            messages: loaded.chain.messages,
        };
        Some((covers, loaded.prefix))
    }
}

/// How many messages a learning step encodes, about: a conversation whose prefix is not
/// cached is handed to the provider in steps of this many messages, so that neither the
/// provider nor the runtime holds more than a step of it at once.
pub const LEARNING_STEP: usize = 512;

/// The learning step: [`LEARNING_STEP`], or `PITH_HISTORY_LEARNING_STEP` messages (to measure
/// other steps, or to test the learning on a short conversation).
fn learning_step() -> usize {
    static STEP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *STEP.get_or_init(|| {
        std::env::var("PITH_HISTORY_LEARNING_STEP")
            .ok()
            .and_then(|step| step.parse().ok())
            .filter(|&step| step > 0)
            .unwrap_or(LEARNING_STEP)
    })
}

/// What a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The request to send: the prefix learned up to the last boundary.
    Request,
    /// A learning step before it (its body is not sent): the prefix learned up to the first
    /// boundary a step past the cached one; no plan when the request itself is that close.
    Learning,
}

/// How a request hands its conversation over.
#[derive(Debug)]
pub struct Plan {
    /// The first message handed over (after the splice marker).
    pub from: usize,
    /// Where the end marker goes (a message index), if the request learns a longer prefix.
    pub boundary: Option<usize>,
    /// What the body is spliced with.
    pub splice: Arc<HistorySplice>,
}

impl HistoryCache {
    /// The bytes of the encoded prefix held in memory (for a session's footprint; the part
    /// written to the prefix file is not held).
    pub fn held_bytes(&self) -> usize {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .cached
            .as_ref()
            .map_or(0, |(_, prefix)| prefix.held_bytes())
    }

    /// The plan for a request of `messages` (the session's, of message generation
    /// `generation`) under `key`; `None` when the whole conversation is handed over.
    pub fn plan(
        &self,
        key: u64,
        generation: u64,
        messages: &dyn Messages,
        mode: Mode,
        session: Option<&Path>,
    ) -> Option<Plan> {
        if switched_off() || self.refused.load(Ordering::Relaxed) {
            return None;
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let state = &mut *state;
        if let Some((covers, learned)) = state.pending.take()
            && let Some(prefix) = learned.lock().unwrap_or_else(|p| p.into_inner()).take()
        {
            // Written on (only) while the file is as this process left it.
            let prefix =
                if covers.key == key && covers.generation == generation && !state.disk.changed() {
                    state
                        .disk
                        .keep(session, covers, &prefix, messages)
                        .unwrap_or(prefix)
                } else {
                    prefix
                };
            state.cached = Some((covers, prefix));
        }
        if state.disk.changed()
            || state
                .cached
                .as_ref()
                .is_some_and(|(_, prefix)| !prefix.is_readable())
        {
            tracing::warn!(
                "the conversation's cached provider prefix is no longer in its file (changed \
                 by another program); the conversation is encoded again"
            );
            state.cached = None;
            state.disk.written = None;
        }
        let valid = |cached: &Option<(Covers, Prefix)>| {
            matches!(cached, Some((covers, _)) if covers.key == key
                && covers.generation == generation
                && covers.messages <= messages.len())
        };
        if !valid(&state.cached) {
            // A small conversation is handed over whole; a large one may have its prefix on
            // disk, from an earlier process.
            if text_bytes(messages) < MIN_BYTES {
                return None;
            }
            if let Some(loaded) = state.disk.load(session, key, generation, messages) {
                state.cached = Some(loaded);
            }
        }
        let (from, cached) = match &state.cached {
            Some((covers, prefix)) if valid(&state.cached) => (covers.messages, prefix.clone()),
            _ => (0, Prefix::default()),
        };
        let boundary = match mode {
            Mode::Request => last_boundary(messages).filter(|&at| at > from),
            // A step ends at the first boundary a step's length past the cached prefix, and
            // not within a step of the last one (the request itself learns the rest).
            Mode::Learning => {
                let last = last_boundary(messages)?;
                let step = first_boundary(messages, from + learning_step())?;
                (step + learning_step() <= last).then_some(step)
            }
        };
        if (from == 0 || mode == Mode::Learning) && boundary.is_none() {
            return None;
        }
        let learned: Learned = Arc::default();
        if let Some(at) = boundary {
            let covers = Covers {
                key,
                generation,
                messages: at,
            };
            state.pending = Some((covers, learned.clone()));
        }
        let salt = next_salt();
        tracing::debug!(
            target: "pith::history_cache",
            cached = from,
            boundary = ?boundary,
            learning = (mode == Mode::Learning),
            messages = messages.len(),
            "prefix cache plan"
        );
        Some(Plan {
            from,
            boundary,
            splice: Arc::new(HistorySplice {
                splice_marker: format!("pith-history-{salt:032x}-prefix"),
                cached,
                end_marker: boundary.map(|_| format!("pith-history-{salt:032x}-end")),
                learn_only: mode == Mode::Learning,
                learned,
                refused: self.refused.clone(),
            }),
        })
    }
}

/// The key of a request's encoding: a hash of whatever the provider's encoding of a message
/// depends on besides the message.
pub fn key(parts: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

/// A fresh marker salt: random per process, counted per request.
fn next_salt() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let seed = *SEED.get_or_init(|| {
        let mut hasher = DefaultHasher::new();
        std::time::SystemTime::now().hash(&mut hasher);
        std::process::id().hash(&mut hasher);
        hasher.finish()
    });
    (u128::from(seed) << 64) | u128::from(COUNT.fetch_add(1, Ordering::Relaxed))
}

/// The index of the last user message that follows an answer which ended its turn (a
/// boundary the provider encodes the same whatever comes after it). System records between
/// them are not sent, so they do not count.
fn last_boundary(messages: &dyn Messages) -> Option<usize> {
    (1..messages.len())
        .rev()
        .find(|&at| is_boundary(messages, at))
}

/// True when the message at `at` is a user message after an answer that ended its turn.
fn is_boundary(messages: &dyn Messages, at: usize) -> bool {
    matches!(messages.get(at).as_deref(), Some(AgentMessage::User(_)))
        && (0..at)
            .rev()
            .find(|&before| !messages.is_system(before))
            .is_some_and(|before| {
                matches!(
                    messages.get(before).as_deref(),
                    Some(AgentMessage::Assistant(answer))
                        if answer.stop_reason == StopReason::Stop
                            && !answer.content.iter().any(|b| matches!(b, AssistantBlock::ToolCall { .. }))
                )
            })
}

/// The index of the first boundary at or after `from`.
fn first_boundary(messages: &dyn Messages, from: usize) -> Option<usize> {
    (from.max(1)..messages.len()).find(|&at| is_boundary(messages, at))
}

/// About how many bytes of text `messages` hold (counted up to [`MIN_BYTES`]; read a block
/// of messages at a time, as reading stored messages one by one opens the file for each).
fn text_bytes(messages: &dyn Messages) -> usize {
    const BLOCK: usize = 64;
    let content = |blocks: &[Content]| -> usize {
        blocks
            .iter()
            .map(|block| match block {
                Content::Text { text } => text.len(),
                Content::Image { data, .. } => data.len(),
            })
            .sum()
    };
    let mut total = 0;
    let mut at = 0;
    while at < messages.len() && total < MIN_BYTES {
        let end = (at + BLOCK).min(messages.len());
        for message in messages.range(at..end) {
            total += match &*message {
                AgentMessage::User(user) => match &user.content {
                    UserContent::Blocks(blocks) => content(blocks),
                    UserContent::Text(text) => text.len(),
                },
                AgentMessage::ToolResult(result) => content(&result.content),
                AgentMessage::Assistant(answer) => answer
                    .content
                    .iter()
                    .map(|block| match block {
                        AssistantBlock::Text { text, .. } => text.len(),
                        AssistantBlock::Thinking { thinking, .. } => thinking.len(),
                        AssistantBlock::ToolCall { arguments, .. } => arguments.to_string().len(),
                    })
                    .sum(),
                _ => 0,
            };
        }
        at = end;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::message::{AssistantMessage, UserMessage};

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: UserContent::Text(text.to_string()),
            timestamp: 0,
        })
    }

    fn answer(text: &str, stop: StopReason) -> AgentMessage {
        let mut answer = AssistantMessage::empty("a", "p", "m");
        answer.content.push(AssistantBlock::Text {
            text: text.to_string(),
            signature: None,
        });
        answer.stop_reason = stop;
        AgentMessage::Assistant(answer)
    }

    /// A conversation of `turns` prompts of `size` bytes, each answered.
    fn conversation(turns: usize, size: usize) -> Vec<AgentMessage> {
        (0..turns)
            .flat_map(|n| {
                [
                    user(&"x".repeat(size)),
                    answer(&format!("a{n}"), StopReason::Stop),
                ]
            })
            .collect()
    }

    #[test]
    fn the_boundary_is_the_last_prompt_after_a_finished_answer() {
        let mut messages = conversation(3, 1);
        messages.push(user("new"));
        assert_eq!(last_boundary(&messages), Some(6));
        messages.push(answer("cut", StopReason::Length));
        messages.push(user("again"));
        assert_eq!(
            last_boundary(&messages),
            Some(6),
            "a cut answer is no boundary"
        );
        assert_eq!(last_boundary(&vec![user("only")]), None);
    }

    #[test]
    fn a_prefix_serves_while_the_conversation_only_grows() {
        let cache = HistoryCache::default();
        let small = conversation(2, 10);
        assert!(
            cache.plan(1, 0, &small, Mode::Request, None).is_none(),
            "a short conversation goes whole"
        );
        let mut messages = conversation(40, 8 * 1024);
        messages.push(user("next"));
        let first = cache.plan(1, 0, &messages, Mode::Request, None).unwrap();
        assert_eq!((first.from, first.boundary), (0, Some(80)));
        // The provider's body is spliced: the prefix is learned.
        *first.splice.learned.lock().unwrap() = Some(Prefix::from_items(b"{}"));
        messages.push(answer("done", StopReason::Stop));
        messages.push(user("more"));
        let second = cache.plan(1, 0, &messages, Mode::Request, None).unwrap();
        assert_eq!((second.from, second.boundary), (80, Some(82)));
        assert_eq!(second.splice.cached.to_vec().unwrap(), b"{}");
        // Another model, or a changed conversation, starts over.
        assert_eq!(
            cache
                .plan(2, 0, &messages, Mode::Request, None)
                .unwrap()
                .from,
            0
        );
        assert_eq!(
            cache
                .plan(1, 1, &messages, Mode::Request, None)
                .unwrap()
                .from,
            0
        );
    }
}
