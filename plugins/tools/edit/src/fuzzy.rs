//! Writing fuzzy matches back as pi does (its line spans): the edits matched on the loosened
//! text (quotes, dashes and spaces made plain, line ends trimmed) replace the lines they touch,
//! which are written loosened; every other line keeps its bytes.

/// `original` with `ranges` (byte ranges in `loose`, the loosened `original`, and the index of
/// the edit replacing each) replaced, the lines they do not touch copied from `original`.
/// `loose` has the same lines as `original` (loosening is line by line).
pub fn apply(
    original: &str,
    loose: &str,
    ranges: &[(usize, usize, usize)],
    edits: &[(String, String)],
) -> String {
    let lines: Vec<&str> = original.split('\n').collect();
    let mut starts = vec![0usize];
    starts.extend(loose.match_indices('\n').map(|(i, _)| i + 1));
    let line_of = |pos: usize| starts.partition_point(|&s| s <= pos) - 1;
    // Where a line's text ends in `loose` (before its newline).
    let line_end = |line: usize| starts.get(line + 1).map_or(loose.len(), |next| next - 1);
    let mut out = String::with_capacity(original.len());
    let mut next_line = 0;
    let mut index = 0;
    while index < ranges.len() {
        // The ranges sharing lines are written as one block.
        let (start, mut end, _) = ranges[index];
        let first = line_of(start);
        let mut group = vec![ranges[index]];
        index += 1;
        while index < ranges.len() && line_of(ranges[index].0) <= line_of(end.max(start + 1) - 1) {
            end = ranges[index].1;
            group.push(ranges[index]);
            index += 1;
        }
        let last = line_of(end.max(start + 1) - 1);
        for line in &lines[next_line..first] {
            out.push_str(line);
            out.push('\n');
        }
        let block_end = line_end(last).max(end);
        let mut at = starts[first];
        for (from, to, edit) in group {
            out.push_str(&loose[at..from]);
            out.push_str(&edits[edit].1);
            at = to;
        }
        out.push_str(&loose[at..block_end]);
        next_line = last + 1;
        let took_newline = block_end > line_end(last);
        if !took_newline && next_line < lines.len() {
            out.push('\n');
        }
    }
    for (i, line) in lines.iter().enumerate().skip(next_line) {
        out.push_str(line);
        if i + 1 < lines.len() {
            out.push('\n');
        }
    }
    out
}
