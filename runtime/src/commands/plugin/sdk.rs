//! The `pith-sdk` crate this pith carries (see `build/sdk_package.rs`), unpacked once into the
//! agent directory for `pith plugin new`: a Rust plugin project depends on it by path, so it
//! builds on a machine that has only pith and a Rust toolchain, against the SDK of the pith
//! that loads it.

use std::path::{Path, PathBuf};

use super::PluginError;

include!(concat!(env!("OUT_DIR"), "/sdk_package.rs"));

/// The directory the carried SDK is unpacked to: `<agent-dir>/sdk/pith-sdk-<version>-<hash>`
/// (the hash of its files, so a pith with other SDK files never reuses a stale copy).
pub fn directory(agent_dir: &Path) -> PathBuf {
    let mut hasher = blake3::Hasher::new();
    for (path, contents) in SDK_FILES {
        hasher.update(path.as_bytes());
        hasher.update(&(contents.len() as u64).to_le_bytes());
        hasher.update(contents);
    }
    let hash = hasher.finalize().to_hex();
    agent_dir
        .join("sdk")
        .join(format!("pith-sdk-{SDK_VERSION}-{}", &hash[..12]))
}

/// Unpacks the carried SDK under `agent_dir` unless it is there already; returns its
/// directory. The files are written to a scratch directory first and moved in whole, so a
/// crash or a second pith never leaves a half-written SDK behind.
pub fn unpack(agent_dir: &Path) -> Result<PathBuf, PluginError> {
    let target = directory(agent_dir);
    if target.join("Cargo.toml").is_file() {
        return Ok(target);
    }
    let parent = target.parent().unwrap_or(agent_dir);
    let failed = |err: std::io::Error| {
        PluginError(format!(
            "cannot unpack pith-sdk into {}: {err} (or give a checkout with --sdk <path>)",
            parent.display()
        ))
    };
    std::fs::create_dir_all(parent).map_err(failed)?;
    let scratch = parent.join(format!(".unpacking-{}", uuid::Uuid::new_v4().simple()));
    for (path, contents) in SDK_FILES {
        let file = scratch.join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        std::fs::write(&file, contents).map_err(failed)?;
    }
    match std::fs::rename(&scratch, &target) {
        Ok(()) => Ok(target),
        // Another pith unpacked the same files meanwhile.
        Err(_) if target.join("Cargo.toml").is_file() => {
            let _ = std::fs::remove_dir_all(&scratch);
            Ok(target)
        }
        Err(err) => {
            let _ = std::fs::remove_dir_all(&scratch);
            Err(failed(err))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_carried_sdk_is_the_sdk_with_a_standalone_manifest() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
        for (path, contents) in SDK_FILES {
            if *path == "Cargo.toml" {
                continue;
            }
            assert_eq!(
                std::fs::read(root.join(path)).unwrap(),
                *contents,
                "{path} differs from sdk/{path}"
            );
        }
        let manifest = SDK_FILES
            .iter()
            .find(|(path, _)| *path == "Cargo.toml")
            .map(|(_, contents)| String::from_utf8_lossy(contents).into_owned())
            .unwrap();
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        let table: toml::Table = manifest.parse().unwrap();
        assert_eq!(table["package"]["name"].as_str(), Some("pith-sdk"));
        assert_eq!(table["package"]["version"].as_str(), Some(SDK_VERSION));
        assert!(table["dependencies"]["wit-bindgen"]["version"].is_str());
    }

    #[test]
    fn unpacks_once() {
        let agent = tempfile::tempdir().unwrap();
        let first = unpack(agent.path()).unwrap();
        assert!(first.join("src/lib.rs").is_file());
        assert!(first.join("wit/worlds.wit").is_file());
        assert!(first.join("wit/deps/pith-plugin-0.1.0/tool.wit").is_file());
        std::fs::write(first.join("marker"), "kept").unwrap();
        let second = unpack(agent.path()).unwrap();
        assert_eq!(first, second);
        assert!(second.join("marker").is_file());
    }
}
