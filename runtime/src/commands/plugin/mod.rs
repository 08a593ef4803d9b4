//! `pith plugin …`: the plugin author's commands. `new` scaffolds a project, `build` builds it
//! with its language's tool and checks it, `check` validates a plugin without starting a
//! session, `wit` writes the WIT package for other toolchains, and `call` runs a tool or an
//! extension command once, answering its dialogs from the command line.

pub mod building;
pub mod call;
pub mod check;
pub mod new;
pub mod sdk;
pub mod wit;

use std::path::{Path, PathBuf};

/// A `pith plugin` subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginCommand {
    /// `new <name> [--kind k] [--lang l] [--sdk path]`.
    New {
        /// The plugin's id.
        name: String,
        /// `tool` (default), `extension`, `provider`, `skill` or `prompt-template`.
        kind: String,
        /// `rust` (default), `python` or `js`.
        lang: String,
        /// A local `pith-sdk` checkout to depend on.
        sdk: Option<PathBuf>,
    },
    /// `build [dir]`.
    Build {
        /// The project (the current directory by default).
        dir: PathBuf,
    },
    /// `check <path>`: a plugin directory, manifest or component.
    Check {
        /// The plugin.
        path: PathBuf,
    },
    /// `wit [dir]`.
    Wit {
        /// Where to write (`wit` by default).
        dir: PathBuf,
    },
    /// `call <tool> [json]` or `call /<command> [args…] [--answer a]…`.
    Call {
        /// A tool name, or `/` and an extension command.
        target: String,
        /// The tool's JSON arguments, or the command's arguments.
        input: String,
        /// Answers to the dialogs, in order.
        answers: Vec<String>,
    },
}

/// A language a project can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Rust with `pith-sdk`.
    Rust,
    /// Python with componentize-py.
    Python,
    /// JavaScript with componentize-js.
    Js,
}

impl Lang {
    /// Parses `rust`, `python` or `js`.
    pub fn parse(text: &str) -> Result<Lang, PluginError> {
        match text {
            "rust" | "rs" => Ok(Lang::Rust),
            "python" | "py" => Ok(Lang::Python),
            "js" | "javascript" => Ok(Lang::Js),
            other => Err(PluginError(format!(
                "--lang {other}: pith makes rust, python or js projects"
            ))),
        }
    }

    /// The name `--lang` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Js => "js",
        }
    }
}

/// Why a plugin command failed: the cause and the fix, for stderr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PluginError(pub String);

/// What the binary does after [`prepare`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing: the command is done.
    Done,
    /// A project was created: remember it as trusted (the user made it), so that `pith tool`
    /// and `pith plugin call` in it load its plugin.
    Trust(PathBuf),
    /// Load the plugin host with this plugin added, and check it.
    Check(PathBuf),
    /// Load the plugin host and run the command (`call`).
    Host,
}

/// Runs the commands that need no plugin host (`new`, `wit`, `build`), and says what follows.
pub fn prepare(command: &PluginCommand, agent_dir: &Path) -> Result<Next, PluginError> {
    match command {
        PluginCommand::New {
            name,
            kind,
            lang,
            sdk,
        } => {
            let cwd = std::env::current_dir()
                .map_err(|err| PluginError(format!("the current directory: {err}")))?;
            let dir = new::create(&new::NewPlugin {
                name,
                kind: parse_kind(kind)?,
                lang: Lang::parse(lang)?,
                sdk: sdk.as_deref(),
                agent_dir,
                parent: &cwd,
            })?;
            println!(
                "created {} ({kind} in {lang}): `cd {name} && pith plugin build`",
                dir.display()
            );
            Ok(Next::Trust(dir))
        }
        PluginCommand::Wit { dir } => {
            wit::write(dir)?;
            println!(
                "wrote pith:plugin@0.1.0 and its WASI dependencies to {}",
                dir.display()
            );
            Ok(Next::Done)
        }
        PluginCommand::Build { dir } => {
            let component = building::build(dir)?;
            println!("built {}", component.display());
            Ok(Next::Check(dir.clone()))
        }
        PluginCommand::Check { path } => Ok(Next::Check(path.clone())),
        PluginCommand::Call { .. } => Ok(Next::Host),
    }
}

/// Parses a kind as manifests write it.
pub fn parse_kind(text: &str) -> Result<crate::plugin_host::manifest::Kind, PluginError> {
    use crate::plugin_host::manifest::Kind;
    match text {
        "tool" => Ok(Kind::Tool),
        "extension" => Ok(Kind::Extension),
        "provider" => Ok(Kind::Provider),
        "skill" => Ok(Kind::Skill),
        "prompt-template" => Ok(Kind::PromptTemplate),
        other => Err(PluginError(format!(
            "--kind {other}: the kinds are tool, extension, provider, skill and prompt-template"
        ))),
    }
}
