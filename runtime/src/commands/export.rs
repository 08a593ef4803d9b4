//! `pith export <session-file> [out.html]` (and pi's `--export`): the viewer page of a session
//! file, written by pith or by pi, without starting an agent.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::agent::session::file::SessionFile;
use crate::agent::session::file::held::HeldMessages;
use crate::export;

/// Writes the page of `session` to `output` (`pith-session-<stem>.html` in the current
/// directory when `None`) and prints where; the exit code says whether it worked.
pub fn run(session: &Path, output: Option<&Path>) -> ExitCode {
    match write(session, output) {
        Ok((target, skipped)) => {
            for problem in skipped {
                eprintln!("pith export: {problem}");
            }
            println!("Exported to {}", target.display());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("pith export: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The page's path and the damaged lines that were left out.
fn write(session: &Path, output: Option<&Path>) -> Result<(PathBuf, Vec<String>), String> {
    let (store, skipped) = SessionFile::open(session).map_err(|err| err.to_string())?;
    // The conversation as its lines: only its system records are read (for the prompt and
    // tools in force); the entries are copied into the page line by line.
    let (held, ids) = store.held_context().into_columns();
    let messages = HeldMessages::new(&held, &ids, &store);
    let target = output.map_or_else(
        || {
            let stem = session
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            PathBuf::from(format!("pith-session-{stem}.html"))
        },
        Path::to_path_buf,
    );
    export::write_file(&target, &store, store.name().as_deref(), &messages)?;
    Ok((target, skipped))
}
