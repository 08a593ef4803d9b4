//! The search: the regular files of a walk (or one file) searched line by line with ripgrep's
//! searcher on every core, reported in walk order and cut at the match limit as a sequential
//! search would cut them — the threads take files in order, at most [`AHEAD`] past the first
//! unreported one, and stop once the files reported hold enough matches. Each file is opened
//! beneath the root with no link in its path and read as a stream.

use std::fs::File;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::handle::{DirHandle, EntryKind};
use super::query::{EntryGlob, SearchError};

/// What to search for.
#[derive(Debug, Clone)]
pub struct GrepQuery {
    /// A regular expression, or a literal string when `literal`.
    pub pattern: String,
    /// The pattern is a literal string.
    pub literal: bool,
    /// Letters match in either case.
    pub ignore_case: bool,
    /// Only files matching this glob.
    pub glob: Option<EntryGlob>,
    /// Lines of context before and after each match.
    pub context: usize,
    /// At most this many matching lines in all.
    pub limit: usize,
}

/// A line of a [`GrepHit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepLine {
    /// Its number, from 1.
    pub number: u64,
    /// Its text without the line ending, invalid UTF-8 replaced.
    pub text: String,
    /// A matching line (else a context line).
    pub is_match: bool,
}

/// One file's matching and context lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepHit {
    /// The path relative to the root (the file's name when the root is a file).
    pub relative: String,
    /// Its lines, in order, each once.
    pub lines: Vec<GrepLine>,
}

impl GrepHit {
    fn matches(&self) -> usize {
        self.lines.iter().filter(|l| l.is_match).count()
    }

    /// Keeps the first `allowed` matches and the context after the last of them.
    fn cut(&mut self, allowed: usize, context: usize) {
        let mut seen = 0;
        let mut last = 0;
        let keep = self
            .lines
            .iter()
            .take_while(|line| {
                if seen < allowed {
                    if line.is_match {
                        seen += 1;
                        last = line.number;
                    }
                    true
                } else {
                    !line.is_match && line.number <= last + context as u64
                }
            })
            .count();
        self.lines.truncate(keep);
    }
}

/// Where [`grep`] searches.
pub enum GrepRoot {
    /// The files under this directory, in walk order, but the paths skipped (relative to it).
    Dir(DirHandle, Vec<PathBuf>),
    /// This regular file, shown with this name.
    File(File, String),
}

/// How many files the threads may search ahead of the first one not yet reported (bounds the
/// memory of hits waiting for their turn).
const AHEAD: usize = 512;

/// Searches `root` for lines matching the query. Files that cannot be read, that are not
/// regular files, or that hold a NUL byte (binary) are skipped.
pub fn grep(
    root: GrepRoot,
    query: &GrepQuery,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<GrepHit>, SearchError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(query.ignore_case)
        .fixed_strings(query.literal)
        // `^` and `$` at every line's ends, `\r\n` ones included (as ripgrep's `--crlf`).
        .multi_line(true)
        .crlf(true)
        .build(&query.pattern)
        .map_err(|err| SearchError::Invalid(format!("Invalid pattern: {err}")))?;
    let (dir, files): (Option<DirHandle>, Vec<(PathBuf, String)>) = match root {
        GrepRoot::File(file, name) => {
            let searched = Searched { file };
            let hit = searched.search(
                &mut searcher(query.context),
                &matcher,
                &name,
                query.limit.max(1),
            );
            return Ok(hit.into_iter().collect());
        }
        GrepRoot::Dir(fd, skipped) => {
            let files = super::walk::walk(&fd, &skipped, cancelled)?
                .into_iter()
                .filter(|e| e.kind == EntryKind::File)
                .filter(|e| query.glob.as_ref().is_none_or(|g| g.matches(&e.relative)))
                .map(|e| (e.path, e.relative))
                .collect();
            (Some(fd), files)
        }
    };
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let limit = query.limit.max(1);
    let ordered = Mutex::new(InOrder {
        slots: vec![None; files.len()],
        next: 0,
        reported: 0,
        matches: 0,
        done: false,
        hits: Vec::new(),
    });
    let turn = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..super::walk::threads().min(files.len()) {
            scope.spawn(|| {
                let mut searcher = searcher(query.context);
                while let Some(index) = InOrder::take(&ordered, &turn, cancelled) {
                    let (path, relative) = &files[index];
                    let hit = dir.file(path).and_then(|file| {
                        let searched = Searched { file };
                        searched.search(&mut searcher, &matcher, relative, limit)
                    });
                    let mut state = ordered.lock().unwrap_or_else(|e| e.into_inner());
                    state.finish(index, hit, limit, query.context);
                    turn.notify_all();
                }
            });
        }
    });
    if cancelled() {
        return Err(SearchError::Cancelled);
    }
    Ok(ordered.into_inner().unwrap_or_else(|e| e.into_inner()).hits)
}

/// A searcher for `context` lines around matches, CRLF-aware, quitting at a NUL byte.
fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .line_terminator(LineTerminator::crlf())
        .binary_detection(BinaryDetection::quit(0))
        // A line longer than this is not searched (the file is skipped).
        .heap_limit(Some(MAX_LINE_BYTES))
        .build()
}

/// The longest line the searcher holds in memory.
const MAX_LINE_BYTES: usize = 64 << 20;

/// Files finished out of order, reported in order.
struct InOrder {
    /// Per file: `None` until searched, then its hit if it had one.
    slots: Vec<Option<Option<GrepHit>>>,
    /// The next file to hand out.
    next: usize,
    /// How many files from the start have been reported.
    reported: usize,
    /// The matches reported so far.
    matches: usize,
    /// The limit is reached (or the search stopped).
    done: bool,
    /// What was reported.
    hits: Vec<GrepHit>,
}

impl InOrder {
    /// The next file to search; waits while the threads are [`AHEAD`] files ahead of the
    /// reports; `None` when there is nothing more to do.
    fn take(
        state: &Mutex<InOrder>,
        turn: &Condvar,
        cancelled: &(dyn Fn() -> bool + Sync),
    ) -> Option<usize> {
        let mut state = state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if state.done || cancelled() || state.next >= state.slots.len() {
                return None;
            }
            if state.next < state.reported + AHEAD {
                state.next += 1;
                return Some(state.next - 1);
            }
            state = turn.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Records file `index`'s result and reports every file now in order.
    fn finish(&mut self, index: usize, hit: Option<GrepHit>, limit: usize, context: usize) {
        self.slots[index] = Some(hit);
        while self.matches < limit
            && let Some(slot) = self.slots.get_mut(self.reported)
            && let Some(hit) = slot.take()
        {
            self.reported += 1;
            if let Some(mut hit) = hit {
                let count = hit.matches();
                if self.matches + count > limit {
                    hit.cut(limit - self.matches, context);
                }
                self.matches = (self.matches + count).min(limit);
                self.hits.push(hit);
            }
        }
        self.done |= self.matches >= limit;
    }
}

/// An open regular file to search.
struct Searched {
    file: std::fs::File,
}

impl Searched {
    /// Its hit, at most `limit` matches (and the context after the last); `None` without a
    /// match, when it is not a regular file, when it is binary or when reading fails.
    fn search(
        &self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        relative: &str,
        limit: usize,
    ) -> Option<GrepHit> {
        if !self.file.metadata().ok()?.is_file() {
            return None;
        }
        let mut sink = Collect {
            lines: Vec::new(),
            matches: 0,
            limit,
            binary: false,
        };
        searcher.search_file(matcher, &self.file, &mut sink).ok()?;
        (sink.matches > 0 && !sink.binary).then(|| GrepHit {
            relative: relative.to_string(),
            lines: sink.lines,
        })
    }
}

/// Gathers a file's lines; stops at the first match past the limit, or at binary data.
struct Collect {
    lines: Vec<GrepLine>,
    matches: usize,
    limit: usize,
    binary: bool,
}
impl Collect {
    fn push(&mut self, first: Option<u64>, bytes: &[u8], is_match: bool) {
        let first = first.unwrap_or(0);
        for (offset, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            self.lines.push(GrepLine {
                number: first + offset as u64,
                text: String::from_utf8_lossy(line).into_owned(),
                is_match,
            });
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if self.matches >= self.limit {
            return Ok(false);
        }
        let before = self.lines.len();
        self.push(found.line_number(), found.bytes(), true);
        self.matches += self.lines.len() - before;
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(context.line_number(), context.bytes(), false);
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pattern: &str, context: usize, limit: usize) -> GrepQuery {
        GrepQuery {
            pattern: pattern.into(),
            literal: false,
            ignore_case: false,
            glob: None,
            context,
            limit,
        }
    }

    fn render(hits: &[GrepHit]) -> Vec<String> {
        hits.iter()
            .flat_map(|hit| {
                hit.lines.iter().map(move |l| {
                    let sep = if l.is_match { ':' } else { '-' };
                    format!("{}{sep}{}{sep} {}", hit.relative, l.number, l.text)
                })
            })
            .collect()
    }

    fn search(dir: &std::path::Path, query: &GrepQuery) -> Result<Vec<GrepHit>, SearchError> {
        let root = super::super::walk::open_dir(dir).unwrap();
        grep(GrepRoot::Dir(root, Vec::new()), query, &|| false)
    }

    #[test]
    fn matches_come_in_walk_order_with_merged_context_and_are_cut_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("a.txt"), "x\nneedle 1\ny\nneedle 2\r\nz\nw\n").unwrap();
        std::fs::write(dir.join("b/c.txt"), "needle 3\n").unwrap();
        std::fs::write(dir.join("bin"), b"needle\0").unwrap();
        let hits = search(dir, &query("needle", 1, 100)).unwrap();
        assert_eq!(
            render(&hits),
            [
                "a.txt-1- x",
                "a.txt:2: needle 1",
                "a.txt-3- y",
                "a.txt:4: needle 2",
                "a.txt-5- z",
                "b/c.txt:1: needle 3"
            ]
        );
        let cut = search(dir, &query("needle", 1, 1)).unwrap();
        assert_eq!(
            render(&cut),
            ["a.txt-1- x", "a.txt:2: needle 1", "a.txt-3- y"]
        );
        let two = search(dir, &query("needle", 0, 2)).unwrap();
        assert_eq!(render(&two), ["a.txt:2: needle 1", "a.txt:4: needle 2"]);
        // `$` before a CRLF ending, as line-by-line matching of `str::lines` had it.
        let end = search(dir, &query("2$", 0, 10)).unwrap();
        assert_eq!(render(&end), ["a.txt:4: needle 2"]);
        let end = search(dir, &query("1$", 0, 10)).unwrap();
        assert_eq!(render(&end), ["a.txt:2: needle 1"]);
        assert!(matches!(
            search(dir, &query("(", 0, 1)),
            Err(SearchError::Invalid(_))
        ));
    }

    #[test]
    fn special_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
        // A FIFO would block a reader forever.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        let hits = search(dir.path(), &query("needle", 0, 10)).unwrap();
        assert_eq!(render(&hits), ["a.txt:1: needle"]);
    }
}
