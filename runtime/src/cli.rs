//! Command-line arguments: pi's flags (so hosts can swap `pi` for `pith`) and pith's own.

use std::path::PathBuf;

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve the RPC protocol on stdin/stdout (`--mode rpc`).
    Rpc,
    /// List the plugins (`pith plugins [--json]`).
    Plugins {
        /// Print JSON instead of a table.
        json: bool,
    },
    /// Call a tool once and print its result (`pith tool <name> [arguments-json]`).
    Tool {
        /// The tool's name.
        name: String,
        /// Its arguments as JSON text.
        arguments: String,
    },
    /// Print usage.
    Help,
    /// Print the version.
    Version,
}

/// Parsed arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// What to do.
    pub command: Command,
    /// `--agent-dir`.
    pub agent_dir: Option<PathBuf>,
    /// `--plugins-dir`, repeatable.
    pub plugins_dirs: Vec<PathBuf>,
    /// Flags pith does not know (warned about, as pi drops them).
    pub ignored: Vec<String>,
}

/// A usage error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The usage text.
pub const USAGE: &str = "\
pith — a headless coding-agent runtime with WebAssembly plugins

Usage:
  pith --mode rpc [options]          serve pi's RPC protocol on stdin/stdout
  pith plugins [--json] [options]    list plugins, their kinds, versions, sources and grants
  pith tool <name> [json] [options]  call a tool once in the current directory and print the result

Options:
  --agent-dir <dir>     configuration and sessions (default ~/.pith/agent, or $PITH_AGENT_DIR)
  --plugins-dir <dir>   also load plugins from <dir> (repeatable)
  -h, --help            this text
  -V, --version         the version
";

impl Args {
    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, UsageError> {
        let mut args = args.into_iter();
        let mut parsed = Args {
            command: Command::Help,
            agent_dir: None,
            plugins_dirs: Vec::new(),
            ignored: Vec::new(),
        };
        let mut mode: Option<String> = None;
        let mut words: Vec<String> = Vec::new();
        let mut json = false;
        let mut help = false;
        let mut version = false;
        while let Some(arg) = args.next() {
            let mut value = |flag: &str| {
                args.next()
                    .ok_or_else(|| UsageError(format!("{flag} needs a value")))
            };
            match arg.as_str() {
                "--mode" => mode = Some(value("--mode")?),
                "--agent-dir" => parsed.agent_dir = Some(PathBuf::from(value("--agent-dir")?)),
                "--plugins-dir" => parsed
                    .plugins_dirs
                    .push(PathBuf::from(value("--plugins-dir")?)),
                "--json" => json = true,
                "-h" | "--help" => help = true,
                "-V" | "--version" => version = true,
                flag if flag.starts_with('-') && flag.len() > 1 => {
                    parsed.ignored.push(flag.to_string())
                }
                _ => words.push(arg),
            }
        }
        parsed.command = if help {
            Command::Help
        } else if version {
            Command::Version
        } else if mode.as_deref() == Some("rpc") {
            Command::Rpc
        } else if let Some(mode) = mode {
            return Err(UsageError(format!(
                "--mode {mode} is not supported: pith is headless, use --mode rpc"
            )));
        } else {
            match words.first().map(String::as_str) {
                Some("plugins") => Command::Plugins { json },
                Some("tool") => {
                    let name = words
                        .get(1)
                        .cloned()
                        .ok_or_else(|| UsageError("pith tool needs a tool name".into()))?;
                    Command::Tool {
                        name,
                        arguments: words.get(2).cloned().unwrap_or_else(|| "{}".into()),
                    }
                }
                Some(other) => return Err(UsageError(format!("unknown command {other:?}"))),
                None => Command::Help,
            }
        };
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, UsageError> {
        Args::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn rpc_mode_with_dirs() {
        let args = parse(&[
            "--mode",
            "rpc",
            "--plugins-dir",
            "a",
            "--plugins-dir",
            "b",
            "--agent-dir",
            "x",
        ])
        .unwrap();
        assert_eq!(args.command, Command::Rpc);
        assert_eq!(
            args.plugins_dirs,
            vec![PathBuf::from("a"), PathBuf::from("b")]
        );
        assert_eq!(args.agent_dir, Some(PathBuf::from("x")));
    }

    #[test]
    fn subcommands() {
        assert_eq!(
            parse(&["plugins", "--json"]).unwrap().command,
            Command::Plugins { json: true }
        );
        assert_eq!(
            parse(&["tool", "word_count", "{\"path\":\"a\"}"])
                .unwrap()
                .command,
            Command::Tool {
                name: "word_count".into(),
                arguments: "{\"path\":\"a\"}".into()
            }
        );
        assert!(parse(&["tool"]).is_err());
        assert!(parse(&["--mode", "text"]).is_err());
        assert!(parse(&["--agent-dir"]).is_err());
    }
}
