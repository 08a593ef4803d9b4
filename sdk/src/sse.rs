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

/// Accumulates bytes and yields complete events.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    current: SseEvent,
    has_data: bool,
}

impl SseParser {
    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]);
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
                }
                _ => {}
            }
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
    use super::*;

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
