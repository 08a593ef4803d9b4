//! A workspace whose git directory lives elsewhere: a linked worktree (`git worktree add`, the
//! usual home of parallel agents), whose `.git` is a file naming
//! `<repository>/.git/worktrees/<name>`, or a submodule or `--separate-git-dir` checkout. git
//! writes its index, its refs and its objects there, so `git add` and `git commit` need them
//! writable; the repository's `hooks/` and `config` run code on the next git command anyone
//! runs, so they stay refused.

use std::path::{Path, PathBuf};

/// What the sandbox opens and keeps shut for a workspace's linked git directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkedGit {
    /// Directories git writes for this checkout: a worktree's own directory, and the shared
    /// `objects/`, `refs/` and `logs/`.
    pub writable: Vec<PathBuf>,
    /// What stays unwritable: the repository's `hooks/` and `config`.
    pub refused: Vec<PathBuf>,
}

/// The linked git directory of the checkout that holds `workspace`, if its `.git` is a file;
/// empty otherwise (a `.git` directory inside the workspace is written as the workspace is).
pub fn linked_git(workspace: &Path) -> LinkedGit {
    let Some((checkout, pointer)) = workspace
        .ancestors()
        .map(|dir| (dir, dir.join(".git")))
        .find(|(_, git)| git.exists())
    else {
        return LinkedGit::default();
    };
    if !pointer.is_file() {
        return LinkedGit::default();
    }
    let Some(git_dir) = std::fs::read_to_string(&pointer).ok().and_then(|text| {
        let target = text
            .lines()
            .next()?
            .strip_prefix("gitdir:")?
            .trim()
            .to_string();
        checkout.join(target).canonicalize().ok()
    }) else {
        return LinkedGit::default();
    };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|text| git_dir.join(text.trim()).canonicalize().ok());
    let shared = |root: &Path| {
        ["objects", "refs", "logs"]
            .iter()
            .map(|sub| root.join(sub))
            .filter(|dir| dir.is_dir())
            .collect::<Vec<_>>()
    };
    let refused = |root: &Path| vec![root.join("hooks"), root.join("config")];
    match common {
        // A worktree: its own directory holds no hooks or configuration git runs (a
        // `config.worktree` there applies to this checkout, which the workspace already is).
        Some(common) => {
            let mut writable = vec![git_dir];
            writable.extend(shared(&common));
            LinkedGit {
                writable,
                refused: refused(&common),
            }
        }
        // A submodule's or a separate git directory: it holds its own hooks and configuration,
        // so only its object store, refs and logs are opened.
        None => LinkedGit {
            writable: shared(&git_dir),
            refused: refused(&git_dir),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_opens_its_directory_and_the_shared_store_only() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let common = root.join("main/.git");
        for dir in [
            "worktrees/wt/logs",
            "objects",
            "refs/heads",
            "logs",
            "hooks",
        ] {
            std::fs::create_dir_all(common.join(dir)).unwrap();
        }
        std::fs::write(common.join("worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(root.join("wt/src")).unwrap();
        std::fs::write(
            root.join("wt/.git"),
            format!("gitdir: {}\n", common.join("worktrees/wt").display()),
        )
        .unwrap();
        let linked = linked_git(&root.join("wt/src"));
        assert_eq!(
            linked.writable,
            [
                common.join("worktrees/wt"),
                common.join("objects"),
                common.join("refs"),
                common.join("logs")
            ]
        );
        assert_eq!(
            linked.refused,
            [common.join("hooks"), common.join("config")]
        );
        // A checkout with its own `.git` directory: nothing beyond the workspace.
        assert_eq!(linked_git(&root.join("main")), LinkedGit::default());
    }
}
