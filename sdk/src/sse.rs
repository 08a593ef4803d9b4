//! A server-sent-events parser for streamed HTTP bodies: feed it chunks as they arrive, take
//! complete events out.

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field (empty when absent).
    pub event: String,
    /// The `data:` lines joined with newlines.
    pub data: String,
}

/// The largest event accepted (its lines together): far beyond any real answer's event, small
/// enough that a runaway server cannot fill the plugin's memory with one.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// Accumulates bytes and yields complete events.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no newline.
    scanned: usize,
    current: SseEvent,
    has_data: bool,
    too_large: bool,
}

impl SseParser {
    /// Why the stream cannot go on (an event over [`MAX_EVENT_BYTES`]), once it happened.
    pub fn error(&self) -> Option<String> {
        self.too_large.then(|| {
            format!(
                "The provider sent one event of more than {} MiB; the answer was stopped",
                MAX_EVENT_BYTES >> 20
            )
        })
    }

    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        if self.too_large {
            return Vec::new();
        }
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        // Lines are read from `start` on, and the consumed prefix is dropped once at the end:
        // a chunk holding many events is not shifted once per line.
        let mut start = 0;
        loop {
            let from = start.max(self.scanned);
            let Some(found) = self.buffer[from..].iter().position(|b| *b == b'\n') else {
                self.buffer.drain(..start);
                self.scanned = self.buffer.len();
                self.too_large = self.buffer.len() + self.current.data.len() > MAX_EVENT_BYTES;
                break;
            };
            let end = from + found;
            let line_start = start;
            start = end + 1;
            self.scanned = 0;
            let line = String::from_utf8_lossy(&self.buffer[line_start..end]);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            if line.is_empty() {
                if self.has_data || !self.current.event.is_empty() {
                    events.push(std::mem::take(&mut self.current));
                    self.has_data = false;
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => self.current.event = value.to_string(),
                "data" => {
                    if self.has_data {
                        self.current.data.push('\n');
                    }
                    self.current.data.push_str(value);
                    self.has_data = true;
                    if self.current.data.len() > MAX_EVENT_BYTES {
                        self.too_large = true;
                        break;
                    }
                }
                _ => {}
            }
        }
        if self.too_large {
            self.buffer = Vec::new();
            self.current = SseEvent::default();
        }
        events
    }

    /// The last event, when the stream ended without a blank line after it.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buffer.is_empty() {
            let mut events = self.feed(b"\n");
            events.extend(self.feed(b"\n"));
            return events.pop();
        }
        (self.has_data).then(|| {
            self.has_data = false;
            std::mem::take(&mut self.current)
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_event_is_refused_without_rescanning() {
        let mut parser = SseParser::default();
        let chunk = vec![b'x'; 64 << 10];
        let mut fed = 0;
        while parser.error().is_none() && fed < 2 * MAX_EVENT_BYTES {
            assert!(parser.feed(&chunk).is_empty());
            fed += chunk.len();
        }
        assert!(parser.error().unwrap().contains("16 MiB"));
        assert!(fed <= MAX_EVENT_BYTES + chunk.len());
    }

    use super::*;

    #[test]
    fn a_chunk_of_many_events_is_read_in_one_pass() {
        let mut parser = SseParser::default();
        let body = "event: e\ndata: word\n\n".repeat(5000);
        // Split mid-event, so the unread tail is kept for the next chunk.
        let (first, second) = body.as_bytes().split_at(body.len() / 2 + 3);
        let mut events = parser.feed(first);
        events.extend(parser.feed(second));
        assert_eq!(events.len(), 5000);
        assert!(events.iter().all(|e| e.event == "e" && e.data == "word"));
        assert!(parser.finish().is_none());
    }

    #[test]
    fn events_split_across_chunks() {
        let mut parser = SseParser::default();
        assert!(
            parser
                .feed(b"event: message_start\ndata: {\"a\"")
                .is_empty()
        );
        let events = parser.feed(b":1}\n\n: comment\ndata: x\r\ndata: y\n\ndata: [DONE]\n\n");
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "message_start".into(),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "x\ny".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "[DONE]".into()
                },
            ]
        );
        assert!(parser.feed(b"data: tail").is_empty());
        assert_eq!(
            parser.finish(),
            Some(SseEvent {
                event: String::new(),
                data: "tail".into()
            })
        );
    }
}
