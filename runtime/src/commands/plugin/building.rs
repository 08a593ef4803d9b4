//! `pith plugin build [dir]`: builds a plugin project with its language's tool and puts the
//! component where its manifest says (`component`, or `<id>.wasm` beside `pith.toml`): cargo
//! for Rust, componentize-py for Python, componentize-js for JavaScript. A missing tool is named
//! with the package to install. The binary then checks the result (`pith plugin check`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Lang, PluginError};
use crate::plugin_host::manifest::Manifest;

/// The project's language, from its files.
fn language(dir: &Path) -> Result<Lang, PluginError> {
    if dir.join("Cargo.toml").is_file() {
        Ok(Lang::Rust)
    } else if dir.join("app.py").is_file() {
        Ok(Lang::Python)
    } else if dir.join("package.json").is_file() {
        Ok(Lang::Js)
    } else {
        Err(PluginError(format!(
            "{} holds no Cargo.toml, app.py or package.json: `pith plugin build` builds Rust, \
             Python and JavaScript projects (`pith plugin new` makes one)",
            dir.display()
        )))
    }
}

/// Runs `command` with its output on stderr; an error naming `what` when it fails.
fn run(mut command: Command, what: &str, fix: &str) -> Result<(), PluginError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::inherit())
        .status()
        .map_err(|err| PluginError(format!("Cannot run {program}: {err} ({fix})")))?;
    if status.success() {
        Ok(())
    } else {
        Err(PluginError(format!(
            "{what} failed ({status}): see its output above; {fix}"
        )))
    }
}

/// The first of `candidates` that exists, else `name` if it is on `PATH`.
fn find_tool(candidates: &[PathBuf], name: &str) -> Option<PathBuf> {
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join(name))
                    .find(|path| path.is_file())
            })
        })
}

/// Builds the project in `dir`; returns the component's path.
pub fn build(dir: &Path) -> Result<PathBuf, PluginError> {
    // The tools run in `dir`: every path handed to them is absolute.
    let dir = &std::path::absolute(dir)
        .map_err(|err| PluginError(format!("{}: {err}", dir.display())))?;
    let manifest_path = dir.join("pith.toml");
    let text = std::fs::read_to_string(&manifest_path).map_err(|err| {
        PluginError(format!(
            "Cannot read {}: {err} (a plugin project has its manifest there; `pith plugin new` \
             makes one)",
            manifest_path.display()
        ))
    })?;
    let manifest = Manifest::parse(&text)
        .map_err(|err| PluginError(format!("{}: {err}", manifest_path.display())))?;
    // A project's manifest names its component; without `component`, `<id>.wasm` beside it.
    let component = match &manifest.component {
        Some(_) => manifest.component_path(&manifest_path),
        None => dir.join(format!("{}.wasm", manifest.id)),
    };
    match language(dir)? {
        Lang::Rust => build_rust(dir, &component)?,
        Lang::Python => {
            super::wit::write(&dir.join("wit"))?;
            let tool = std::env::var_os("PITH_COMPONENTIZE_PY")
                .map(PathBuf::from)
                .or_else(|| find_tool(&[], "componentize-py"))
                .ok_or_else(|| {
                    PluginError(
                        "componentize-py is not installed: `pip install componentize-py==0.25.1` \
                         (or set PITH_COMPONENTIZE_PY to it)"
                            .into(),
                    )
                })?;
            let mut command = Command::new(tool);
            command
                .current_dir(dir)
                .args([
                    "-d",
                    "wit",
                    "-w",
                    "tool-plugin",
                    "componentize",
                    "app",
                    "-o",
                ])
                .arg(&component);
            run(
                command,
                "componentize-py",
                "app.py must implement the tool-plugin world",
            )?;
        }
        Lang::Js => {
            super::wit::write(&dir.join("wit"))?;
            let local = dir.join("node_modules/.bin/componentize-js");
            let tool = find_tool(&[local], "componentize-js").ok_or_else(|| {
                PluginError(format!(
                    "componentize-js is not installed: run `npm install` in {} (its package.json \
                     pins @bytecodealliance/componentize-js 0.23.0)",
                    dir.display()
                ))
            })?;
            let source = js_source(dir, &manifest.id)?;
            let mut command = Command::new(tool);
            command
                .current_dir(dir)
                .arg(&source)
                .args(["--wit", "wit", "--world-name", "tool-plugin-wasi-fs"])
                // pith offers its own HTTP import, not wasi:http.
                .args(["--disable", "http", "fetch-event", "--out"])
                .arg(&component);
            run(
                command,
                "componentize-js",
                "the script must export `tool` (the tool-plugin-wasi-fs world)",
            )?;
        }
    }
    if !component.is_file() {
        return Err(PluginError(format!(
            "the build left no component at {}",
            component.display()
        )));
    }
    Ok(component)
}

/// The JavaScript entry: `<id>.js`, else the only `.js` file.
fn js_source(dir: &Path, id: &str) -> Result<PathBuf, PluginError> {
    let named = dir.join(format!("{id}.js"));
    if named.is_file() {
        return Ok(named);
    }
    let scripts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|err| PluginError(format!("Cannot list {}: {err}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    match scripts.as_slice() {
        [only] => Ok(only.clone()),
        _ => Err(PluginError(format!(
            "{} needs its script as {id}.js (or a single .js file)",
            dir.display()
        ))),
    }
}

/// `cargo build --release --target wasm32-wasip2`, then the crate's `.wasm` copied to
/// `component`.
fn build_rust(dir: &Path, component: &Path) -> Result<(), PluginError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // Cargo's messages name the artifact, wherever the target directory is configured.
    let output = Command::new(cargo)
        .current_dir(dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .arg("--message-format=json-render-diagnostics")
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| {
            PluginError(format!(
                "Cannot run cargo: {err} (install Rust with rustup)"
            ))
        })?;
    if !output.status.success() {
        return Err(PluginError(format!(
            "cargo build failed ({}): see its output above; `rustup target add wasm32-wasip2` \
             if the target is missing, and pith-sdk must be reachable (from crates.io, or a \
             checkout with `pith plugin new --sdk <path>`)",
            output.status
        )));
    }
    let built = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .flat_map(|m| {
            m["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(PathBuf::from))
                .collect::<Vec<_>>()
        })
        .rfind(|f| f.extension().is_some_and(|e| e == "wasm"))
        .ok_or_else(|| {
            PluginError(
                "cargo built no .wasm: the crate needs `crate-type = [\"cdylib\"]` under [lib]"
                    .into(),
            )
        })?;
    if let Some(parent) = component.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|err| PluginError(format!("Cannot create {}: {err}", parent.display())))?;
    }
    std::fs::copy(&built, component).map_err(|err| {
        PluginError(format!(
            "Cannot copy {} to {}: {err}",
            built.display(),
            component.display()
        ))
    })?;
    Ok(())
}
