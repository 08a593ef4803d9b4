//! `pith plugin new <name> --kind <kind> [--lang rust|python|js]`: a project that builds and
//! loads unchanged (a manifest asking for what it needs, the source, a README saying how to
//! build and try it).

use std::path::{Path, PathBuf};

use super::{Lang, PluginError};
use crate::plugin_host::manifest::Kind;

/// What to create.
pub struct NewPlugin<'a> {
    /// The plugin's id (the directory's name too).
    pub name: &'a str,
    /// Its kind.
    pub kind: Kind,
    /// Its language.
    pub lang: Lang,
    /// The `pith-sdk` to depend on (Rust only): a local checkout, `crates.io` for the
    /// registry's, or by default the one this pith carries, unpacked under `agent_dir`.
    pub sdk: Option<&'a Path>,
    /// The agent directory (where the carried SDK is unpacked).
    pub agent_dir: &'a Path,
    /// Where the project directory goes.
    pub parent: &'a Path,
}

/// The names a project derives from its id: `word-count` → tool `word_count`, type
/// `WordCount`, environment prefix `WORD_COUNT`.
struct Names {
    id: String,
    snake: String,
    pascal: String,
    upper: String,
}

impl Names {
    fn of(id: &str) -> Names {
        let words: Vec<&str> = id
            .split(['-', '_', '.'])
            .filter(|w| !w.is_empty())
            .collect();
        let pascal = words
            .iter()
            .map(|w| {
                let mut chars = w.chars();
                chars
                    .next()
                    .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            })
            .collect();
        Names {
            id: id.to_string(),
            snake: words.join("_"),
            pascal,
            upper: words.join("_").to_ascii_uppercase(),
        }
    }
}

/// A plugin id: a letter, then letters, digits and `-`; the name of a directory and a crate.
fn check_name(name: &str) -> Result<(), PluginError> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    if !first_ok
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        || name.ends_with('-')
        || name.len() > 64
        || [
            "test",
            "std",
            "core",
            "alloc",
            "proc-macro",
            "self",
            "super",
            "crate",
        ]
        .contains(&name)
    {
        return Err(PluginError(format!(
            "{name:?} is not a plugin name: use up to 64 lowercase letters, digits and '-', \
             starting with a letter, and not a name Rust reserves (for example word-count)"
        )));
    }
    Ok(())
}

/// Fills `{{key}}` placeholders.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

/// The source files of a Rust plugin of `kind`.
fn rust_source(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => include_str!("templates/tool.rs.tmpl"),
        Kind::Extension => include_str!("templates/extension.rs.tmpl"),
        Kind::Provider => include_str!("templates/provider.rs.tmpl"),
        Kind::Skill => include_str!("templates/skill.rs.tmpl"),
        Kind::PromptTemplate => include_str!("templates/prompt-template.rs.tmpl"),
        // Refused by `create`: the script engine is pith's own.
        Kind::ScriptEngine => "",
    }
}

/// The `[capabilities]` a kind's template needs.
fn capabilities(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => {
            "\n[capabilities]\n# The tool reads the workspace; the user's settings may narrow it.\nworkspace = \"read\"\n"
        }
        _ => "",
    }
}

/// Creates the project; returns its directory.
pub fn create(plan: &NewPlugin<'_>) -> Result<PathBuf, PluginError> {
    check_name(plan.name)?;
    if plan.kind == Kind::ScriptEngine {
        return Err(PluginError(
            "script engines are pith's own (the codemode engine): make a tool, extension, \
             provider, skill or prompt-template"
                .into(),
        ));
    }
    if plan.lang != Lang::Rust && plan.kind != Kind::Tool {
        return Err(PluginError(format!(
            "--lang {} makes tools only: write a {} in Rust (--lang rust), or build one with any \
             component toolchain against the WIT of `pith plugin wit`",
            plan.lang.as_str(),
            plan.kind
        )));
    }
    let dir = plan.parent.join(plan.name);
    if dir.exists() {
        return Err(PluginError(format!(
            "{} exists already: pick another name or remove it",
            dir.display()
        )));
    }
    let names = Names::of(plan.name);
    let kind = plan.kind.as_str();
    // Suffixed, so that no name clashes with the SDK's (`tool` → `ToolTool`, not `Tool`).
    let type_name = format!(
        "{}{}",
        names.pascal,
        match plan.kind {
            Kind::Tool => "Tool",
            Kind::Extension => "Extension",
            Kind::Provider => "Provider",
            Kind::Skill | Kind::PromptTemplate | Kind::ScriptEngine => "",
        }
    );
    let description = match plan.kind {
        Kind::Tool => "Counts the lines, words and bytes of workspace files",
        Kind::Extension => "Adds a command that asks a question",
        Kind::Provider => "An echo model",
        Kind::Skill => "How to do one task",
        Kind::PromptTemplate => "Review a file",
        Kind::ScriptEngine => "Runs codemode scripts",
    };
    let registry = format!("{{ version = \"0.1\", features = [\"{kind}\"] }}");
    let by_path = |path: &Path| {
        let quoted = toml::Value::String(path.display().to_string()).to_string();
        format!("{{ path = {quoted}, features = [\"{kind}\"] }}")
    };
    let (sdk, sdk_note) = match plan.sdk {
        Some(path) if path == Path::new("crates.io") => (registry.clone(), String::new()),
        Some(path) => {
            let path = std::path::absolute(path)
                .map_err(|err| PluginError(format!("--sdk {}: {err}", path.display())))?;
            let is_sdk = std::fs::read_to_string(path.join("Cargo.toml"))
                .is_ok_and(|text| text.contains("name = \"pith-sdk\""));
            if !is_sdk {
                return Err(PluginError(format!(
                    "--sdk {}: no pith-sdk there (give the `sdk` directory of a pith checkout, \
                     or crates.io for the registry's)",
                    path.display()
                )));
            }
            (by_path(&path), String::new())
        }
        None if plan.lang == Lang::Rust => {
            let carried = super::sdk::unpack(plan.agent_dir)?;
            let note = format!(
                "# pith-sdk {} as the pith that made this project carries it (unpacked into its\n\
                 # agent directory). To build against crates.io's instead, once it is published there:\n\
                 # pith-sdk = {registry}\n",
                super::sdk::SDK_VERSION
            );
            (by_path(&carried), note)
        }
        None => (registry.clone(), String::new()),
    };
    // In the project's directory `pith tool` and `pith plugin call` load its plugin.
    let try_it = match plan.kind {
        Kind::Tool => format!("pith tool {} '{{\"path\":\".\"}}'", names.snake),
        Kind::Extension => format!("pith plugin call /{} hello --answer yes", names.id),
        Kind::Provider => format!(
            "echo '{{\"type\":\"prompt\",\"message\":\"hi\"}}' | {}_API_KEY=any pith --mode rpc -e . --provider {} --model echo",
            names.upper, names.id
        ),
        Kind::Skill | Kind::PromptTemplate | Kind::ScriptEngine => "pith plugins -e .".to_string(),
    };
    let build_notes = match plan.lang {
        Lang::Rust => {
            "It needs Rust with the `wasm32-wasip2` target (`rustup target add wasm32-wasip2`).\n\n"
        }
        Lang::Python => {
            "It needs componentize-py 0.25.1 (`pip install componentize-py==0.25.1`) and the WIT\n`pith plugin build` writes into `wit/`.\n\n"
        }
        Lang::Js => {
            "It needs Node.js and componentize-js 0.23.0 (`npm install`: see package.json), and the\nWIT `pith plugin build` writes into `wit/`.\n\n"
        }
    };
    let values = [
        ("id", names.id.as_str()),
        ("tool", names.snake.as_str()),
        ("command", names.id.as_str()),
        ("Type", type_name.as_str()),
        ("env", names.upper.as_str()),
        ("kind", kind),
        ("lang", plan.lang.as_str()),
        ("description", description),
        ("sdk", sdk.as_str()),
        ("sdk_note", sdk_note.as_str()),
        ("capabilities", capabilities(plan.kind)),
        ("try", try_it.as_str()),
        ("build_notes", build_notes),
    ];
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            PathBuf::from("pith.toml"),
            fill(include_str!("templates/pith.toml.tmpl"), &values),
        ),
        (
            PathBuf::from("README.md"),
            fill(include_str!("templates/README.md.tmpl"), &values),
        ),
    ];
    match plan.lang {
        Lang::Rust => {
            files.push((
                PathBuf::from("Cargo.toml"),
                fill(include_str!("templates/Cargo.toml.tmpl"), &values),
            ));
            files.push((
                PathBuf::from("src/lib.rs"),
                fill(rust_source(plan.kind), &values),
            ));
            files.push((PathBuf::from(".gitignore"), "/target\n/*.wasm\n".into()));
        }
        Lang::Python => {
            files.push((
                PathBuf::from("app.py"),
                fill(include_str!("templates/app.py.tmpl"), &values),
            ));
            files.push((
                PathBuf::from(".gitignore"),
                "/wit\n/*.wasm\n__pycache__/\n".into(),
            ));
        }
        Lang::Js => {
            files.push((
                PathBuf::from(format!("{}.js", names.id)),
                fill(include_str!("templates/tool.js.tmpl"), &values),
            ));
            files.push((
                PathBuf::from("package.json"),
                fill(include_str!("templates/package.json.tmpl"), &values),
            ));
            files.push((
                PathBuf::from(".gitignore"),
                "/wit\n/*.wasm\nnode_modules/\n".into(),
            ));
        }
    }
    for (path, text) in files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| PluginError(format!("Cannot create {}: {err}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|err| PluginError(format!("Cannot write {}: {err}", path.display())))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_id() {
        let names = Names::of("word-count");
        assert_eq!(names.snake, "word_count");
        assert_eq!(names.pascal, "WordCount");
        assert_eq!(names.upper, "WORD_COUNT");
        assert!(check_name("word-count").is_ok());
        for bad in ["Word", "1x", "a b", "x-", "", "a_b", "test", "std"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_placeholder_is_left_unfilled() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [
            Kind::Tool,
            Kind::Extension,
            Kind::Provider,
            Kind::Skill,
            Kind::PromptTemplate,
        ] {
            let name = format!("p-{}", kind.as_str());
            let plan = NewPlugin {
                name: &name,
                kind,
                lang: Lang::Rust,
                sdk: None,
                agent_dir: &dir.path().join("agent"),
                parent: dir.path(),
            };
            let made = create(&plan).unwrap();
            for file in ["pith.toml", "README.md", "Cargo.toml", "src/lib.rs"] {
                let text = std::fs::read_to_string(made.join(file)).unwrap();
                assert!(!text.contains("{{"), "{file} of {kind}: {text}");
            }
        }
        for lang in [Lang::Python, Lang::Js] {
            let name = format!("t-{}", lang.as_str());
            let plan = NewPlugin {
                name: &name,
                kind: Kind::Tool,
                lang,
                sdk: None,
                agent_dir: &dir.path().join("agent"),
                parent: dir.path(),
            };
            let made = create(&plan).unwrap();
            for entry in std::fs::read_dir(&made).unwrap() {
                let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
                assert!(!text.contains("{{"), "{text}");
            }
        }
        let twice = NewPlugin {
            name: "p-tool",
            kind: Kind::Tool,
            lang: Lang::Rust,
            sdk: None,
            agent_dir: &dir.path().join("agent"),
            parent: dir.path(),
        };
        assert!(create(&twice).unwrap_err().0.contains("exists already"));
    }
}
