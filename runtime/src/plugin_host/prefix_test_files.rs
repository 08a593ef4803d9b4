//! What the tests of a prefix and of a spliced body share: items, and prefix files holding
//! them.

use std::fs::File;
use std::sync::Arc;

use crate::plugin_host::history_prefix::StoredRun;

/// A message item of `size` filler bytes, told apart by `n`.
pub(crate) fn item(n: usize, size: usize) -> String {
    format!(r#"{{"role":"user","content":"{n}{}"}}"#, "y".repeat(size))
}

/// A file holding `runs`, each after a 25-byte header (as a prefix file's records are),
/// and the stored runs.
pub(crate) fn stored(runs: &[String]) -> (tempfile::TempDir, Arc<File>, Vec<StoredRun>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.prefix");
    let mut bytes = Vec::new();
    let mut places = Vec::new();
    for run in runs {
        bytes.extend_from_slice(&[b'R'; 25]);
        places.push((bytes.len() as u64, run.len()));
        bytes.extend_from_slice(run.as_bytes());
    }
    std::fs::write(&path, &bytes).unwrap();
    let file = Arc::new(File::open(&path).unwrap());
    let runs = places
        .into_iter()
        .map(|(offset, len)| StoredRun {
            file: file.clone(),
            offset,
            len,
        })
        .collect();
    (dir, file, runs)
}
