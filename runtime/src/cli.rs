//! Command-line arguments: pi's flags (so hosts can swap `pi` for `pith`), pith's own, and the
//! extensions' (kept as given until the extensions are loaded). The unit tests are in
//! `cli_tests.rs`.

use std::path::PathBuf;

use crate::agent::extensions::flags::GivenFlag;

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Serve the RPC protocol on stdin/stdout (`--mode rpc`).
    Rpc,
    /// Serve the Agent Client Protocol on stdin/stdout (`--mode acp`).
    Acp,
    /// Run prompts once and print the answer or the events (`-p`, `--mode text|json`, or
    /// prompt words with no mode; see [`crate::print`]).
    Print {
        /// What to print.
        output: crate::print::output::Output,
        /// The prompts and `@file` arguments, in order.
        words: Vec<String>,
        /// True when `-p` or `--mode` asked for it (false: nothing said what to do).
        chosen: bool,
    },
    /// List the available models (pi's `--list-models [search]`).
    ListModels {
        /// Words every listed model matches.
        search: Option<String>,
    },
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
    /// Write a session file as the HTML viewer page (`pith export <file> [out.html]`, or pi's
    /// `--export <file> [out.html]`).
    Export {
        /// The session file.
        session: PathBuf,
        /// Where to write the page (`pith-session-<file stem>.html` here when absent).
        output: Option<PathBuf>,
    },
    /// Remember whether a project is trusted (`pith trust [path]`, `pith untrust [path]`).
    Trust {
        /// The project (the current directory when absent).
        path: Option<PathBuf>,
        /// Trust (true) or refuse (false).
        trusted: bool,
    },
    /// Print pith's built-in documentation (`pith docs [topic]`).
    Docs {
        /// The topic (the list of topics when absent).
        topic: Option<String>,
    },
    /// `pith mcp add|remove|list …` (pi's `pi mcp`), its words as given.
    Mcp(Vec<String>),
    /// A plugin author's command (`pith plugin new|build|check|wit|call …`).
    Plugin(crate::commands::plugin::PluginCommand),
    /// Print usage.
    Help,
    /// Print the version.
    Version,
}

/// Parsed arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Args {
    /// What to do.
    pub command: Option<Command>,
    /// `--agent-dir`.
    pub agent_dir: Option<PathBuf>,
    /// `--plugins-dir`, repeatable.
    pub plugins_dirs: Vec<PathBuf>,
    /// `pith plugin new --kind`.
    pub plugin_kind: Option<String>,
    /// `pith plugin new --lang`.
    pub plugin_lang: Option<String>,
    /// `pith plugin new --sdk <path>`.
    pub sdk_path: Option<PathBuf>,
    /// `pith plugin call --answer`, repeatable.
    pub answers: Vec<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model` (`id`, `provider/id`, optional `:level`).
    pub model: Option<String>,
    /// `--models a,b` (scoped cycling).
    pub models: Option<Vec<String>>,
    /// `--api-key`.
    pub api_key: Option<String>,
    /// `--thinking`.
    pub thinking: Option<String>,
    /// `--no-session`.
    pub no_session: bool,
    /// `--legacy-events`: also send pi 0.16's events (`bash_end`, `compaction`, `error`).
    pub legacy_events: bool,
    /// `--session-dir`.
    pub session_dir: Option<PathBuf>,
    /// `--session <path|id>`.
    pub session: Option<String>,
    /// `--fork <path|id>`: a copy of that session, as a new session here.
    pub fork: Option<String>,
    /// `--continue` / `-c`.
    pub continue_session: bool,
    /// `--tools a,b` (names or globs) / `-t`.
    pub tools: Option<Vec<String>>,
    /// `--tools +a`: tools added to the default selection.
    pub tools_add: Vec<String>,
    /// `--tools -a`: tools taken out of the default selection.
    pub tools_remove: Vec<String>,
    /// `--no-builtin-tools` / `-nbt`.
    pub no_builtin_tools: bool,
    /// `--exclude-tools a,b` (names or globs).
    pub exclude_tools: Vec<String>,
    /// Long options that are none of pith's: the extensions' flags (pi's `registerFlag`),
    /// resolved once the extensions are loaded
    /// ([`crate::agent::extensions::flags::resolve`]).
    pub extension_flags: Vec<GivenFlag>,
    /// Their values, once resolved against the extensions loaded.
    pub flags: crate::agent::extensions::flags::CliFlags,
    /// `--name` / `-n`: the new session's name.
    pub name: Option<String>,
    /// `--session-id`: the new session's id.
    pub session_id: Option<String>,
    /// `--approve` / `-a` (true) or `--no-approve` / `-na` (false), the last one given:
    /// whether the project's own plugins, settings and resources load (see
    /// [`Args::project_trusted`]).
    pub approve: Option<bool>,
    /// `--approve` / `--no-approve` as given on the command line (the binary fills `approve`
    /// with the start folder's decision; RPC applies the flag itself to every folder it
    /// switches to, as pi does).
    pub trust_flag: Option<bool>,
    /// `--pi-protocol`: which pi's frames to write (`1.5` or `0.73`).
    pub pi_protocol: Option<String>,
    /// `--sandbox <mode>`: `read-only`, `workspace-write` or `full-access`.
    pub sandbox: Option<String>,
    /// `--listen <socket-path|tcp:HOST:PORT>`: serve RPC clients on a socket, not stdio.
    pub listen: Option<String>,
    /// `--rpc-token-file <file>`: the token TCP clients must present.
    pub rpc_token_file: Option<PathBuf>,
    /// `--no-tools`.
    pub no_tools: bool,
    /// `--system-prompt`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`, repeatable.
    pub append_system_prompt: Vec<String>,
    /// `--extension` / `-e`, repeatable.
    pub extensions: Vec<PathBuf>,
    /// `--no-extensions`.
    pub no_extensions: bool,
    /// `--skill`, repeatable.
    pub skills: Vec<PathBuf>,
    /// `--no-skills`.
    pub no_skills: bool,
    /// `--no-mcp`: no MCP servers.
    pub no_mcp: bool,
    /// `--no-context-files` / `-nc`: no `AGENTS.md` / `CLAUDE.md` in the system prompt.
    pub no_context_files: bool,
    /// `--prompt-template`, repeatable.
    pub prompt_templates: Vec<PathBuf>,
    /// `--no-prompt-templates`.
    pub no_prompt_templates: bool,
    /// `--offline`.
    pub offline: bool,
    /// `--verbose`.
    pub verbose: bool,
}

/// A usage error (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The usage text.
pub const USAGE: &str = "\
pith — a headless coding-agent runtime with WebAssembly plugins

Usage:
  pith --mode rpc [options]          serve pi's RPC protocol on stdin/stdout
  pith --mode acp [options]          serve the Agent Client Protocol on stdin/stdout (editors)
  pith -p [options] <prompt>… [@file]…  run the prompts once, print the last answer's text
                                     (also --mode text; words or piped stdin alone do the same);
                                     exit 1 on a failed, aborted or cut-short answer
  pith --mode json [options] <prompt>…  the same, printing the session header and every event
                                     as JSON lines
  pith plugins [--json] [options]    list plugins, their kinds, versions, sources and grants
  pith tool <name> [json] [options]  call a tool once in the current directory and print the result
  pith plugin new <name> [--kind tool|extension|provider|skill|prompt-template] [--lang rust|python|js]
                                     make a plugin project; a Rust one builds against the pith-sdk
                                     pith carries (--sdk <path>: a checkout's; --sdk crates.io)
  pith plugin build [dir]            build a plugin project and check it
  pith plugin check <path>           check a plugin: manifest, world, imports, collisions, grants
  pith plugin wit [dir]              write pith's WIT package and the WASI WIT it uses
  pith plugin call <tool> [json] | /<command> [args] [--answer a]…
                                     call a tool, or run an extension command answering its dialogs
  pith export <session.jsonl> [out.html]  write a session as one HTML page (also --export)
  pith mcp add|remove|list …         configure and check MCP servers (pith mcp --help)
  pith trust [path] | untrust [path]  remember whether a project's own plugins, settings and
                                     resources load (the current directory by default)
  pith docs [topic]                  print pith's documentation (the topics when none is named)

Model options:
  --provider <name>              the provider of --model
  --model <pattern>              id or provider/id, optionally with :<thinking level>
  --models <a,b,…>               models for cycle_model
  --list-models [search]         print the available models (pi's table) and exit
  --api-key <key>                API key for the chosen model's provider (this run only)
  --thinking <level>             off, minimal, low, medium, high, xhigh, max

Session options:
  --no-session                   keep the session in memory only
  -n, --name <name>              name the new session
  --session-id <id>              the new session's id
  --session-dir <dir>            where session files go
  --session <path|id>            open a session file
  --fork <path|id>               a copy of that session as a new session here (--session-id names it)
  -c, --continue                 continue the most recent session

Tools and resources:
  -t, --tools <a,b,…>            the active tools, names or globs (default: read, bash, edit,
                                 write and plugin tools); +name,-name change the default instead
  -xt, --exclude-tools <a,b,…>   tools to leave out, names or globs
  -nbt, --no-builtin-tools       no built-in tools (plugin, extension and host tools stay)
  -nt, --no-tools                no tools (host tools still apply)
  --system-prompt <text|file>    replace the system prompt
  --append-system-prompt <text|file>  append to the system prompt
  -nc, --no-context-files        leave AGENTS.md / CLAUDE.md (agent directory, then each directory
                                 from / down to the working directory) out of the system prompt
  -e, --extension <path>         load a plugin: its manifest, component or directory (repeatable)
  -a, --approve / -na, --no-approve  trust (or not) the project's own .pith/ plugins and resources
                                 for this run (see pith trust)
  --no-mcp                       connect no MCP server (mcp.json and ACP's are left alone)
  --no-extensions, --skill <path>, --no-skills, --prompt-template <path>, --no-prompt-templates

pith options:
  --agent-dir <dir>              configuration and sessions (default $PITH_AGENT_DIR, else
                                 $PI_CODING_AGENT_DIR, else ~/.pith/agent, else pi's ~/.pi/agent)
  --plugins-dir <dir>            also load plugins from <dir> (repeatable)
  --sandbox <mode>               read-only, workspace-write (default) or full-access: what the
                                 model's tools and shell may read and write (see sandbox.*)
  --pi-protocol <version>        the frames to write: 1.5 (pi 1.5.2, the default) or 0.73 (pi 0.73.1);
                                 also $PITH_PI_PROTOCOL and rpc.protocol in settings
  --legacy-events                also send pi 0.16's events (bash_end, compaction, error)
  --listen <path|tcp:HOST:PORT>  serve RPC clients on a unix socket (or TCP) instead of stdio;
                                 the agent outlives its clients (see the README)
  --rpc-token-file <file>        the token TCP clients send in their first frame (hello)
  --offline, --verbose
  -h, --help                     this text
  -v, -V, --version              the version
  --theme, --use-theme, --no-themes, --tui-mode  accepted and ignored (pith has no terminal UI)
";

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl Args {
    /// The `pith plugin` subcommand in `words` (after `plugin`).
    fn plugin_command(
        &self,
        words: &[String],
    ) -> Result<crate::commands::plugin::PluginCommand, UsageError> {
        use crate::commands::plugin::PluginCommand;
        let arg = |i: usize| words.get(i).cloned();
        let usage = "pith plugin new <name> [--kind k] [--lang l] | build [dir] | check <path> | \
                     wit [dir] | call <tool> [json] | call /<command> [args] [--answer a]…";
        Ok(match words.first().map(String::as_str) {
            Some("new") => PluginCommand::New {
                name: arg(1).ok_or_else(|| {
                    UsageError("pith plugin new needs a name (for example word-count)".into())
                })?,
                kind: self.plugin_kind.clone().unwrap_or_else(|| "tool".into()),
                lang: self.plugin_lang.clone().unwrap_or_else(|| "rust".into()),
                sdk: self.sdk_path.clone(),
            },
            Some("build") => PluginCommand::Build {
                dir: arg(1).map_or_else(|| PathBuf::from("."), PathBuf::from),
            },
            Some("check") => PluginCommand::Check {
                path: arg(1).map(PathBuf::from).ok_or_else(|| {
                    UsageError(
                        "pith plugin check needs the plugin's directory, manifest or component"
                            .into(),
                    )
                })?,
            },
            Some("wit") => PluginCommand::Wit {
                dir: arg(1).map_or_else(|| PathBuf::from("wit"), PathBuf::from),
            },
            Some("call") => {
                let target = arg(1).ok_or_else(|| {
                    UsageError("pith plugin call needs a tool name or /command".into())
                })?;
                let input = if target.starts_with('/') {
                    words[2..].join(" ")
                } else {
                    arg(2).unwrap_or_else(|| "{}".into())
                };
                PluginCommand::Call {
                    target,
                    input,
                    answers: self.answers.clone(),
                }
            }
            Some(other) => {
                return Err(UsageError(format!(
                    "pith plugin {other}: unknown; the commands are {usage}"
                )));
            }
            None => return Err(UsageError(format!("pith plugin needs a command: {usage}"))),
        })
    }

    /// True when the project's own plugins, settings and resources may load: `--approve`, or
    /// the remembered decision the binary puts in `approve` when no flag was given (see
    /// `crate::trust`); untrusted otherwise (as pi 1.5 in RPC mode).
    pub fn project_trusted(&self) -> bool {
        self.approve.unwrap_or(false)
    }

    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, UsageError> {
        let mut args = args.into_iter().peekable();
        let mut print = false;
        let mut parsed = Args::default();
        let mut mode: Option<String> = None;
        let mut words: Vec<String> = Vec::new();
        let (mut json, mut help, mut version) = (false, false, false);
        let mut export: Option<PathBuf> = None;
        let mut list_models: Option<Option<String>> = None;
        while let Some(arg) = args.next() {
            // `pith mcp …` takes the rest as its own words (its flags are its own).
            if arg == "mcp" && words.is_empty() {
                parsed.command = Some(Command::Mcp(args.by_ref().collect()));
                break;
            }
            let mut value = |flag: &str| {
                args.next()
                    .ok_or_else(|| UsageError(format!("{flag} needs a value")))
            };
            match arg.as_str() {
                "--mode" => mode = Some(value("--mode")?),
                "--agent-dir" => parsed.agent_dir = Some(PathBuf::from(value(&arg)?)),
                "--plugins-dir" => parsed.plugins_dirs.push(PathBuf::from(value(&arg)?)),
                "--kind" => parsed.plugin_kind = Some(value(&arg)?),
                "--lang" => parsed.plugin_lang = Some(value(&arg)?),
                "--sdk" => parsed.sdk_path = Some(PathBuf::from(value(&arg)?)),
                "--answer" => parsed.answers.push(value(&arg)?),
                "--provider" => parsed.provider = Some(value(&arg)?),
                "--model" => parsed.model = Some(value(&arg)?),
                "--models" => parsed.models = Some(list(&value(&arg)?)),
                "--api-key" => parsed.api_key = Some(value(&arg)?),
                "--thinking" => parsed.thinking = Some(value(&arg)?),
                "--no-session" => parsed.no_session = true,
                "--legacy-events" => parsed.legacy_events = true,
                "--session-dir" => parsed.session_dir = Some(PathBuf::from(value(&arg)?)),
                "--session" => parsed.session = Some(value(&arg)?),
                "--fork" => parsed.fork = Some(value(&arg)?),
                "-c" | "--continue" => parsed.continue_session = true,
                "-t" | "--tools" => {
                    let entries = list(&value(&arg)?);
                    let signed = entries.iter().filter(|e| e.starts_with(['+', '-'])).count();
                    if signed == 0 {
                        parsed.tools = Some(entries);
                    } else if signed == entries.len() {
                        for entry in entries {
                            let (sign, name) = entry.split_at(1);
                            if sign == "+" {
                                parsed.tools_add.push(name.to_string());
                            } else {
                                parsed.tools_remove.push(name.to_string());
                            }
                        }
                    } else {
                        return Err(UsageError(format!(
                            "{arg}: plain names and +name/-name entries cannot be mixed (a list of \
                             names replaces the selection; +name and -name change the default one)"
                        )));
                    }
                }
                "-xt" | "--exclude-tools" => parsed.exclude_tools.extend(list(&value(&arg)?)),
                "-nbt" | "--no-builtin-tools" => parsed.no_builtin_tools = true,
                // Terminal-only options pi accepts headless too: nothing to show them on.
                "--theme" | "--use-theme" | "--tui-mode" => {
                    value(&arg)?;
                }
                "--no-themes" => {}
                "-n" | "--name" => parsed.name = Some(value(&arg)?),
                "--session-id" => {
                    let id = value(&arg)?;
                    // The id names the session's file: no path in it.
                    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
                        return Err(UsageError(format!(
                            "--session-id {id:?}: an id is a name without '/', '\\' or a leading '.' (for example a UUID)"
                        )));
                    }
                    parsed.session_id = Some(id);
                }
                "-a" | "--approve" => {
                    parsed.approve = Some(true);
                    parsed.trust_flag = Some(true);
                }
                "-na" | "--no-approve" => {
                    parsed.approve = Some(false);
                    parsed.trust_flag = Some(false);
                }
                "--pi-protocol" => parsed.pi_protocol = Some(value(&arg)?),
                "--sandbox" => parsed.sandbox = Some(value(&arg)?),
                "--listen" => parsed.listen = Some(value(&arg)?),
                "--rpc-token-file" => parsed.rpc_token_file = Some(PathBuf::from(value(&arg)?)),
                "--no-mcp" => parsed.no_mcp = true,
                "-nt" | "--no-tools" => parsed.no_tools = true,
                "--system-prompt" => parsed.system_prompt = Some(value(&arg)?),
                "--append-system-prompt" => parsed.append_system_prompt.push(value(&arg)?),
                "-e" | "--extension" => parsed.extensions.push(PathBuf::from(value(&arg)?)),
                "-ne" | "--no-extensions" => parsed.no_extensions = true,
                "--skill" => parsed.skills.push(PathBuf::from(value(&arg)?)),
                "-ns" | "--no-skills" => parsed.no_skills = true,
                "-nc" | "--no-context-files" => parsed.no_context_files = true,
                "--prompt-template" => parsed.prompt_templates.push(PathBuf::from(value(&arg)?)),
                "-np" | "--no-prompt-templates" => parsed.no_prompt_templates = true,
                "--offline" => parsed.offline = true,
                "--verbose" => parsed.verbose = true,
                "--json" => json = true,
                "--export" => export = Some(PathBuf::from(value(&arg)?)),
                "--list-models" => {
                    list_models = Some(args.next_if(|next| !next.starts_with('-')));
                }
                "-p" | "--print" => {
                    print = true;
                    // pi's rule: the next word is the prompt unless it is a file or a flag
                    // (`---` starts a prompt, as YAML front matter does).
                    if let Some(next) = args.next_if(|next| {
                        !next.starts_with('@')
                            && (!next.starts_with('-') || next.starts_with("---"))
                    }) {
                        words.push(next);
                    }
                }
                "--" => words.extend(args.by_ref()),
                "-h" | "--help" => help = true,
                "-v" | "-V" | "--version" => version = true,
                // An option of none of pith's: an extension's flag, once the extensions are
                // loaded and one registers it (pi's rule for its value).
                flag if flag.starts_with("--") && flag.len() > 2 => {
                    let (name, value, inline) = match flag[2..].split_once('=') {
                        Some((name, value)) => (name.to_string(), Some(value.to_string()), true),
                        None => (
                            flag[2..].to_string(),
                            args.next_if(|next| !next.starts_with(['-', '@'])),
                            false,
                        ),
                    };
                    parsed.extension_flags.push(GivenFlag {
                        name,
                        value,
                        inline,
                        word_at: words.len(),
                    });
                }
                flag if flag.starts_with('-') && flag.len() > 1 => {
                    return Err(UsageError(format!("unknown option {flag}")));
                }
                _ => words.push(arg),
            }
        }
        if matches!(parsed.command, Some(Command::Mcp(_))) {
            return Ok(parsed);
        }
        parsed.command = Some(if help {
            Command::Help
        } else if version {
            Command::Version
        } else if let Some(search) = list_models {
            Command::ListModels { search }
        } else if let Some(session) = export {
            Command::Export {
                session,
                output: words.first().map(PathBuf::from),
            }
        } else if mode.as_deref() == Some("acp") {
            Command::Acp
        } else if let Some(output) = match mode.as_deref() {
            Some("text") => Some(crate::print::output::Output::Text),
            Some("json") => Some(crate::print::output::Output::Json),
            None if print => Some(crate::print::output::Output::Text),
            _ => None,
        } {
            Command::Print {
                output,
                words,
                chosen: true,
            }
        } else if let Some(mode) = mode {
            if mode != "rpc" {
                return Err(UsageError(format!(
                    "--mode {mode} is not supported: pith is headless, use --mode rpc, acp, json or text"
                )));
            }
            if let Some(word) = words.iter().find(|w| w.starts_with('@')) {
                return Err(UsageError(format!(
                    "{word}: @file arguments are not supported in RPC mode"
                )));
            }
            Command::Rpc
        } else {
            match words.first().map(String::as_str) {
                Some("plugins") => Command::Plugins { json },
                Some("plugin") => Command::Plugin(parsed.plugin_command(&words[1..])?),
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
                Some("export") => Command::Export {
                    session: words.get(1).map(PathBuf::from).ok_or_else(|| {
                        UsageError(
                            "pith export needs a session file: pith export <file> [out.html]"
                                .into(),
                        )
                    })?,
                    output: words.get(2).map(PathBuf::from),
                },
                Some("docs") => Command::Docs {
                    topic: words.get(1).cloned(),
                },
                Some(word @ ("trust" | "untrust")) => Command::Trust {
                    path: words.get(1).map(PathBuf::from),
                    trusted: word == "trust",
                },
                // Anything else is a prompt, as pi takes words (print mode: pith is headless).
                _ => Command::Print {
                    output: crate::print::output::Output::Text,
                    words,
                    chosen: false,
                },
            }
        });
        Ok(parsed)
    }
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
