//! One entry of a session file as a session holds it: the heads every walk of the tree needs
//! (type, id, parent, timestamp) and where its line is. A line on disk is read back when its
//! body is needed ([`super::lines`]); a line not written yet is held as text. A tree of
//! `serde_json` values costs several times the text it came from, and the text itself is
//! already in the file: a long session holds its entries at a fraction of the file's size.

use serde::Deserialize;
use serde_json::{Map, Value};

/// An entry: its heads, read once, and its line.
#[derive(Debug, Clone)]
pub struct Entry {
    kind: Box<str>,
    id: Box<str>,
    parent: Option<Box<str>>,
    timestamp: Box<str>,
    /// A message entry's message role (read with the heads, so that a conversation can be
    /// held without reading its messages).
    role: Role,
    pub(super) line: Line,
}

/// The role of a message entry's message, as far as holding a conversation needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// Not a message entry, or a message without a role.
    #[default]
    None,
    /// pi 1.5's system record.
    System,
    /// A model's answer.
    Assistant,
    /// A user turn.
    User,
    /// A tool's result.
    ToolResult,
    /// Any other role.
    Other,
}

impl Role {
    fn of(role: Option<&str>) -> Role {
        match role {
            None => Role::None,
            Some("system") => Role::System,
            Some("assistant") => Role::Assistant,
            Some("user") => Role::User,
            Some("toolResult") => Role::ToolResult,
            Some(_) => Role::Other,
        }
    }
}

/// Where an entry's line is.
#[derive(Debug, Clone)]
pub(super) enum Line {
    /// Not on disk (a session before its first answer, or one kept in memory): the JSON text.
    Held(Box<str>),
    /// In the session file, at this byte offset, this many bytes long (without the newline).
    OnDisk {
        /// Where the line starts.
        offset: u64,
        /// Its length in bytes.
        len: u32,
    },
}

/// The heads of an entry's line; every other key is skipped (checked as JSON, not kept).
#[derive(Deserialize)]
struct Heads<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(rename = "parentId", default, borrow)]
    parent: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    timestamp: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    message: Option<RoleOnly<'a>>,
}

/// A message read for its role alone.
#[derive(Deserialize)]
struct RoleOnly<'a> {
    #[serde(default, borrow)]
    role: Option<std::borrow::Cow<'a, str>>,
}

impl Entry {
    /// Reads the line found at `offset` in the file: `None` unless it is a JSON object with a
    /// string `type` and `id`.
    pub fn on_disk(line: &str, offset: u64) -> Option<Entry> {
        let len = u32::try_from(line.len()).ok()?;
        let place = Line::OnDisk { offset, len };
        match serde_json::from_str::<Heads>(line) {
            Ok(heads) => Some(Entry {
                kind: heads.kind.into(),
                id: heads.id.into(),
                parent: heads.parent.map(Into::into),
                timestamp: heads.timestamp.unwrap_or_default().into(),
                role: Role::of(heads.message.as_ref().and_then(|m| m.role.as_deref())),
                line: place,
            }),
            // A repeated key (JSON allows it; the last one wins when read as a map), or a head
            // of another type (a numeric parent is no parent).
            Err(_) => {
                let map: Map<String, Value> = serde_json::from_str(line).ok()?;
                let mut entry = Entry::from_map(&map)?;
                entry.line = place;
                Some(entry)
            }
        }
    }

    /// An entry made in memory, held as the line it will be on disk.
    pub fn from_map(map: &Map<String, Value>) -> Option<Entry> {
        let text = |key: &str| map.get(key).and_then(Value::as_str);
        let line = serde_json::to_string(map).ok()?;
        Some(Entry {
            kind: text("type")?.into(),
            id: text("id")?.into(),
            parent: text("parentId").map(Into::into),
            timestamp: text("timestamp").unwrap_or("").into(),
            role: Role::of(
                map.get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(Value::as_str),
            ),
            line: Line::Held(line.into()),
        })
    }

    /// The entry's `type`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The entry's `id`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The entry's `parentId`, unless it is null (a root).
    pub fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// A message entry's message role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Where the entry's line is in the session file (its offset and length), once written.
    pub fn place(&self) -> Option<(u64, u32)> {
        match self.line {
            Line::OnDisk { offset, len } => Some((offset, len)),
            Line::Held(_) => None,
        }
    }

    /// True when the entry's line is in the session file (not only held in memory).
    pub fn is_on_disk(&self) -> bool {
        matches!(self.line, Line::OnDisk { .. })
    }

    /// The entry's `timestamp` (empty when it has none), for ordering siblings as pi does
    /// (UTC ISO 8601 strings sort by time).
    pub fn timestamp(&self) -> &str {
        &self.timestamp
    }

    /// True when `text` can be this entry's line: it names the entry's id (a file changed by
    /// another program since it was read shifts what is at the place).
    pub(super) fn is_line(&self, text: &str) -> bool {
        // `"id":"x"`, or `"id": "x"` as other writers space it.
        let named = serde_json::to_string(self.id()).is_ok_and(|quoted| {
            text.match_indices("\"id\"").any(|(at, key)| {
                text[at + key.len()..]
                    .trim_start()
                    .strip_prefix(':')
                    .is_some_and(|value| value.trim_start().starts_with(&quoted))
            })
        });
        // Anything else (an id with escapes written another way) is read to be sure.
        named
            || Entry::on_disk(text, 0)
                .is_some_and(|entry| entry.id() == self.id() && entry.kind() == self.kind())
    }
}

/// The `role` of a message entry's message, read from its line without reading the rest.
pub(super) fn message_role(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Role<'a> {
        #[serde(borrow)]
        role: Option<std::borrow::Cow<'a, str>>,
    }
    #[derive(Deserialize)]
    struct MessageRole<'a> {
        #[serde(borrow)]
        message: Option<Role<'a>>,
    }
    serde_json::from_str::<MessageRole>(text)
        .ok()?
        .message?
        .role
        .map(std::borrow::Cow::into_owned)
}

impl Entry {
    /// The bytes this entry holds in memory (its heads, and its line when it is not on disk).
    pub fn held_bytes(&self) -> usize {
        let text = |t: &str| t.len();
        std::mem::size_of::<Entry>()
            + text(&self.kind)
            + text(&self.id)
            + self.parent.as_deref().map_or(0, text)
            + text(&self.timestamp)
            + match &self.line {
                Line::Held(line) => line.len(),
                Line::OnDisk { .. } => 0,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_read_and_the_place_kept() {
        let line = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}"#;
        let entry = Entry::on_disk(line, 40).unwrap();
        assert_eq!(
            (entry.kind(), entry.id(), entry.parent()),
            ("message", "a1", None)
        );
        assert_eq!(entry.timestamp(), "2026-01-01T00:00:00.000Z");
        assert!(
            matches!(entry.line, Line::OnDisk { offset: 40, len } if len as usize == line.len())
        );
        assert!(entry.is_line(line));
        assert!(!entry.is_line(&line.replace("\"a1\"", "\"a2\"")));
    }

    #[test]
    fn a_repeated_key_reads_as_a_map_reads_it() {
        let entry =
            Entry::on_disk(r#"{"type":"label","id":"x","id":"y","parentId":"p"}"#, 0).unwrap();
        assert_eq!((entry.id(), entry.parent()), ("y", Some("p")));
        let numeric = Entry::on_disk(r#"{"type":"label","id":"x","parentId":7}"#, 0).unwrap();
        assert_eq!(numeric.parent(), None);
    }

    #[test]
    fn a_line_without_type_or_id_is_no_entry() {
        assert!(Entry::on_disk(r#"{"id":"x"}"#, 0).is_none());
        assert!(Entry::on_disk(r#"{"type":"message","id":7}"#, 0).is_none());
        assert!(Entry::on_disk(r#"{"type":"message","id":"x"} trailing"#, 0).is_none());
        assert!(Entry::on_disk("[1,2]", 0).is_none());
        assert!(Entry::on_disk("not json", 0).is_none());
    }
}
