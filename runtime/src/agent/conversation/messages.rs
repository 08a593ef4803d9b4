//! A conversation as its readers see it: a length and each message, read when asked. A
//! session holds most messages of a long conversation as their lines in the session file and
//! reads them back on demand (see `agent::session::file::held`); a plain slice is a
//! conversation held whole. Readers that need a few messages (the last answer, what follows
//! the cached prefix) read those only.

use std::borrow::Cow;
use std::ops::Range;

use crate::agent::conversation::message::AgentMessage;

/// A conversation whose messages may be read on demand.
pub trait Messages {
    /// How many messages it has.
    fn len(&self) -> usize;

    /// The message at `at`, read from the session file when it is not held; `None` past the
    /// end or when its line can no longer be read.
    fn get(&self, at: usize) -> Option<Cow<'_, AgentMessage>>;

    /// True when the message at `at` is a system record (known without reading it).
    fn is_system(&self, at: usize) -> bool;

    /// What identifies the message at `at` across processes (its entry and the place of its
    /// line, or its content), for a prefix cache kept on disk; `None` for a conversation that
    /// is not a session's.
    fn identity(&self, _at: usize) -> Option<u64> {
        None
    }

    /// True when it has no message.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The messages in `range`, in order (one that cannot be read is left out).
    fn range(&self, range: Range<usize>) -> Vec<Cow<'_, AgentMessage>> {
        range.filter_map(|at| self.get(at)).collect()
    }

    /// Calls `visit` with each message in order, reading stored ones a block at a time (the
    /// whole conversation is never in memory at once).
    fn each(&self, visit: &mut dyn FnMut(&AgentMessage)) {
        const BLOCK: usize = 512;
        let mut at = 0;
        while at < self.len() {
            let end = (at + BLOCK).min(self.len());
            self.range(at..end).iter().for_each(|m| visit(m));
            at = end;
        }
    }

    /// Every message, owned.
    fn to_vec(&self) -> Vec<AgentMessage> {
        self.range(0..self.len())
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    /// The last message.
    fn last(&self) -> Option<Cow<'_, AgentMessage>> {
        self.get(self.len().checked_sub(1)?)
    }

    /// The system records, in order (held in memory: no reading).
    fn system_records(&self) -> Vec<Cow<'_, AgentMessage>> {
        (0..self.len())
            .filter(|&at| self.is_system(at))
            .filter_map(|at| self.get(at))
            .collect()
    }
}

impl Messages for [AgentMessage] {
    fn len(&self) -> usize {
        <[AgentMessage]>::len(self)
    }

    fn get(&self, at: usize) -> Option<Cow<'_, AgentMessage>> {
        <[AgentMessage]>::get(self, at).map(Cow::Borrowed)
    }

    fn is_system(&self, at: usize) -> bool {
        matches!(
            <[AgentMessage]>::get(self, at),
            Some(AgentMessage::System(_))
        )
    }

    fn range(&self, range: Range<usize>) -> Vec<Cow<'_, AgentMessage>> {
        <[AgentMessage]>::get(self, range)
            .unwrap_or_default()
            .iter()
            .map(Cow::Borrowed)
            .collect()
    }
}

impl Messages for Vec<AgentMessage> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn get(&self, at: usize) -> Option<Cow<'_, AgentMessage>> {
        Messages::get(self.as_slice(), at)
    }

    fn is_system(&self, at: usize) -> bool {
        self.as_slice().is_system(at)
    }

    fn range(&self, range: Range<usize>) -> Vec<Cow<'_, AgentMessage>> {
        self.as_slice().range(range)
    }
}
