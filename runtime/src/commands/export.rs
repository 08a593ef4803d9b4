//! `pith export <session-file> [out.html]` (and pi's `--export`): the viewer page of a session
//! file, written by pith or by pi, without starting an agent.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::agent::session::file::SessionFile;
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
    let messages: Vec<_> = store
        .context()
        .messages
        .into_iter()
        .map(|(_, message)| message)
        .collect();
    let html = export::render(&store, store.name().as_deref(), &messages);
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
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
    }
    std::fs::write(&target, html)
        .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
    Ok((target, skipped))
}
