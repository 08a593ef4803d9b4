//! A conversation prefix as the provider encoded it (see `history_splice`), and the bodies
//! spliced with it. A prefix is a list of segments, each held in memory or stored in the
//! session's prefix file (see `agent::run::history_store`): a session's prefix costs memory
//! only until it is written there, and a body is read from the file a piece at a time as it
//! is sent, so that neither a session nor a request holds the whole conversation.

use std::fs::File;
use std::io;
use std::sync::Arc;

use bytes::Bytes;

/// A held segment is merged with the next items while it is smaller than this: a prefix held
/// in memory is a few dozen segments, and a turn copies at most this much.
pub const SEGMENT: usize = 1 << 20;

/// Bytes of a prefix file: `len` bytes at `offset`.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The prefix file, open for reading (the run stays readable when the file is replaced).
    pub file: Arc<File>,
    /// Where the bytes start.
    pub offset: u64,
    /// How many.
    pub len: usize,
}

/// A run of comma-separated items of a prefix, or a piece of a body.
#[derive(Debug, Clone)]
pub enum Segment {
    /// In memory.
    Held(Bytes),
    /// In a prefix file.
    Stored(StoredRun),
}

impl Segment {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Segment::Held(bytes) => bytes.len(),
            Segment::Stored(run) => run.len,
        }
    }

    /// True when it has no byte.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its first `len` bytes.
    fn head(&self, len: usize) -> Segment {
        match self {
            Segment::Held(bytes) => Segment::Held(bytes.slice(..len.min(bytes.len()))),
            Segment::Stored(run) => Segment::Stored(StoredRun {
                len: len.min(run.len),
                ..run.clone()
            }),
        }
    }

    /// Appends its bytes to `out`.
    pub(super) fn read_into(&self, out: &mut Vec<u8>) -> io::Result<()> {
        match self {
            Segment::Held(bytes) => out.extend_from_slice(bytes),
            Segment::Stored(run) => {
                let start = out.len();
                out.resize(start + run.len, 0);
                read_exact_at(&run.file, &mut out[start..], run.offset)?;
            }
        }
        Ok(())
    }
}

/// Fills `buf` from `file` at `offset`; an error when the file ends first.
pub(super) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset)? {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the conversation's prefix file is shorter than its cache expects",
                ));
            }
            read => {
                buf = &mut buf[read..];
                offset += read as u64;
            }
        }
    }
    Ok(())
}

/// One positioned read.
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    }
}

/// An encoded conversation prefix: the conversation array's items, comma-separated, as
/// segments that the requests sending them share (a request copies none of them).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    /// Non-empty runs of comma-separated items; a comma goes between two segments.
    segments: Vec<Segment>,
}

impl Prefix {
    /// A prefix of these items (comma-separated; empty for none).
    pub fn from_items(items: &[u8]) -> Prefix {
        Prefix::default().extended(Bytes::copy_from_slice(items))
    }

    /// A prefix of these segments (each non-empty, comma-separated items), in order.
    pub fn from_segments(segments: Vec<Segment>) -> Prefix {
        Prefix {
            segments: segments.into_iter().filter(|s| !s.is_empty()).collect(),
        }
    }

    /// Its length in bytes, the commas between segments included.
    pub fn len(&self) -> usize {
        let bytes: usize = self.segments.iter().map(Segment::len).sum();
        bytes + self.segments.len().saturating_sub(1)
    }

    /// True when it holds no item.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// True when every stored segment's bytes are still in its file (one cut short by another
    /// program is not). One `stat` per file.
    pub fn is_readable(&self) -> bool {
        let mut sizes: Vec<(*const File, u64)> = Vec::new();
        self.segments.iter().all(|segment| match segment {
            Segment::Held(_) => true,
            Segment::Stored(run) => {
                let file = Arc::as_ptr(&run.file);
                let size = match sizes.iter().find(|(known, _)| *known == file) {
                    Some((_, size)) => *size,
                    None => {
                        let size = run.file.metadata().map_or(0, |meta| meta.len());
                        sizes.push((file, size));
                        size
                    }
                };
                run.offset + run.len as u64 <= size
            }
        })
    }

    /// The bytes of its segments held in memory.
    pub fn held_bytes(&self) -> usize {
        self.segments
            .iter()
            .map(|segment| match segment {
                Segment::Held(bytes) => bytes.len(),
                Segment::Stored(_) => 0,
            })
            .sum()
    }

    /// This prefix followed by `items` (comma-separated; nothing added when empty). A small
    /// held last segment is merged with them (copied); otherwise they are shared, not copied.
    pub fn extended(&self, items: Bytes) -> Prefix {
        let items = items.slice_ref(trim(&items));
        let mut segments = self.segments.clone();
        if items.is_empty() {
            return Prefix { segments };
        }
        match segments.last_mut() {
            Some(Segment::Held(last)) if last.len() < SEGMENT => {
                let mut merged = Vec::with_capacity(last.len() + 1 + items.len());
                merged.extend_from_slice(last);
                merged.push(b',');
                merged.extend_from_slice(&items);
                *last = Bytes::from(merged);
            }
            _ => segments.push(Segment::Held(items)),
        }
        Prefix { segments }
    }

    /// Its first `len` bytes (a cut at a comma between items) followed by `stored`: this
    /// prefix with what it grew by since it was `len` bytes long read from where it was
    /// written.
    pub fn with_stored_tail(&self, len: usize, stored: StoredRun) -> Prefix {
        let mut segments = Vec::new();
        let mut at = 0;
        for segment in &self.segments {
            let start = at + usize::from(!segments.is_empty());
            if start >= len {
                break;
            }
            let end = start + segment.len();
            if end <= len {
                segments.push(segment.clone());
                at = end;
            } else {
                segments.push(segment.head(len - start));
                break;
            }
        }
        segments.push(Segment::Stored(stored));
        Prefix::from_segments(segments)
    }

    /// The segments with the commas between them, in order.
    pub fn parts(&self) -> impl Iterator<Item = Segment> + '_ {
        self.segments.iter().enumerate().flat_map(|(n, segment)| {
            let comma = (n > 0).then(|| Segment::Held(Bytes::from_static(b",")));
            comma.into_iter().chain(std::iter::once(segment.clone()))
        })
    }

    /// Its bytes after the first `from` (a comma at the cut left out), in pieces: what it grew
    /// by since it was `from` bytes long (held parts shared, stored ones read).
    pub fn tail(&self, from: usize) -> io::Result<Vec<Bytes>> {
        let mut out = Vec::new();
        let mut at = 0;
        for part in self.parts() {
            let end = at + part.len();
            if end > from {
                let skip = from.saturating_sub(at);
                let bytes = match part {
                    Segment::Held(bytes) => bytes,
                    Segment::Stored(_) => {
                        let mut read = Vec::with_capacity(part.len());
                        part.read_into(&mut read)?;
                        Bytes::from(read)
                    }
                };
                out.push(bytes.slice(skip..));
            }
            at = end;
        }
        if let Some(first) = out.first_mut()
            && first.first() == Some(&b',')
        {
            *first = first.slice(1..);
        }
        out.retain(|bytes| !bytes.is_empty());
        Ok(out)
    }

    /// The prefix in one piece.
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len());
        for part in self.parts() {
            part.read_into(&mut out)?;
        }
        Ok(out)
    }
}

fn is_separator(byte: &u8) -> bool {
    byte.is_ascii_whitespace() || *byte == b','
}

/// `bytes` without separators (whitespace, commas) at its ends.
pub fn trim(bytes: &[u8]) -> &[u8] {
    trim_start(trim_end(bytes))
}

/// `bytes` without separators at its end.
pub fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !is_separator(b))
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

/// `bytes` without separators at its start.
pub fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !is_separator(b))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_host::prefix_test_files::{item, stored};

    #[test]
    fn a_held_prefix_grows_in_shared_segments() {
        let one = item(0, 4000);
        let mut prefix = Prefix::default();
        let mut expected = Vec::new();
        for _ in 0..600 {
            prefix = prefix.extended(Bytes::from(one.clone()));
            expected.push(one.clone());
        }
        let expected = expected.join(",");
        assert_eq!(prefix.to_vec().unwrap(), expected.as_bytes());
        assert_eq!(prefix.len(), expected.len());
        assert!(prefix.segments.len() >= 2 && prefix.segments.len() <= 4);
        assert_eq!(
            prefix.held_bytes() + prefix.segments.len() - 1,
            prefix.len()
        );
    }

    #[test]
    fn what_a_prefix_grew_by_is_read_back_from_where_it_was_written() {
        let first = format!("{},{}", item(1, 10), item(2, 10));
        let (_dir, _file, runs) = stored(std::slice::from_ref(&first));
        let on_disk = Prefix::default().with_stored_tail(0, runs[0].clone());
        assert_eq!(on_disk.held_bytes(), 0);
        assert_eq!(on_disk.to_vec().unwrap(), first.as_bytes());
        let grown = on_disk.extended(Bytes::from(item(3, 10)));
        assert_eq!(
            grown.tail(on_disk.len()).unwrap().concat(),
            item(3, 10).as_bytes()
        );
        let held = Prefix::from_items(item(6, 4).as_bytes()).extended(Bytes::from(item(7, 4)));
        assert_eq!(
            held.tail(item(6, 4).len()).unwrap().concat(),
            item(7, 4).as_bytes()
        );
        // Written in its turn, the growth is read from the file too, the head shared.
        let (_dir2, _file2, more) = stored(&[item(3, 10)]);
        let both = grown.with_stored_tail(on_disk.len(), more[0].clone());
        assert_eq!(both.held_bytes(), 0);
        assert_eq!(both.to_vec().unwrap(), grown.to_vec().unwrap());
        // A cut inside a held segment keeps its head.
        let held = Prefix::from_items(format!("{},{}", item(4, 5), item(5, 5)).as_bytes());
        let cut = held.with_stored_tail(item(4, 5).len(), more[0].clone());
        assert_eq!(
            String::from_utf8(cut.to_vec().unwrap()).unwrap(),
            format!("{},{}", item(4, 5), item(3, 10))
        );
    }
}
