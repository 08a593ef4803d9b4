//! The `pith-sdk` crate as pith carries it: every file of `sdk/` that `cargo package` ships
//! (`Cargo.toml`, `src/`, `wit/`), with the manifest made standalone as `cargo package`
//! makes it (each `workspace = true` replaced by the workspace's value), written to
//! `$OUT_DIR/sdk_package.rs` for `pith plugin new` to unpack. A plugin project then builds
//! against the SDK of the pith that made it, with no registry and no checkout of pith.

use std::path::{Path, PathBuf};

/// Writes `$OUT_DIR/sdk_package.rs` for the SDK at `root/sdk`.
pub fn write(root: &Path, out_dir: &Path) {
    let sdk = root.join("sdk");
    let manifest = standalone_manifest(
        &std::fs::read_to_string(sdk.join("Cargo.toml")).expect("read sdk/Cargo.toml"),
        &std::fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml"),
    );
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["src", "wit"] {
        collect(&sdk.join(dir), &mut files);
    }
    files.sort();
    let mut entries = format!("    (\"Cargo.toml\", {manifest:?}.as_bytes()),\n");
    for file in &files {
        let relative = file
            .strip_prefix(&sdk)
            .expect("under sdk/")
            .to_string_lossy()
            .replace('\\', "/");
        entries.push_str(&format!(
            "    ({relative:?}, include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    let version = package_version(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap());
    let generated = format!(
        "/// The version of the `pith-sdk` crate pith carries.\n\
         pub const SDK_VERSION: &str = {version:?};\n\
         /// The files of the `pith-sdk` crate pith carries (path, contents), as `cargo package`\n\
         /// ships them.\n\
         pub static SDK_FILES: &[(&str, &[u8])] = &[\n{entries}];\n"
    );
    std::fs::write(out_dir.join("sdk_package.rs"), generated).expect("write sdk_package.rs");
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// The workspace's `[workspace.package] version`.
fn package_version(workspace: &str) -> String {
    let workspace: toml::Table = workspace.parse().expect("Cargo.toml is TOML");
    workspace["workspace"]["package"]["version"]
        .as_str()
        .expect("[workspace.package] version")
        .to_string()
}

/// The SDK's manifest with the workspace's values in place of `workspace = true`, as
/// `cargo package` writes it.
fn standalone_manifest(sdk: &str, workspace: &str) -> String {
    let mut manifest: toml::Table = sdk.parse().expect("sdk/Cargo.toml is TOML");
    let workspace: toml::Table = workspace.parse().expect("Cargo.toml is TOML");
    let inherited = &workspace["workspace"];
    let inherits = |value: &toml::Value| {
        value
            .as_table()
            .and_then(|t| t.get("workspace"))
            .and_then(toml::Value::as_bool)
            == Some(true)
    };
    if let Some(package) = manifest
        .get_mut("package")
        .and_then(toml::Value::as_table_mut)
    {
        for (key, value) in package.iter_mut() {
            if inherits(value) {
                *value = inherited["package"][key.as_str()].clone();
            }
        }
    }
    if let Some(dependencies) = manifest
        .get_mut("dependencies")
        .and_then(toml::Value::as_table_mut)
    {
        for (name, value) in dependencies.iter_mut() {
            if !inherits(value) {
                continue;
            }
            let mut resolved = match &inherited["dependencies"][name.as_str()] {
                toml::Value::String(version) => {
                    let mut table = toml::Table::new();
                    table.insert("version".into(), toml::Value::String(version.clone()));
                    table
                }
                other => other.as_table().cloned().expect("a dependency table"),
            };
            // The member's own keys (features, optional) are added to the workspace's.
            for (key, extra) in value.as_table().into_iter().flatten() {
                if key == "workspace" {
                    continue;
                }
                match (resolved.get_mut(key), extra) {
                    (Some(toml::Value::Array(features)), toml::Value::Array(more)) => {
                        features.extend(more.iter().cloned())
                    }
                    _ => {
                        resolved.insert(key.clone(), extra.clone());
                    }
                }
            }
            *value = toml::Value::Table(resolved);
        }
    }
    if manifest.get("lints").is_some_and(inherits) {
        manifest.insert("lints".into(), inherited["lints"].clone());
    }
    format!(
        "# The pith-sdk crate as pith carries it (its workspace's values filled in, as\n\
         # `cargo package` writes them).\n{}",
        toml::to_string(&manifest).expect("a manifest serializes")
    )
}
