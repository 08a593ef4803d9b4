//! The conversation at the leaf as a session holds it: most messages of a long session stay
//! in the session file, as the lines they are, and are read back when a reader needs them
//! (the messages after the cached provider prefix, the last answer, a compaction, an
//! export). A message is held in memory when it is not the plain content of its line (a
//! summary, an edited message, a system record, an entry not written yet) and while it is
//! recent; [`settle`] lets the older ones go back to their lines.
//!
//! A line that is no longer where it was (the file was changed by another program) reads as
//! missing: the message is left out, with a warning, as opening such a file does.

use std::borrow::Cow;

use serde::Deserialize;

use super::SessionFile;
use super::entry::{Entry, Role};
use crate::agent::conversation::message::AgentMessage;
use crate::agent::conversation::messages::Messages;

/// A message of the conversation at the leaf.
#[derive(Debug, Clone)]
pub enum Held {
    /// In memory.
    Parsed {
        /// The message.
        message: Box<AgentMessage>,
        /// True when its entry's line holds exactly this message, so it may go back to it.
        settles: bool,
    },
    /// Its entry's line, read when needed (a message entry on disk, not edited).
    Stored,
}

impl Held {
    /// A message held in memory that is not the plain content of a line.
    pub fn kept(message: AgentMessage) -> Held {
        Held::Parsed {
            message: Box::new(message),
            settles: false,
        }
    }

    /// A message held in memory that its entry's line holds as it is (a system record stays:
    /// readers find the records without reading).
    pub fn settling(message: AgentMessage) -> Held {
        let settles = !matches!(message, AgentMessage::System(_));
        Held::Parsed {
            message: Box::new(message),
            settles,
        }
    }

    /// The message, when in memory.
    pub fn parsed(&self) -> Option<&AgentMessage> {
        match self {
            Held::Parsed { message, .. } => Some(message),
            Held::Stored => None,
        }
    }
}

/// A session's conversation for reading: its messages and entry ids, and the file the stored
/// ones are read from.
#[derive(Clone, Copy)]
pub struct HeldMessages<'a> {
    held: &'a [Held],
    ids: &'a [String],
    file: &'a SessionFile,
}

impl<'a> HeldMessages<'a> {
    /// The conversation `held` (entry ids `ids`, parallel) of `file`.
    pub fn new(held: &'a [Held], ids: &'a [String], file: &'a SessionFile) -> HeldMessages<'a> {
        HeldMessages { held, ids, file }
    }
}

impl Messages for HeldMessages<'_> {
    fn len(&self) -> usize {
        self.held.len()
    }

    fn get(&self, at: usize) -> Option<Cow<'_, AgentMessage>> {
        match self.held.get(at)? {
            Held::Parsed { message, .. } => Some(Cow::Borrowed(message)),
            Held::Stored => read_stored(self.file, self.ids.get(at)?).map(Cow::Owned),
        }
    }

    fn is_system(&self, at: usize) -> bool {
        matches!(
            self.held.get(at).and_then(Held::parsed),
            Some(AgentMessage::System(_))
        )
    }

    fn identity(&self, at: usize) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let id = self.ids.get(at)?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut hasher);
        let place = self.file.entry(id).and_then(Entry::place);
        match (&self.held[at], place) {
            // A message its line holds as it is: the line's place says what it is.
            (Held::Stored | Held::Parsed { settles: true, .. }, Some(place)) => {
                place.hash(&mut hasher)
            }
            (held, _) => serde_json::to_string(held.parsed()?)
                .ok()?
                .hash(&mut hasher),
        }
        Some(hasher.finish())
    }

    fn range(&self, range: std::ops::Range<usize>) -> Vec<Cow<'_, AgentMessage>> {
        let range = range.start.min(self.held.len())..range.end.min(self.held.len());
        // The stored ones are read in file order a window at a time, each parsed where the
        // window holds it.
        let lines = self.file.lines();
        let mut unreadable = 0;
        let messages = range
            .filter_map(|at| match &self.held[at] {
                Held::Parsed { message, .. } => Some(Cow::Borrowed(&**message)),
                Held::Stored => {
                    let entry = self.file.entry(&self.ids[at])?;
                    let message =
                        lines.with_text(entry, |text| read_message(text, entry.role()))?;
                    unreadable += usize::from(message.is_none());
                    message.map(Cow::Owned)
                }
            })
            .collect();
        if unreadable > 0 {
            tracing::warn!(
                "{unreadable} messages of the session file {} could not be read back and were \
                 left out",
                self.file
                    .path()
                    .map_or_else(String::new, |p| p.display().to_string())
            );
        }
        messages
    }
}

/// The message of the stored message entry `id`, read from its line.
pub fn read_stored(file: &SessionFile, id: &str) -> Option<AgentMessage> {
    let entry = file.entry(id)?;
    read_message(&file.text_of(entry)?, entry.role())
}

/// A message entry's line, read for its message only.
#[derive(Deserialize)]
struct MessageLine<T> {
    message: T,
}

/// The message of a message entry's line, whose message has `role` (as its entry read it):
/// read straight into the typed message (a JSON tree in between doubles what reading a long
/// session costs; for the common roles, straight into that role's message, as reading by
/// the tag first buffers the whole message), or, for a line the typed reading refuses (a
/// repeated key, which JSON allows: the last one wins), through the tree.
pub(super) fn read_message(text: &str, role: Role) -> Option<AgentMessage> {
    fn typed<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
        serde_json::from_str::<MessageLine<T>>(text)
            .ok()
            .map(|line| line.message)
    }
    match role {
        Role::User => typed(text).map(AgentMessage::User),
        Role::Assistant => typed(text).map(AgentMessage::Assistant),
        Role::ToolResult => typed(text).map(AgentMessage::ToolResult),
        _ => None,
    }
    .or_else(|| typed::<AgentMessage>(text))
    .or_else(|| {
        let mut line: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).ok()?;
        serde_json::from_value(line.remove("message")?).ok()
    })
}

/// How the conversation of a file opened for reading holds each message entry.
pub(super) fn hold(entry: &Entry) -> Option<Held> {
    (entry.kind() == "message" && entry.is_on_disk() && entry.role() != Role::System)
        .then_some(Held::Stored)
}

/// Lets the messages held in memory that their lines hold as they are go back to their
/// lines, all but the last `keep`.
pub fn settle(held: &mut [Held], ids: &[String], file: &SessionFile, keep: usize) {
    let end = held.len().saturating_sub(keep);
    for (slot, id) in held[..end].iter_mut().zip(ids) {
        if matches!(slot, Held::Parsed { settles: true, .. })
            && file.entry(id).is_some_and(Entry::is_on_disk)
        {
            *slot = Held::Stored;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A session file of `turns` prompts and answers, with a system record first.
    fn session(dir: &std::path::Path, turns: usize) -> std::path::PathBuf {
        let path = dir.join("s.jsonl");
        let mut lines = vec![
            json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}),
            json!({"type": "message", "id": "s0", "parentId": null, "timestamp": "2026-01-01T00:00:00.500Z",
                "message": {"role": "system", "content": "", "sections": {"preamble": "p"}, "timestamp": 1}}),
        ];
        let mut parent = "s0".to_string();
        for n in 0..turns {
            let (user, answer) = (format!("u{n}"), format!("a{n}"));
            lines.push(json!({"type": "message", "id": user, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": format!("question {n}")}], "timestamp": 1}}));
            lines.push(json!({"type": "message", "id": answer, "parentId": user, "timestamp": "2026-01-01T00:00:02.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": format!("answer {n}")}], "api": "faux", "provider": "faux", "model": format!("m{n}"),
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": 2}}));
            parent = answer;
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_held_conversation_reads_as_the_parsed_one() {
        let dir = tempfile::tempdir().unwrap();
        let (file, _) = SessionFile::open(&session(dir.path(), 20)).unwrap();
        let parsed = file.context();
        let held = file.held_context();
        assert_eq!(held.model, parsed.model, "the last answer's model");
        assert_eq!(held.model, Some(("faux".into(), "m19".into())));
        let (held, ids) = held.into_columns();
        assert!(held[0].parsed().is_some(), "a system record is held");
        assert!(held[1..].iter().all(|h| matches!(h, Held::Stored)));
        let messages = HeldMessages::new(&held, &ids, &file);
        let expected: Vec<AgentMessage> = parsed.messages.into_iter().map(|(_, m)| m).collect();
        assert_eq!(messages.to_vec(), expected);
        assert_eq!(messages.get(7).as_deref(), Some(&expected[7]));
        assert_eq!(messages.range(3..6).len(), 3);
        assert!(messages.is_system(0) && !messages.is_system(1));
    }

    #[test]
    fn settled_messages_go_back_to_their_lines_but_the_last_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (mut file, _) = SessionFile::open(&session(dir.path(), 3)).unwrap();
        let (mut held, mut ids) = file.held_context().into_columns();
        for n in 0..4 {
            let message: AgentMessage = serde_json::from_value(json!(
                {"role": "user", "content": [{"type": "text", "text": format!("more {n}")}], "timestamp": 3}
            ))
            .unwrap();
            ids.push(file.append_message(&message));
            held.push(Held::settling(message));
        }
        let before = HeldMessages::new(&held, &ids, &file).to_vec();
        settle(&mut held, &ids, &file, 2);
        let parsed = held.iter().filter(|h| h.parsed().is_some()).count();
        assert_eq!(parsed, 3, "the system record and the last two");
        assert_eq!(HeldMessages::new(&held, &ids, &file).to_vec(), before);
    }
}
