//! What a session holds in memory, estimated from what it keeps (a multi-session host reports it
//! in `get_state`, so a host can see which sessions to park).

use serde::Serialize;

use super::Session;
use super::file::held::Held;

/// A session's memory, by part.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Footprint {
    /// The entries of its file.
    pub entries: usize,
    /// The messages of its conversation.
    pub messages: usize,
    /// Of those, the ones held parsed (the rest are read back from their lines).
    pub messages_held: usize,
    /// Bytes of the file's index (heads of entries, lines not on disk yet, the id index).
    pub index_bytes: usize,
    /// Bytes of the messages held parsed (as their JSON text, about their size in memory).
    pub message_bytes: usize,
    /// Bytes of the provider's encoded prefix kept for the next request.
    pub cached_prefix_bytes: usize,
    /// The sum.
    pub bytes: usize,
}

impl Session {
    /// What the session holds in memory now, estimated.
    pub fn footprint(&self) -> Footprint {
        let (entries, messages, held, index_bytes, message_bytes) = {
            let state = self.shared.state();
            let held: Vec<usize> = state
                .messages
                .iter()
                .filter_map(|message| message.parsed())
                .map(|message| serde_json::to_vec(message).map_or(0, |text| text.len()))
                .collect();
            (
                state.store.all_entries().len(),
                state.messages.len(),
                held.len(),
                state.store.held_bytes(),
                held.iter().sum::<usize>()
                    + state.messages.capacity() * std::mem::size_of::<Held>()
                    + state
                        .entry_ids
                        .iter()
                        .map(|id| id.len() + std::mem::size_of::<String>())
                        .sum::<usize>(),
            )
        };
        let cached_prefix_bytes = self.shared.history_cache.held_bytes();
        Footprint {
            entries,
            messages,
            messages_held: held,
            index_bytes,
            message_bytes,
            cached_prefix_bytes,
            bytes: index_bytes + message_bytes + cached_prefix_bytes,
        }
    }
}
