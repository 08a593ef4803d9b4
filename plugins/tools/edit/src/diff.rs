//! The edit's diff for hosts (`details.diff`), in pi's display format (`formatDisplayDiff` in
//! pi's `edit-diff.js`): a line diff in which each change shows its removed then its added
//! lines numbered, with up to 4 unchanged lines of context around it and ` ...` where
//! unchanged lines are skipped, so two distant edits are two hunks.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// Unchanged lines shown on each side of a change.
const CONTEXT: usize = 4;

/// One run of the line diff.
enum Part<'a> {
    Same(&'a [&'a str]),
    Removed(&'a [&'a str]),
    Added(&'a [&'a str]),
}

/// The diff of `old` to `new` and the first changed line (in the new text, from 1).
pub fn diff(old: &str, new: &str) -> (String, usize) {
    let a: Vec<&str> = old.split('\n').collect();
    let b: Vec<&str> = new.split('\n').collect();
    let mut parts: Vec<Part<'_>> = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &a, &b) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                parts.push(Part::Same(&a[old_index..old_index + len]))
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => parts.push(Part::Removed(&a[old_index..old_index + old_len])),
            DiffOp::Insert {
                new_index, new_len, ..
            } => parts.push(Part::Added(&b[new_index..new_index + new_len])),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                parts.push(Part::Removed(&a[old_index..old_index + old_len]));
                parts.push(Part::Added(&b[new_index..new_index + new_len]));
            }
        }
    }
    format(&parts, a.len().max(b.len()).to_string().len())
}

/// pi's `formatDisplayDiff` over the parts.
fn format(parts: &[Part<'_>], width: usize) -> (String, usize) {
    let mut out: Vec<String> = Vec::new();
    let (mut old_line, mut new_line) = (1usize, 1usize);
    let mut first_changed: Option<usize> = None;
    let mut last_was_change = false;
    let skip = format!(" {:>width$} ...", "");
    let context =
        |out: &mut Vec<String>, lines: &[&str], old_line: &mut usize, new_line: &mut usize| {
            for line in lines {
                out.push(format!(" {:>width$} {line}", *old_line));
                *old_line += 1;
                *new_line += 1;
            }
        };
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Removed(lines) => {
                first_changed.get_or_insert(new_line);
                for line in *lines {
                    out.push(format!("-{old_line:>width$} {line}"));
                    old_line += 1;
                }
                last_was_change = true;
            }
            Part::Added(lines) => {
                first_changed.get_or_insert(new_line);
                for line in *lines {
                    out.push(format!("+{new_line:>width$} {line}"));
                    new_line += 1;
                }
                last_was_change = true;
            }
            Part::Same(lines) => {
                let next_is_change =
                    matches!(parts.get(i + 1), Some(Part::Removed(_) | Part::Added(_)));
                let n = lines.len();
                match (last_was_change, next_is_change) {
                    (true, true) if n <= CONTEXT * 2 => {
                        context(&mut out, lines, &mut old_line, &mut new_line);
                    }
                    (true, true) => {
                        context(&mut out, &lines[..CONTEXT], &mut old_line, &mut new_line);
                        out.push(skip.clone());
                        old_line += n - 2 * CONTEXT;
                        new_line += n - 2 * CONTEXT;
                        context(
                            &mut out,
                            &lines[n - CONTEXT..],
                            &mut old_line,
                            &mut new_line,
                        );
                    }
                    (true, false) => {
                        let shown = n.min(CONTEXT);
                        context(&mut out, &lines[..shown], &mut old_line, &mut new_line);
                        if n > shown {
                            out.push(skip.clone());
                            old_line += n - shown;
                            new_line += n - shown;
                        }
                    }
                    (false, true) => {
                        let skipped = n.saturating_sub(CONTEXT);
                        if skipped > 0 {
                            out.push(skip.clone());
                            old_line += skipped;
                            new_line += skipped;
                        }
                        context(&mut out, &lines[skipped..], &mut old_line, &mut new_line);
                    }
                    (false, false) => {
                        old_line += n;
                        new_line += n;
                    }
                }
                last_was_change = false;
            }
        }
    }
    (out.join("\n"), first_changed.unwrap_or(1))
}
