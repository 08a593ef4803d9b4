//! Input framing: JSON objects, one per line, split on LF only (a trailing CR is stripped;
//! U+2028/U+2029 are ordinary characters). A line longer than [`MAX_LINE`] is discarded as it
//! streams in, so memory stays bounded whatever arrives; invalid UTF-8 is reported, not fatal.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest line accepted (bytes, without the LF).
pub const MAX_LINE: usize = 64 << 20;
/// How much of an overlong line is kept (to answer it with its id).
pub const KEPT_HEAD: usize = 4096;

/// One line of input, or why it is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line of text.
    Text(String),
    /// A line that is not UTF-8.
    InvalidUtf8,
    /// A line longer than [`MAX_LINE`]: its length, and its first [`KEPT_HEAD`] bytes (where
    /// the command's id usually is).
    TooLong(usize, Vec<u8>),
}

/// Reads lines from an async reader.
pub struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    /// How far past `start` the buffer is known to hold no LF.
    scanned: usize,
    overflow: Option<usize>,
    /// The head of the overlong line being dropped.
    head: Vec<u8>,
    eof: bool,
    max_line: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader with the default line limit.
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, MAX_LINE)
    }

    /// A reader with a given line limit.
    pub fn with_limit(reader: R, max_line: usize) -> Self {
        LineReader {
            reader,
            buf: Vec::with_capacity(64 << 10),
            start: 0,
            scanned: 0,
            overflow: None,
            head: Vec::new(),
            eof: false,
            max_line,
        }
    }

    /// Changes the line limit from the next line on (a socket's hello is read with a small one,
    /// the commands after it with the usual one, from the same buffer).
    pub fn set_limit(&mut self, max_line: usize) {
        self.max_line = max_line;
    }

    /// The next line; `None` at end of input. A final line without LF is still a line.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let from = self.start + self.scanned;
            if let Some(pos) = self.buf[from..].iter().position(|&b| b == b'\n') {
                let end = from + pos;
                let line = self.take(end);
                self.start = end + 1;
                self.scanned = 0;
                return Ok(Some(line));
            }
            self.scanned = self.buf.len() - self.start;
            // No LF yet: drop what an overlong line has accumulated.
            let pending = self.buf.len() - self.start;
            if self.overflow.is_some() || pending > self.max_line {
                if self.overflow.is_none() {
                    let kept = pending.min(KEPT_HEAD);
                    self.head = self.buf[self.start..self.start + kept].to_vec();
                }
                *self.overflow.get_or_insert(0) += pending;
                self.buf.clear();
                self.start = 0;
                self.scanned = 0;
            } else if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            if self.eof {
                if self.buf.is_empty() && self.overflow.is_none() {
                    return Ok(None);
                }
                let end = self.buf.len();
                let line = self.take(end);
                self.buf.clear();
                self.start = 0;
                self.scanned = 0;
                return Ok(Some(line));
            }
            let mut chunk = [0u8; 64 << 10];
            let n = self.reader.read(&mut chunk).await?;
            if n == 0 {
                self.eof = true;
            } else {
                self.buf.extend_from_slice(&chunk[..n]);
            }
        }
    }

    /// Takes `buf[start..end]` as a line, accounting for an overflow in progress.
    fn take(&mut self, end: usize) -> Line {
        let bytes = &self.buf[self.start..end];
        if let Some(dropped) = self.overflow.take() {
            return Line::TooLong(dropped + bytes.len(), std::mem::take(&mut self.head));
        }
        if bytes.len() > self.max_line {
            return Line::TooLong(bytes.len(), bytes[..bytes.len().min(KEPT_HEAD)].to_vec());
        }
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(text) => Line::Text(text.to_string()),
            Err(_) => Line::InvalidUtf8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], limit: usize) -> Vec<Line> {
        let mut reader = LineReader::with_limit(input, limit);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn splits_on_lf_only_and_strips_one_cr() {
        let got = lines("a\r\nb\u{2028}c\n\nlast".as_bytes(), 100).await;
        assert_eq!(
            got,
            vec![
                Line::Text("a".into()),
                Line::Text("b\u{2028}c".into()),
                Line::Text(String::new()),
                Line::Text("last".into())
            ]
        );
    }

    #[tokio::test]
    async fn overlong_lines_are_dropped_and_reading_goes_on() {
        let mut input = vec![b'x'; 1000];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 10).await;
        assert_eq!(
            got,
            vec![
                Line::TooLong(1000, vec![b'x'; 1000]),
                Line::Text("ok".into())
            ]
        );
    }

    #[tokio::test]
    async fn invalid_utf8_is_reported() {
        let got = lines(b"\xff\xfe\n{}\n", 100).await;
        assert_eq!(got, vec![Line::InvalidUtf8, Line::Text("{}".into())]);
    }
}
