//! The readable world minus the deny list, as the roots a sandbox grants: `/` itself when
//! nothing is denied; otherwise, along the way down to each denied path, every other entry of
//! each directory on the way (WASI preopens directories only, so there the files beside a
//! denied path's ancestors stay out of reach; Landlock takes files too).

use std::path::{Path, PathBuf};

/// The roots that cover everything under `/` but the `denied` paths: directories, and with
/// `files` the files and symlinks beside the ancestors of a denied path too. A symlink whose
/// target is denied, or holds a denied path, is left out.
pub fn readable_roots(denied: &[PathBuf], files: bool) -> Vec<PathBuf> {
    roots_under(Path::new("/"), denied, files)
}

/// How long a computed list of roots is used before it is made again (new entries beside an
/// excluded path's ancestors appear after at most this long).
const FRESH_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// [`readable_roots`] for `denied` (the tools' WASI views open them at every call, the shell's
/// ruleset at every command), made again when older than [`FRESH_FOR`].
pub fn cached_roots(denied: &[PathBuf], files: bool) -> std::sync::Arc<Vec<PathBuf>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::Instant;
    type Key = (Vec<PathBuf>, bool);
    type Cached = Mutex<HashMap<Key, (Instant, Arc<Vec<PathBuf>>)>>;
    static CACHE: OnceLock<Cached> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (denied.to_vec(), files);
    match cache.get(&key) {
        Some((made, roots)) if made.elapsed() < FRESH_FOR => roots.clone(),
        _ => {
            let roots = Arc::new(readable_roots(denied, files));
            if cache.len() > 16 {
                cache.clear();
            }
            cache.insert(key, (Instant::now(), roots.clone()));
            roots
        }
    }
}

/// The roots that cover `base` but the `excluded` paths (as [`readable_roots`] does for `/`).
pub fn roots_under(base: &Path, excluded: &[PathBuf], files: bool) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    expand(base, excluded, files, &mut roots);
    roots
}

/// The directories that hold a denied path (every ancestor of one, but not a denied path
/// itself): the fallback's Landlock lets the shell list them, names only.
pub fn holders(denied: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = denied
        .iter()
        .flat_map(|d| d.ancestors().skip(1))
        .filter(|dir| !is_denied(dir, denied) && dir.is_dir())
        .map(Path::to_path_buf)
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// True when `path` is a symlink whose target is, or holds, one of `denied` (or cannot be
/// resolved): such a root is not opened.
pub fn leads_into(path: &Path, denied: &[PathBuf]) -> bool {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return false;
    }
    match path.canonicalize() {
        Ok(target) => is_denied(&target, denied) || holds_denied(&target, denied),
        Err(_) => true,
    }
}

fn is_denied(path: &Path, denied: &[PathBuf]) -> bool {
    denied.iter().any(|d| path.starts_with(d))
}

fn holds_denied(dir: &Path, denied: &[PathBuf]) -> bool {
    denied.iter().any(|d| d.starts_with(dir))
}

fn expand(dir: &Path, denied: &[PathBuf], files: bool, roots: &mut Vec<PathBuf>) {
    if is_denied(dir, denied) {
        return;
    }
    if !holds_denied(dir, denied) {
        roots.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            expand(&path, denied, files, roots);
        } else if kind.is_symlink() {
            // Follow it only where it cannot lead into what is denied.
            let Ok(target) = path.canonicalize() else {
                continue;
            };
            let safe = !is_denied(&target, denied) && !holds_denied(&target, denied);
            if safe && !is_denied(&path, denied) && (files || target.is_dir()) {
                roots.push(path);
            }
        } else if files && !is_denied(&path, denied) {
            roots.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_but_the_denied_paths() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        for dir in [".ssh", "src/app", ".config/gcloud", ".config/other"] {
            std::fs::create_dir_all(h.join(dir)).unwrap();
        }
        std::fs::write(h.join(".bashrc"), "").unwrap();
        std::fs::write(h.join(".ssh/id_rsa"), "").unwrap();
        std::os::unix::fs::symlink(h.join(".ssh"), h.join("keys")).unwrap();
        std::os::unix::fs::symlink(h.join("src"), h.join("code")).unwrap();
        let denied = vec![h.join(".ssh"), h.join(".config/gcloud")];
        let dirs = readable_roots(&denied, false);
        let under_home: Vec<&Path> = dirs.iter().filter_map(|p| p.strip_prefix(h).ok()).collect();
        let mut names: Vec<String> = under_home.iter().map(|p| p.display().to_string()).collect();
        names.sort();
        assert_eq!(names, [".config/other", "code", "src"]);
        assert!(dirs.contains(&PathBuf::from("/usr")) || !Path::new("/usr").exists());
        let with_files = readable_roots(&denied, true);
        assert!(with_files.contains(&h.join(".bashrc")));
        assert!(!with_files.iter().any(|p| p.starts_with(h.join(".ssh"))));
        assert!(
            !with_files.contains(&h.join("keys")),
            "a link into a denied path"
        );
        assert_eq!(readable_roots(&[], false), [PathBuf::from("/")]);
        // A link repointed after the list was made is caught when a view is opened.
        assert!(leads_into(&h.join("keys"), &denied));
        assert!(!leads_into(&h.join("code"), &denied));
        assert!(!leads_into(&h.join("src"), &denied));
    }
}
