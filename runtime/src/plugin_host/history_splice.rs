//! The provider-history prefix cache's splice, in a provider's request body.
//!
//! On a long session most of each request is the same conversation prefix, encoded again by the
//! provider plugin every turn. Instead, the runtime hands the provider a *marker* message in
//! place of the prefix it already has encoded (a user message whose only text is
//! [`HistorySplice::splice_marker`]), and, at the boundary up to which the next prefix reaches,
//! an *end* marker. The provider encodes both as ordinary messages; when it sends the body, the
//! host finds each marker's element in the body's conversation array (the outermost array that
//! holds it), puts the cached encoding in place of the first, drops the second, and keeps the
//! encoding of what lies between them as the next prefix. The provider never learns of it, and
//! the body sent is byte for byte the one it would have written for the whole conversation.
//!
//! A marker's element must be the marker message alone (every array in it holds at most one
//! item, every string is the marker or a short identifier such as `"user"`): a provider that
//! merged it with a neighbour fails the splice, which is then refused rather than guessed.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;

pub use super::body_pieces::SplicedBody;
pub use super::history_prefix::{Prefix, Segment};
use super::history_prefix::{trim, trim_end, trim_start};

/// Where a splice puts the prefix it learned.
pub type Learned = Arc<Mutex<Option<Prefix>>>;

/// What a provider call's body gets spliced with, and where the learned prefix goes.
#[derive(Debug)]
pub struct HistorySplice {
    /// The text of the message standing for the cached prefix.
    pub splice_marker: String,
    /// The cached encoding (empty: none yet).
    pub cached: Prefix,
    /// The text of the message at the boundary of the next prefix, when the request has one.
    pub end_marker: Option<String>,
    /// Where the next prefix's encoding goes once the body is spliced.
    pub learned: Learned,
    /// True for a learning step: the body is spliced for what it teaches, and not sent.
    pub learn_only: bool,
    /// Set when the splice fails: the session stops using the cache.
    pub refused: Arc<std::sync::atomic::AtomicBool>,
}

/// Why a body could not be spliced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    /// A marker is not in the body as a message of its own.
    #[error("the provider's request body does not hold the history marker as a message of its own")]
    MarkerLost,
}

impl HistorySplice {
    /// True when `body` is the request the markers are in (not another request the provider
    /// makes, such as a token refresh).
    pub fn concerns(&self, body: &[u8]) -> bool {
        find(body, self.splice_marker.as_bytes()).is_some()
    }

    /// `body` with the cached prefix in place of the splice marker and the end marker dropped;
    /// the next prefix is kept in `learned`. A failure sets `refused`.
    pub fn apply(&self, body: Vec<u8>) -> Result<SplicedBody, SpliceError> {
        let spliced = self.splice(Bytes::from(body));
        if spliced.is_err() {
            self.refused
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        spliced
    }

    fn splice(&self, body: Bytes) -> Result<SplicedBody, SpliceError> {
        let mut markers = vec![self.splice_marker.as_str()];
        markers.extend(self.end_marker.as_deref());
        let mut items = elements_of(&body, &markers)
            .ok_or(SpliceError::MarkerLost)?
            .into_iter();
        let start = items.next().ok_or(SpliceError::MarkerLost)?;
        let end = items.next();
        let range = |part: &[u8]| Segment::Held(body.slice_ref(part));
        let before = trim_end(&body[..start.start]);
        let (middle, after) = match &end {
            Some(end) => (
                trim(&body[start.end..end.start]),
                trim_start(&body[end.end..]),
            ),
            None => (&[][..], trim_start(&body[start.end..])),
        };
        if end.is_some() {
            *self.learned.lock().unwrap_or_else(|p| p.into_inner()) =
                Some(self.cached.extended(body.slice_ref(middle)));
        }
        let mut out = SplicedBody::default();
        out.push(range(before));
        let comma = || Segment::Held(Bytes::from_static(b","));
        let mut items: Vec<Segment> = self.cached.parts().collect();
        if !middle.is_empty() {
            if !items.is_empty() {
                items.push(comma());
            }
            items.push(range(middle));
        }
        let closes = after.first() == Some(&b']');
        let opened = matches!(before.last(), Some(b'['));
        if !items.is_empty() && !opened {
            out.push(comma());
        }
        let had_items = !items.is_empty();
        items.into_iter().for_each(|item| out.push(item));
        if !closes && (had_items || !opened) {
            out.push(comma());
        }
        out.push(range(after));
        Ok(out)
    }
}

/// For each marker, the range of the item of the body's outermost array that holds it, when
/// that item is the marker message alone. One pass over the body; strings are skipped with
/// `memchr`, so a long conversation's body is scanned at memory speed.
fn elements_of(body: &[u8], markers: &[&str]) -> Option<Vec<Range<usize>>> {
    let mut positions = Vec::with_capacity(markers.len());
    for marker in markers {
        let quoted = format!("\"{marker}\"");
        positions.push(memchr::memmem::find(body, quoted.as_bytes())?);
    }
    if positions.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    let items = outermost_items(body, &positions)?;
    for (item, marker) in items.iter().zip(markers) {
        let value: Value = serde_json::from_slice(&body[item.clone()]).ok()?;
        if !alone(&value, marker) {
            return None;
        }
    }
    Some(items)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// The items of the outermost array around each byte of `at` (string tokens' opening quotes,
/// in order).
fn outermost_items(body: &[u8], at: &[usize]) -> Option<Vec<Range<usize>>> {
    // Each open container: is it an array, and where its current item started.
    let mut stack: Vec<(bool, Option<usize>)> = Vec::new();
    let mut items = Vec::with_capacity(at.len());
    // The outermost array's depth and the start of its item that holds the next `at`.
    let mut target: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < body.len() && items.len() < at.len() {
        let byte = body[i];
        if byte.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if let Some((depth, start)) = target
            && matches!(byte, b',' | b']')
            && stack.len() == depth + 1
        {
            items.push(start..trim_end(&body[..i]).len());
            target = None;
        }
        if byte != b','
            && byte != b']'
            && byte != b'}'
            && let Some((true, start @ None)) = stack.last_mut()
        {
            *start = Some(i);
        }
        if at.get(items.len()) == Some(&i) && target.is_none() {
            let found = stack
                .iter()
                .enumerate()
                .find(|(_, (array, _))| *array)
                .and_then(|(depth, (_, start))| Some((depth, (*start)?)))?;
            target = Some(found);
        }
        match byte {
            b'"' => {
                // Past the string: to its closing quote, jumping over escapes.
                let mut j = i + 1;
                loop {
                    let next = j + memchr::memchr2(b'"', b'\\', body.get(j..)?)?;
                    if body[next] == b'\\' {
                        j = next + 2;
                    } else {
                        j = next + 1;
                        break;
                    }
                }
                // A marker's quote inside another string is no marker.
                if at.get(items.len()).is_some_and(|&p| p > i && p < j) {
                    return None;
                }
                i = j;
                continue;
            }
            b'[' => stack.push((true, None)),
            b'{' => stack.push((false, None)),
            b']' | b'}' => {
                stack.pop();
            }
            b',' => {
                if let Some((true, start)) = stack.last_mut() {
                    *start = None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (items.len() == at.len()).then_some(items)
}

/// True when `value` is a marker message alone: arrays of at most one item, strings that are
/// the marker or short identifiers.
fn alone(value: &Value, marker: &str) -> bool {
    match value {
        Value::Array(items) => items.len() <= 1 && items.iter().all(|v| alone(v, marker)),
        Value::Object(map) => map.values().all(|v| alone(v, marker)),
        Value::String(text) => {
            text == marker
                || (text.len() <= 24 && text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        }
        Value::Bool(_) | Value::Null | Value::Number(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splice(cached: &str, end: Option<&str>) -> HistorySplice {
        HistorySplice {
            splice_marker: "M1".into(),
            cached: Prefix::from_items(cached.as_bytes()),
            end_marker: end.map(str::to_string),
            learned: Arc::default(),
            learn_only: false,
            refused: Arc::default(),
        }
    }

    fn user(text: &str) -> String {
        format!(r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}]}}"#)
    }

    #[test]
    fn the_cached_prefix_takes_the_markers_place() {
        let body = format!(
            r#"{{"model":"m","messages":[{{"role":"system","content":"s, [x]"}},{},{}],"stream":true}}"#,
            user("M1"),
            user("new")
        );
        let cached = format!("{},{}", user("a"), user("b"));
        let out = splice(&cached, None)
            .apply(body.into_bytes())
            .unwrap()
            .to_vec()
            .unwrap();
        let expected = format!(
            r#"{{"model":"m","messages":[{{"role":"system","content":"s, [x]"}},{},{},{}],"stream":true}}"#,
            user("a"),
            user("b"),
            user("new")
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    #[test]
    fn the_next_prefix_is_learned_and_the_end_marker_dropped() {
        let body = format!(
            r#"{{"messages":[{}, {}, {}, {}]}}"#,
            user("M1"),
            user("b"),
            user("M2"),
            user("tail")
        );
        let splice = splice(&user("a"), Some("M2"));
        let out = splice.apply(body.into_bytes()).unwrap().to_vec().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                r#"{{"messages":[{},{},{}]}}"#,
                user("a"),
                user("b"),
                user("tail")
            )
        );
        let learned = splice
            .learned
            .lock()
            .unwrap()
            .clone()
            .unwrap()
            .to_vec()
            .unwrap();
        assert_eq!(
            String::from_utf8(learned).unwrap(),
            format!("{},{}", user("a"), user("b"))
        );
    }

    #[test]
    fn with_nothing_cached_the_marker_goes_and_the_ends_are_kept() {
        let body = format!(r#"{{"input":[{},{}]}}"#, user("M1"), user("M2"));
        let splice = splice("", Some("M2"));
        let out = splice.apply(body.into_bytes()).unwrap().to_vec().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"input":[]}"#);
        assert!(splice.learned.lock().unwrap().as_ref().unwrap().is_empty());
    }

    #[test]
    fn a_marker_merged_with_another_message_is_refused() {
        let merged = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"M1"},{"type":"text","text":"hi"}]}]}"#;
        assert_eq!(
            splice("", None)
                .apply(merged.as_bytes().to_vec())
                .map(|b| b.to_vec().unwrap()),
            Err(SpliceError::MarkerLost)
        );
        let joined = r#"{"messages":[{"role":"user","content":"M1\nhi"}]}"#;
        assert!(splice("", None).apply(joined.as_bytes().to_vec()).is_err());
        let escaped = r#"{"messages":[{"role":"user","content":"say \"M1\" [, ]"}]}"#;
        assert!(splice("", None).apply(escaped.as_bytes().to_vec()).is_err());
    }

    #[test]
    fn a_body_spliced_from_several_segments_is_the_whole_conversation() {
        let item = user(&"y".repeat(4000));
        let mut prefix = Prefix::default();
        let mut expected = Vec::new();
        for _ in 0..600 {
            prefix = prefix.extended(Bytes::from(item.clone()));
            expected.push(item.clone());
        }
        let expected = expected.join(",");
        let body = format!(r#"{{"messages":[{},{}]}}"#, user("M1"), user("new"));
        let spliced = HistorySplice {
            cached: prefix,
            ..splice("", None)
        }
        .apply(body.into_bytes())
        .unwrap();
        assert_eq!(
            String::from_utf8(spliced.to_vec().unwrap()).unwrap(),
            format!(r#"{{"messages":[{expected},{}]}}"#, user("new"))
        );
    }
}
