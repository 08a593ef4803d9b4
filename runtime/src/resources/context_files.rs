//! The project's context files (`AGENTS.md`, `CLAUDE.md`), found as pi 1.5.2 finds them
//! (`loadProjectContextFiles`): the agent directory's first, then one from each directory on
//! the way from `/` down to the working directory. In each directory the first of
//! [`CANDIDATES`] that is a readable regular file is taken; a leading byte-order mark is
//! dropped and nothing else changed. As in pi, project trust does not gate them (`-nc` does),
//! and they are read again for every request, so an edit reaches the model's next answer.

use std::path::{Path, PathBuf};

/// The names looked for in each directory, the first found winning (pi's order).
pub const CANDIDATES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

/// One context file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    /// Its absolute path (as the directories were written, links not resolved).
    pub path: PathBuf,
    /// Its text, without a leading byte-order mark.
    pub content: String,
}

/// The context file of one directory, if any.
fn from_dir(dir: &Path) -> Option<ContextFile> {
    for name in CANDIDATES {
        let path = dir.join(name);
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let content = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
                return Some(ContextFile { path, content });
            }
            Err(err) => {
                tracing::warn!("could not read the context file {}: {err}", path.display());
            }
        }
    }
    None
}

/// The context files for `cwd`: the agent directory's, then the ancestors' from the root
/// down to `cwd`, each path once.
pub fn load(cwd: &Path, agent_dir: &Path) -> Vec<ContextFile> {
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut files: Vec<ContextFile> = from_dir(&absolute(agent_dir)).into_iter().collect();
    let mut ancestors: Vec<ContextFile> = absolute(cwd)
        .ancestors()
        .filter_map(from_dir)
        .filter(|file| !files.iter().any(|seen| seen.path == file.path))
        .collect();
    ancestors.reverse();
    files.extend(ancestors);
    files
}

/// The system prompt's section for `files` (empty when there are none): pi 1.5's text (a
/// `<project_instructions>` element a file; the caller frames it as `<project_context>`), or
/// with `tagged` false pi 0.73's "# Project Context" with a heading a file (and the text's
/// trailing blank lines cut).
pub fn render(files: &[ContextFile], tagged: bool) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut text = if tagged {
        String::from("Project-specific instructions and guidelines:")
    } else {
        String::from("# Project Context\n\nProject-specific instructions and guidelines:")
    };
    for file in files {
        let path = file.path.display();
        if tagged {
            text.push_str(&format!(
                "\n\n<project_instructions path=\"{path}\">\n{}\n</project_instructions>",
                file.content
            ));
        } else {
            text.push_str(&format!("\n\n## {path}\n\n{}", file.content.trim_end()));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_a_directory_root_first_agent_dir_before_all() {
        let root = tempfile::tempdir().unwrap();
        let agent = root.path().join("agent");
        let deep = root.path().join("a/b");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(agent.join("AGENTS.md"), "global").unwrap();
        std::fs::write(root.path().join("a/CLAUDE.md"), "\u{feff}claude a").unwrap();
        std::fs::write(deep.join("AGENTS.md"), "agents b").unwrap();
        std::fs::write(deep.join("CLAUDE.md"), "not this one").unwrap();
        // A directory by a candidate's name is passed over.
        std::fs::create_dir_all(root.path().join("a/AGENTS.md")).unwrap();
        let files = load(&deep, &agent);
        let texts: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(texts, ["global", "claude a", "agents b"]);
        assert_eq!(files[2].path, deep.join("AGENTS.md"));
        // The agent directory inside the working directory's path is listed once.
        assert_eq!(load(&agent, &agent).len(), 1);
    }

    #[test]
    fn rendered_as_pi_1_5_and_as_pi_0_73() {
        let files = [ContextFile {
            path: "/p/AGENTS.md".into(),
            content: "rules\n".into(),
        }];
        assert_eq!(
            render(&files, true),
            "Project-specific instructions and guidelines:\n\n<project_instructions path=\"/p/AGENTS.md\">\nrules\n\n</project_instructions>"
        );
        assert_eq!(
            render(&files, false),
            "# Project Context\n\nProject-specific instructions and guidelines:\n\n## /p/AGENTS.md\n\nrules"
        );
        assert_eq!(render(&[], true), "");
    }
}
