//! The ids of commands read from `--listen` clients: each is tagged with the client it came from
//! on the way in (a control character no host puts first, the client's number, the original id),
//! so its answer goes back to that client with the id it sent.

use serde_json::{Value, json};

/// The marker a routed command id starts with (a control character no host puts first).
const ROUTE_MARK: char = '\u{1}';

/// Tags a frame's id with the client it came from; a frame without an id gets a tag with
/// nothing after it (its answer goes back to the client without an id).
pub(crate) fn tag_id(client: u64, id: Option<&Value>) -> Value {
    let original = id.map(Value::to_string).unwrap_or_default();
    json!(format!("{ROUTE_MARK}{client}{ROUTE_MARK}{original}"))
}

/// The client a tagged id names and the original id (`None`: the frame had none); `None` for
/// an id that is not tagged.
pub(crate) fn untag(id: &Value) -> Option<(u64, Option<Value>)> {
    let rest = id.as_str()?.strip_prefix(ROUTE_MARK)?;
    let (client, original) = rest.split_once(ROUTE_MARK)?;
    let client = client.parse().ok()?;
    if original.is_empty() {
        return Some((client, None));
    }
    Some((client, Some(serde_json::from_str(original).ok()?)))
}

/// The client a routed command came from (its tagged id); `None` for a command read on stdio.
pub(crate) fn client_of(id: &Value) -> Option<u64> {
    untag(id).map(|(client, _)| client)
}

/// True when `id` looks like a tag (a client may not send one: it could forge another
/// client's answers).
pub(crate) fn looks_tagged(id: &Value) -> bool {
    id.as_str().is_some_and(|text| text.starts_with(ROUTE_MARK))
}

/// `frame` with its id as the client sent it, for the answers to dialogs and host-tool calls
/// whose id names what they answer (the tagged one stays on the frame, so an error about it
/// goes back to its client).
pub(crate) fn untagged_answer(
    frame: &serde_json::Map<String, Value>,
) -> std::borrow::Cow<'_, serde_json::Map<String, Value>> {
    match frame.get("id").and_then(untag) {
        Some((_, original)) => {
            let mut plain = frame.clone();
            match original {
                Some(id) => plain.insert("id".into(), id),
                None => plain.remove("id"),
            };
            std::borrow::Cow::Owned(plain)
        }
        None => std::borrow::Cow::Borrowed(frame),
    }
}
