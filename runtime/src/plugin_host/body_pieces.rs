//! A spliced body, and its pieces as they are written to the socket: held parts as they are, parts
//! stored in a prefix file read in pieces of [`PIECE`] bytes, short runs close together out of
//! one window of the file. The pieces' buffers come back to a small pool when written, so a
//! body of many megabytes goes through a few buffers.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::history_prefix::{Segment, StoredRun, read_at, read_exact_at};

/// The size of the pieces a body's stored parts are read and written in (below glibc's
/// threshold for mapping a block of its own, so the pieces' memory is reused, not faulted in
/// again for every piece).
pub const PIECE: usize = 128 * 1024;

/// How many pieces one read on the blocking pool prepares.
const PIECES_PER_READ: usize = 8;

/// A spliced body: its pieces in order, the cached prefix's segments shared, not copied.
#[derive(Debug, Clone, Default)]
pub struct SplicedBody {
    parts: Vec<Segment>,
}

impl SplicedBody {
    /// Adds a piece (nothing for an empty one).
    pub fn push(&mut self, part: Segment) {
        if !part.is_empty() {
            self.parts.push(part);
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Segment::len).sum()
    }

    /// True when it has no byte.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The body in one piece (for a hook that reads or replaces it).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len());
        for part in &self.parts {
            part.read_into(&mut out)?;
        }
        Ok(out)
    }

    /// The body as the pieces to write, in order: held parts as they are, stored ones read a
    /// few pieces at a time on the blocking pool. A stored part that cannot be read ends the
    /// stream with the error and sets `refused` (the session stops using its cache).
    pub fn into_stream(
        self,
        refused: Arc<AtomicBool>,
    ) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
        stream(self.parts, refused)
    }
}

/// `parts` as the pieces to write, in order: held parts as they are, stored ones read a few
/// pieces at a time on the blocking pool. A stored part that cannot be read ends the stream
/// with the error and sets `refused` (the session stops using its cache).
fn stream(
    parts: Vec<Segment>,
    refused: Arc<AtomicBool>,
) -> impl Stream<Item = io::Result<Bytes>> + Send + 'static {
    let reader = PieceReader {
        parts: parts.into(),
        window: None,
        pool: Pool::default(),
    };
    futures_util::stream::unfold(Some(reader), move |reader| {
        let refused = refused.clone();
        async move {
            let mut reader = reader?;
            let read = tokio::task::spawn_blocking(move || {
                let pieces = reader.next_pieces(PIECES_PER_READ);
                (reader, pieces)
            })
            .await;
            let batch = match read {
                Ok((_, Ok(pieces))) if pieces.is_empty() => return None,
                Ok((reader, Ok(pieces))) => (pieces.into_iter().map(Ok).collect(), Some(reader)),
                Ok((_, Err(err))) => {
                    refused.store(true, Ordering::Relaxed);
                    tracing::warn!("cannot read the conversation's cached prefix: {err}");
                    (vec![Err(err)], None)
                }
                Err(join) => (vec![Err(io::Error::other(join))], None),
            };
            Some(batch)
        }
    })
    .flat_map(|pieces: Vec<io::Result<Bytes>>| futures_util::stream::iter(pieces))
}

/// Reads a body's parts into pieces to write.
struct PieceReader {
    parts: VecDeque<Segment>,
    /// The part of a prefix file read last: the file, where it starts, its bytes.
    window: Option<(Arc<File>, u64, Vec<u8>)>,
    /// The pieces' buffers, back from the writer.
    pool: Pool,
}

/// Buffers of pieces a body's writer is done with, for the next pieces: a body of many
/// megabytes goes through a few buffers instead of fresh memory for each piece.
#[derive(Clone, Default)]
struct Pool(Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

/// How many buffers a pool keeps.
const POOLED: usize = 2 * PIECES_PER_READ;

impl Pool {
    /// A buffer of a piece's capacity (a reused one keeps its length: its bytes are read
    /// over, not cleared first).
    fn take(&self) -> Vec<u8> {
        let reused = self.0.lock().unwrap_or_else(|p| p.into_inner()).pop();
        reused.unwrap_or_else(|| Vec::with_capacity(PIECE))
    }

    /// `bytes` as a piece whose buffer comes back when the writer drops it.
    fn piece(&self, bytes: Vec<u8>) -> Bytes {
        Bytes::from_owner(Pooled {
            bytes,
            pool: self.clone(),
        })
    }
}

/// A piece's buffer, back to its pool when dropped.
struct Pooled {
    bytes: Vec<u8>,
    pool: Pool,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let bytes = std::mem::take(&mut self.bytes);
        let mut pool = self.pool.0.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOLED {
            pool.push(bytes);
        }
    }
}

impl PieceReader {
    /// Up to `count` pieces of about [`PIECE`] bytes (a large held part is one piece of its
    /// own); none at the end.
    fn next_pieces(&mut self, count: usize) -> io::Result<Vec<Bytes>> {
        let mut pieces = Vec::new();
        let mut gathered = Vec::new();
        while pieces.len() < count {
            let Some(part) = self.parts.pop_front() else {
                break;
            };
            match part {
                Segment::Held(bytes) if bytes.len() >= PIECE / 4 => {
                    self.flush(&mut gathered, &mut pieces);
                    pieces.push(bytes);
                }
                Segment::Held(bytes) => self.gather(&mut gathered, &bytes, &mut pieces),
                Segment::Stored(run) => self.read_run(&run, &mut gathered, &mut pieces)?,
            }
        }
        self.flush(&mut gathered, &mut pieces);
        Ok(pieces)
    }

    /// Adds a stored run's bytes: a long one read straight into pieces, a short one out of a
    /// window of its file (a prefix read back from disk is many short runs, close together).
    fn read_run(
        &mut self,
        run: &StoredRun,
        gathered: &mut Vec<u8>,
        pieces: &mut Vec<Bytes>,
    ) -> io::Result<()> {
        let end = run.offset + run.len as u64;
        let mut offset = run.offset;
        while offset < end {
            let left = usize::try_from(end - offset).unwrap_or(usize::MAX);
            if left >= PIECE {
                self.flush(gathered, pieces);
                let mut piece = self.pool.take();
                piece.resize(PIECE, 0); // zeroes only what a reused buffer did not hold
                read_exact_at(&run.file, &mut piece, offset)?;
                pieces.push(self.pool.piece(piece));
                offset += PIECE as u64;
                continue;
            }
            let pool = self.pool.clone();
            let window = self.window_at(&run.file, offset)?;
            let take = window.len().min(left);
            gather(&pool, gathered, &window[..take], pieces);
            offset += take as u64;
        }
        Ok(())
    }

    /// The bytes of `file` from `offset` to the end of the window holding it (read anew when
    /// the one held does not).
    fn window_at(&mut self, file: &Arc<File>, offset: u64) -> io::Result<&[u8]> {
        let held = matches!(&self.window, Some((held, start, bytes))
            if Arc::ptr_eq(held, file) && *start <= offset && offset < start + bytes.len() as u64);
        if !held {
            let mut bytes = match self.window.take() {
                Some((_, _, mut bytes)) => {
                    bytes.clear();
                    bytes
                }
                None => Vec::with_capacity(PIECE),
            };
            bytes.resize(PIECE, 0);
            let read = read_at(file, &mut bytes, offset)?;
            if read == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the conversation's prefix file is shorter than its cache expects",
                ));
            }
            bytes.truncate(read);
            self.window = Some((file.clone(), offset, bytes));
        }
        let Some((_, start, bytes)) = &self.window else {
            unreachable!("a window was just read");
        };
        Ok(&bytes[usize::try_from(offset - start).unwrap_or(0)..])
    }
}

impl PieceReader {
    fn gather(&self, gathered: &mut Vec<u8>, bytes: &[u8], pieces: &mut Vec<Bytes>) {
        gather(&self.pool, gathered, bytes, pieces);
    }

    fn flush(&self, gathered: &mut Vec<u8>, pieces: &mut Vec<Bytes>) {
        flush(&self.pool, gathered, pieces);
    }
}

/// Adds `bytes` to the piece being gathered, handing over full pieces.
fn gather(pool: &Pool, gathered: &mut Vec<u8>, mut bytes: &[u8], pieces: &mut Vec<Bytes>) {
    while !bytes.is_empty() {
        if gathered.capacity() == 0 {
            *gathered = pool.take();
            gathered.clear();
        }
        let take = (PIECE - gathered.len().min(PIECE)).min(bytes.len());
        gathered.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if gathered.len() >= PIECE {
            flush(pool, gathered, pieces);
        }
    }
}

/// Hands over the piece being gathered, if any.
fn flush(pool: &Pool, gathered: &mut Vec<u8>, pieces: &mut Vec<Bytes>) {
    if !gathered.is_empty() {
        pieces.push(pool.piece(std::mem::take(gathered)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_host::prefix_test_files::{item, stored};

    async fn streamed(body: SplicedBody, refused: Arc<AtomicBool>) -> io::Result<Vec<u8>> {
        let mut stream = std::pin::pin!(body.into_stream(refused));
        let mut out = Vec::new();
        while let Some(piece) = stream.next().await {
            out.extend_from_slice(&piece?);
        }
        Ok(out)
    }

    #[tokio::test]
    async fn a_body_is_streamed_from_many_short_runs_and_long_ones() {
        let mut runs: Vec<String> = (0..2000).map(|n| item(n, 2500)).collect();
        runs.push(item(9999, 3 * PIECE + 17));
        let (_dir, _file, stored_runs) = stored(&runs);
        let mut body = SplicedBody::default();
        body.push(Segment::Held(Bytes::from_static(b"{\"messages\":[")));
        for (n, run) in stored_runs.into_iter().enumerate() {
            if n > 0 {
                body.push(Segment::Held(Bytes::from_static(b",")));
            }
            body.push(Segment::Stored(run));
        }
        body.push(Segment::Held(Bytes::from(vec![b' '; PIECE])));
        body.push(Segment::Held(Bytes::from_static(b"]}")));
        let expected = body.to_vec().unwrap();
        assert_eq!(expected.len(), body.len());
        let refused = Arc::new(AtomicBool::new(false));
        assert_eq!(streamed(body, refused.clone()).await.unwrap(), expected);
        assert!(!refused.load(Ordering::Relaxed));
    }

    #[tokio::test]
    async fn a_prefix_file_cut_short_fails_the_body_and_refuses_the_cache() {
        let (dir, _file, runs) = stored(&[item(1, 1000), item(2, 1000)]);
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("p.prefix"))
            .unwrap()
            .set_len(1500)
            .unwrap();
        let mut body = SplicedBody::default();
        runs.into_iter()
            .for_each(|run| body.push(Segment::Stored(run)));
        let refused = Arc::new(AtomicBool::new(false));
        let err = streamed(body, refused.clone()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(refused.load(Ordering::Relaxed));
    }
}
