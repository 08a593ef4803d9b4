//! Walking a directory tree as `fd` and `rg` do: dotfiles included, `.git` skipped, and the
//! `.gitignore` files of the tree respected; with a glob matcher (`*`, `**`, `?`, `[...]`,
//! `{a,b}`) for patterns.

use std::path::{Path, PathBuf};

/// True when `text` matches the glob `pattern`. `*` and `?` do not cross `/`; `**` does.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    expand_braces(pattern).iter().any(|p| {
        let (p, t): (Vec<char>, Vec<char>) = (p.chars().collect(), text.chars().collect());
        matches(&p, &t)
    })
}

fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let Some(close) = pattern[open..].find('}').map(|i| open + i) else {
        return vec![pattern.to_string()];
    };
    let (head, body, tail) = (
        &pattern[..open],
        &pattern[open + 1..close],
        &pattern[close + 1..],
    );
    body.split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{alt}{tail}")))
        .collect()
}

fn matches(p: &[char], t: &[char]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some('*') if p.get(1) == Some(&'*') => {
            // `**/` also matches nothing.
            let rest = if p.get(2) == Some(&'/') {
                &p[3..]
            } else {
                &p[2..]
            };
            (0..=t.len()).any(|i| matches(rest, &t[i..]))
                || (p.get(2) == Some(&'/') && matches(&p[2..], t))
        }
        Some('*') => (0..=t.len())
            .take_while(|i| *i == 0 || t[i - 1] != '/')
            .any(|i| matches(&p[1..], &t[i..])),
        Some('?') => t.first().is_some_and(|c| *c != '/') && matches(&p[1..], &t[1..]),
        Some('[') => match p.iter().position(|c| *c == ']') {
            Some(end) if end > 1 => {
                let Some(c) = t.first() else { return false };
                let set = &p[1..end];
                let (negate, set) = if set.first() == Some(&'!') || set.first() == Some(&'^') {
                    (true, &set[1..])
                } else {
                    (false, set)
                };
                let mut found = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        found |= (set[i]..=set[i + 2]).contains(c);
                        i += 3;
                    } else {
                        found |= set[i] == *c;
                        i += 1;
                    }
                }
                found != negate && matches(&p[end + 1..], &t[1..])
            }
            _ => t.first() == Some(&'[') && matches(&p[1..], &t[1..]),
        },
        Some(c) => t.first() == Some(c) && matches(&p[1..], &t[1..]),
    }
}

/// One `.gitignore` rule.
#[derive(Debug, Clone)]
struct Rule {
    /// The directory of the `.gitignore`, relative to the walk's root (`""` for the root).
    base: String,
    pattern: String,
    negate: bool,
    dir_only: bool,
    anchored: bool,
}

impl Rule {
    fn parse(line: &str, base: &str) -> Option<Rule> {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (negate, line) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line.strip_prefix('\\').unwrap_or(line)),
        };
        let (dir_only, line) = match line.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let anchored = line.contains('/');
        let pattern = line.trim_start_matches('/').to_string();
        (!pattern.is_empty()).then(|| Rule {
            base: base.to_string(),
            pattern,
            negate,
            dir_only,
            anchored,
        })
    }

    /// Whether the rule speaks about `rel` (relative to the root), and if so whether it ignores.
    fn verdict(&self, rel: &str, is_dir: bool) -> Option<bool> {
        if self.dir_only && !is_dir {
            return None;
        }
        let local = if self.base.is_empty() {
            rel
        } else {
            rel.strip_prefix(&self.base)?.strip_prefix('/')?
        };
        let hit = if self.anchored {
            glob_match(&self.pattern, local) || glob_match(&format!("{}/**", self.pattern), local)
        } else {
            let name = local.rsplit('/').next().unwrap_or(local);
            glob_match(&self.pattern, name)
        };
        hit.then_some(!self.negate)
    }
}

/// An entry found by [`walk`].
#[derive(Debug, Clone)]
pub struct Entry {
    /// The absolute path.
    pub path: PathBuf,
    /// The path relative to the root, with `/` separators.
    pub relative: String,
    /// True for directories.
    pub is_dir: bool,
}

/// Walks `root` depth-first in name order, calling `visit` for every entry not ignored; stops
/// when `visit` returns false.
pub fn walk(root: &Path, mut visit: impl FnMut(&Entry) -> bool) {
    let mut rules: Vec<Rule> = Vec::new();
    walk_dir(root, "", &mut rules, &mut visit);
}

fn walk_dir(
    dir: &Path,
    rel: &str,
    rules: &mut Vec<Rule>,
    visit: &mut impl FnMut(&Entry) -> bool,
) -> bool {
    let before = rules.len();
    let Some(listing) = list_dir(dir) else {
        return true;
    };
    // Only the ignore files the listing holds are read (no failed open per directory).
    for ignore_file in [".gitignore", ".ignore", ".fdignore"] {
        if listing.iter().any(|(name, _)| name == ignore_file)
            && let Ok(text) = std::fs::read_to_string(dir.join(ignore_file))
        {
            rules.extend(text.lines().filter_map(|line| Rule::parse(line, rel)));
        }
    }
    let mut entries: Vec<(String, PathBuf, Option<bool>)> = listing
        .into_iter()
        .map(|(name, known)| {
            let path = dir.join(&name);
            (name, path, known)
        })
        .collect();
    entries.sort();
    for (name, path, known) in entries {
        if name == ".git" {
            continue;
        }
        let is_dir = known.unwrap_or_else(|| {
            std::fs::metadata(&path)
                .map(|m| m.is_dir())
                .unwrap_or(false)
        });
        let relative = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let ignored = rules
            .iter()
            .rev()
            .find_map(|rule| rule.verdict(&relative, is_dir))
            .unwrap_or(false);
        if ignored {
            continue;
        }
        let entry = Entry {
            path: path.clone(),
            relative: relative.clone(),
            is_dir,
        };
        if !visit(&entry) {
            rules.truncate(before);
            return false;
        }
        if is_dir && !walk_dir(&path, &relative, rules, visit) {
            rules.truncate(before);
            return false;
        }
    }
    rules.truncate(before);
    true
}

/// The names in `dir`, each with whether it is a directory when the listing says so without
/// following a link (`None` for symlinks and unknown types); `None` when `dir` cannot be listed.
#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn list_dir(dir: &Path) -> Option<Vec<(String, Option<bool>)>> {
    let entries = std::fs::read_dir(dir).ok()?;
    Some(
        entries
            .filter_map(|e| e.ok())
            .map(|e| {
                let known = e
                    .file_type()
                    .ok()
                    .filter(|t| !t.is_symlink())
                    .map(|t| t.is_dir());
                (e.file_name().to_string_lossy().into_owned(), known)
            })
            .collect(),
    )
}

/// The names in `dir`, listed with `wasi:filesystem` directly: the standard library's listing
/// asks for each entry's inode (one `stat` per entry), which a walk does not need.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn list_dir(dir: &Path) -> Option<Vec<(String, Option<bool>)>> {
    use wasip2::filesystem::types::{DescriptorFlags, DescriptorType, OpenFlags, PathFlags};
    let listed = wasi_dir::with_preopen(dir, |preopen, relative| {
        let opened;
        let handle = if relative.is_empty() {
            preopen
        } else {
            opened = preopen
                .open_at(
                    PathFlags::SYMLINK_FOLLOW,
                    relative,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                )
                .ok()?;
            &opened
        };
        let stream = handle.read_directory().ok()?;
        let mut names = Vec::new();
        while let Ok(Some(entry)) = stream.read_directory_entry() {
            let known = match entry.type_ {
                DescriptorType::Directory => Some(true),
                DescriptorType::SymbolicLink | DescriptorType::Unknown => None,
                _ => Some(false),
            };
            names.push((entry.name, known));
        }
        Some(names)
    });
    match listed {
        Some(names) => names,
        None => {
            // Not under a preopened directory as the guest names it: the standard library's way.
            let entries = std::fs::read_dir(dir).ok()?;
            Some(
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| (e.file_name().to_string_lossy().into_owned(), None))
                    .collect(),
            )
        }
    }
}

/// The preopened directories, fetched once per instance.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi_dir {
    use std::path::{Component, Path};

    use wasip2::filesystem::types::Descriptor;

    thread_local! {
        static PREOPENS: Vec<(Descriptor, String)> = wasip2::filesystem::preopens::get_directories();
    }

    /// Calls `f` with the preopen holding the absolute, normalised `dir` (the longest guest
    /// path that is a prefix of it) and the rest of the path; `None` when none holds it or the
    /// path has `.`/`..` parts (left to the standard library).
    pub fn with_preopen<R>(dir: &Path, f: impl FnOnce(&Descriptor, &str) -> R) -> Option<R> {
        if dir
            .components()
            .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
        {
            return None;
        }
        let text = dir.to_str()?;
        PREOPENS.with(|preopens| {
            let (descriptor, rest) = preopens
                .iter()
                .filter_map(|(descriptor, guest)| {
                    let rest = text.strip_prefix(guest.trim_end_matches('/'))?;
                    let rest = if rest.is_empty() {
                        ""
                    } else {
                        rest.strip_prefix('/')?
                    };
                    Some((guest.len(), descriptor, rest))
                })
                .max_by_key(|(len, _, _)| *len)
                .map(|(_, descriptor, rest)| (descriptor, rest))?;
            Some(f(descriptor, rest.trim_end_matches('/')))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.rs", "main.rs"));
        assert!(!glob_match("*.rs", "src/main.rs"));
        assert!(glob_match("**/*.rs", "src/a/main.rs"));
        assert!(glob_match("**/*.rs", "main.rs"));
        assert!(glob_match("src/**/*.spec.ts", "src/x/y.spec.ts"));
        assert!(glob_match("*.{ts,js}", "a.js"));
        assert!(glob_match("file?.[ch]", "file1.c"));
        assert!(!glob_match("file?.[ch]", "file1.o"));
    }

    #[test]
    fn gitignore_rules() {
        let dir = tempfile_dir();
        std::fs::write(
            dir.join(".gitignore"),
            "target/\n*.log\n!keep.log\n/top.txt\n",
        )
        .unwrap();
        for file in [
            "a.rs",
            "x.log",
            "keep.log",
            "top.txt",
            "sub/top.txt",
            "target/out",
            "sub/y.log",
            ".hidden",
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".git/HEAD"), "").unwrap();
        let mut seen = Vec::new();
        walk(&dir, |e| {
            seen.push(e.relative.clone());
            true
        });
        assert_eq!(
            seen,
            [
                ".gitignore",
                ".hidden",
                "a.rs",
                "keep.log",
                "sub",
                "sub/top.txt"
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pith-sdk-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
