//! The search: the files of a walk (or one file) searched line by line with ripgrep's
//! searcher on every core, reported in walk order and cut at the match limit as a sequential
//! search would cut them — the threads take files in order and stop taking new ones once the
//! files finished in order hold enough matches.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::{EntryGlob, SearchError};

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

/// Searches the file `root`, or the files under the directory `root` in walk order, for
/// lines matching the query. Files that cannot be read or hold a NUL byte are skipped.
pub fn grep(
    root: &Path,
    query: &GrepQuery,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<GrepHit>, SearchError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(query.ignore_case)
        .fixed_strings(query.literal)
        .line_terminator(Some(b'\n'))
        .build(&query.pattern)
        .map_err(|err| SearchError::Invalid(format!("Invalid pattern: {err}")))?;
    let files: Vec<(PathBuf, String)> = if root.is_file() {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        vec![(root.to_path_buf(), name)]
    } else {
        super::walk(root, cancelled)?
            .into_iter()
            .filter(|e| {
                !e.is_dir
                    && !e.is_link
                    && query.glob.as_ref().is_none_or(|g| g.matches(&e.relative))
            })
            .map(|e| (root.join(&e.relative), e.relative))
            .collect()
    };
    let limit = query.limit.max(1);
    let ordered = Mutex::new(InOrder {
        slots: vec![None; files.len()],
        reported: 0,
        matches: 0,
        hits: Vec::new(),
    });
    let (next, done) = (AtomicUsize::new(0), AtomicBool::new(false));
    std::thread::scope(|scope| {
        for _ in 0..super::threads().min(files.len()) {
            scope.spawn(|| {
                let mut searcher = SearcherBuilder::new()
                    .line_number(true)
                    .before_context(query.context)
                    .after_context(query.context)
                    .binary_detection(BinaryDetection::none())
                    .build();
                let mut buffer = Vec::new();
                while !done.load(Ordering::Relaxed) && !cancelled() {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some((path, relative)) = files.get(index) else {
                        break;
                    };
                    let hit = search_file(&mut searcher, &matcher, &mut buffer, path, relative, limit);
                    let Ok(mut ordered) = ordered.lock() else {
                        break;
                    };
                    if ordered.finish(index, hit, limit, query.context) {
                        done.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    if cancelled() {
        return Err(SearchError::Cancelled);
    }
    Ok(ordered.into_inner().map(|o| o.hits).unwrap_or_default())
}

/// Files finished out of order, reported in order.
struct InOrder {
    /// Per file: `None` until searched, then its hit if it had one.
    slots: Vec<Option<Option<GrepHit>>>,
    /// How many files from the start have been reported.
    reported: usize,
    /// The matches reported so far.
    matches: usize,
    /// What was reported.
    hits: Vec<GrepHit>,
}

impl InOrder {
    /// Records file `index`'s result and reports every file now in order; true once the limit
    /// is reached.
    fn finish(&mut self, index: usize, hit: Option<GrepHit>, limit: usize, context: usize) -> bool {
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
        self.matches >= limit
    }
}

/// One file's hit, at most `limit` matches (and the context after the last); `bytes` is the
/// thread's reusable read buffer.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    bytes: &mut Vec<u8>,
    path: &Path,
    relative: &str,
    limit: usize,
) -> Option<GrepHit> {
    read_no_follow(path, bytes)?;
    if bytes.contains(&0) {
        return None; // binary
    }
    let mut sink = Collect {
        lines: Vec::new(),
        matches: 0,
        limit,
    };
    searcher.search_slice(matcher, bytes, &mut sink).ok()?;
    (sink.matches > 0).then(|| GrepHit {
        relative: relative.to_string(),
        lines: sink.lines,
    })
}

/// Reads the file at `path` into `bytes`, unless it is (now) a symbolic link: the walk saw a
/// file, and a link swapped in since must not lead the search out of its root.
fn read_no_follow(path: &Path, bytes: &mut Vec<u8>) -> Option<()> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    bytes.clear();
    file.read_to_end(bytes).ok()?;
    Some(())
}

/// Gathers a file's lines; stops at the first match past the limit.
struct Collect {
    lines: Vec<GrepLine>,
    matches: usize,
    limit: usize,
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

    #[test]
    fn matches_come_in_walk_order_with_merged_context_and_are_cut_at_the_limit() {
        let dir = std::env::temp_dir().join(format!("pith-grep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("a.txt"), "x\nneedle 1\ny\nneedle 2\r\nz\nw\n").unwrap();
        std::fs::write(dir.join("b/c.txt"), "needle 3\n").unwrap();
        std::fs::write(dir.join("bin"), b"needle\0").unwrap();
        let hits = grep(&dir, &query("needle", 1, 100), &|| false).unwrap();
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
        let cut = grep(&dir, &query("needle", 1, 1), &|| false).unwrap();
        assert_eq!(
            render(&cut),
            ["a.txt-1- x", "a.txt:2: needle 1", "a.txt-3- y"]
        );
        let two = grep(&dir, &query("needle", 0, 2), &|| false).unwrap();
        assert_eq!(render(&two), ["a.txt:2: needle 1", "a.txt:4: needle 2"]);
        assert!(matches!(
            grep(&dir, &query("(", 0, 1), &|| false),
            Err(SearchError::Invalid(_))
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
