//! `pith plugin wit [dir]`: writes pith's WIT package (`pith:plugin@0.2.0`, over the frozen
//! `pith:plugin@0.1.0` in `deps/`) and the WASI WIT it uses (`deps/`), as this binary was built
//! with, for componentize-py, componentize-js or any other component toolchain.

use std::path::Path;

use super::PluginError;

/// The WIT files, by path under the written directory.
pub const FILES: &[(&str, &str)] = &[
    (
        "agent-events.wit",
        include_str!("../../../../wit/agent-events.wit"),
    ),
    (
        "extension.wit",
        include_str!("../../../../wit/extension.wit"),
    ),
    ("codemode.wit", include_str!("../../../../wit/codemode.wit")),
    ("entries.wit", include_str!("../../../../wit/entries.wit")),
    ("session.wit", include_str!("../../../../wit/session.wit")),
    ("worlds.wit", include_str!("../../../../wit/worlds.wit")),
    ("deps/io.wit", include_str!("../../../../wit/deps/io.wit")),
    (
        "deps/clocks.wit",
        include_str!("../../../../wit/deps/clocks.wit"),
    ),
    (
        "deps/filesystem.wit",
        include_str!("../../../../wit/deps/filesystem.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/types.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/types.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/host.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/host.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/tool.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/tool.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/provider.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/provider.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/extension.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/extension.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/completions.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/completions.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/search.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/search.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/skill.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/skill.wit"),
    ),
    (
        "deps/pith-plugin-0.1.0/worlds.wit",
        include_str!("../../../../wit/deps/pith-plugin-0.1.0/worlds.wit"),
    ),
];

/// Writes the files into `dir` (created when missing; files there are replaced).
pub fn write(dir: &Path) -> Result<(), PluginError> {
    for (name, text) in FILES {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| PluginError(format!("Cannot create {}: {err}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|err| PluginError(format!("Cannot write {}: {err}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of `wit/` is written, and nothing else.
    #[test]
    fn the_list_is_the_wit_directory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
        let mut on_disk = Vec::new();
        for dir in ["", "deps", "deps/pith-plugin-0.1.0"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "wit") {
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    on_disk.push(if dir.is_empty() {
                        name
                    } else {
                        format!("{dir}/{name}")
                    });
                }
            }
        }
        on_disk.sort();
        let mut listed: Vec<String> = FILES.iter().map(|(name, _)| name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }
}
