//! `pith mcp add|remove|list`: pi 1.5.2's `pi mcp` commands, which edit `mcp.json` and check
//! its servers without starting a session. `add` writes pi's entry forms (the rest of the file
//! kept), `remove` takes an entry out, `list` connects every enabled server — under the same
//! sandbox a session gives it — and exits 1 when one fails or the file has a problem. pith
//! does not sign in to servers (`login`/`logout` say how to give a token instead).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::mcp::config::{McpConfig, Scope, parse_entry};
use crate::mcp::server::{McpServer, ServerContext, Status};
use crate::mcp::{Transport, project_file};

const USAGE: &str = "Usage:
  pith mcp add <server> [options] -- <command> [args...]
  pith mcp add <server> [options] --url <url>
  pith mcp remove <server> [-l]
  pith mcp list [--json]

Configure and check MCP servers without starting a session.
Reads <agent dir>/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json
  remove <server>         Remove a server from mcp.json
  list                    Show state, tools, and errors (exits 1 on failure)

Options for add and remove:
  -l, --local             Use .pi/mcp.json in the current project instead of the global file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send \"Authorization: Bearer ${NAME}\"
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON";

const MORE: &str = "Use \"pith mcp --help\" for usage.";

/// Where the command works.
pub struct Place<'a> {
    /// The agent directory.
    pub agent_dir: &'a Path,
    /// The current directory (the project).
    pub cwd: &'a Path,
    /// Whether the project is trusted.
    pub trusted: bool,
    /// The sandbox a session would give the servers.
    pub policy: Arc<crate::sandbox::SandboxPolicy>,
}

impl Place<'_> {
    fn global(&self) -> PathBuf {
        self.agent_dir.join("mcp.json")
    }

    fn project(&self) -> PathBuf {
        project_file(self.cwd)
    }

    fn untrusted_note(&self) -> Option<String> {
        let file = self.project();
        (!self.trusted && file.exists()).then(|| {
            format!(
                "{} is ignored because the project is not trusted. Start pith in the project with --approve (or run pith trust) to trust it.",
                file.display()
            )
        })
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("{message}");
    ExitCode::FAILURE
}

/// Runs `pith mcp <words>`.
pub async fn run(words: &[String], place: &Place<'_>) -> ExitCode {
    match words.first().map(String::as_str) {
        None | Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("add") => add(&words[1..], place),
        Some("remove") => remove(&words[1..], place),
        Some("list") => match &words[1..] {
            [] => list(place, false).await,
            [flag] if flag == "--json" => list(place, true).await,
            _ => fail(format!("Usage: pith mcp list [--json]\n{MORE}")),
        },
        Some("login" | "logout") => fail(
            "pith does not sign in to MCP servers: put a token in the server's \"headers\" (pith mcp add <server> --url <url> --bearer-token-env-var <NAME>).",
        ),
        Some(other) => fail(format!("Unknown mcp command \"{other}\".\n{MORE}")),
    }
}

/// The file's JSON (an empty `mcpServers` when there is none).
fn read(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Err(_) => Ok(json!({"mcpServers": {}})),
        Ok(text) => {
            let mut value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
                .map_err(|err| format!("{}: {err}", path.display()))?;
            if !value.is_object() || !value.get("mcpServers").is_none_or(Value::is_object) {
                return Err(format!(
                    "{}: expected an object with an \"mcpServers\" object",
                    path.display()
                ));
            }
            if value.get("mcpServers").is_none() {
                value["mcpServers"] = json!({});
            }
            Ok(value)
        }
    }
}

fn write(path: &Path, value: &Value) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|err| format!("{}: {err}", parent.display()))?;
    }
    let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
    std::fs::write(path, text).map_err(|err| format!("{}: {err}", path.display()))
}

fn add(words: &[String], place: &Place<'_>) -> ExitCode {
    let mut local = false;
    let mut name: Option<&str> = None;
    let (mut env, mut headers) = (Map::new(), Map::new());
    let (mut url, mut cwd, mut exposure, mut description) = (None, None, None, None);
    let mut command: Vec<String> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        let mut value = || {
            i += 1;
            words
                .get(i)
                .cloned()
                .ok_or(format!("{word} needs a value."))
        };
        let pair = |text: String, flag: &str| {
            text.split_once('=')
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .ok_or(format!("{flag} expects KEY=VALUE, got \"{text}\"."))
        };
        let step = match word {
            "--" => {
                command = words[i + 1..].to_vec();
                break;
            }
            "-l" | "--local" => {
                local = true;
                Ok(())
            }
            "--url" => value().map(|v| url = Some(v)),
            "--cwd" => value().map(|v| cwd = Some(v)),
            "--exposure" => value().map(|v| exposure = Some(v)),
            "--description" => value().map(|v| description = Some(v)),
            "--env" => value()
                .and_then(|v| pair(v, "--env"))
                .map(|(k, v)| drop(env.insert(k, v))),
            "--header" => value()
                .and_then(|v| pair(v, "--header"))
                .map(|(k, v)| drop(headers.insert(k, v))),
            "--bearer-token-env-var" => value().map(|v| {
                drop(headers.insert("Authorization".into(), json!(format!("Bearer ${{{v}}}"))))
            }),
            flag if flag.starts_with("--oauth") => Err(format!(
                "{flag}: pith does not sign in to MCP servers; give a token with --header or --bearer-token-env-var."
            )),
            flag if flag.starts_with('-') => Err(format!("Unknown option {flag}.\n{MORE}")),
            positional if name.is_none() => {
                name = Some(positional);
                Ok(())
            }
            extra => Err(format!("Unexpected argument \"{extra}\".\n{MORE}")),
        };
        if let Err(message) = step {
            return fail(message);
        }
        i += 1;
    }
    let usage = format!(
        "Usage: pith mcp add <server> [options] (--url <url> | -- <command> [args...])\n{MORE}"
    );
    let Some(name) = name else { return fail(usage) };
    let mut entry = Map::new();
    match (&url, command.split_first()) {
        (Some(url), None) => {
            if !env.is_empty() || cwd.is_some() {
                return fail("--env only applies to stdio servers.");
            }
            entry.insert("url".into(), json!(url));
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
        }
        (None, Some((program, args))) => {
            if !headers.is_empty() {
                return fail("--header only applies to HTTP servers (--url).");
            }
            entry.insert("command".into(), json!(program));
            if !args.is_empty() {
                entry.insert("args".into(), json!(args));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
            if let Some(cwd) = cwd {
                entry.insert("cwd".into(), json!(cwd));
            }
        }
        _ => return fail(usage),
    }
    if let Some(exposure) = exposure {
        entry.insert("exposure".into(), json!(exposure));
    }
    if let Some(description) = description {
        entry.insert("description".into(), json!(description));
    }
    let (path, scope, scope_word) = if local {
        (place.project(), Scope::Project, "project")
    } else {
        (place.global(), Scope::User, "global")
    };
    let entry = Value::Object(entry);
    if let Err(problem) = parse_entry(name, &entry, scope, &path) {
        return fail(problem);
    }
    let mut file = match read(&path) {
        Ok(file) => file,
        Err(message) => return fail(message),
    };
    let servers = file["mcpServers"].as_object_mut().expect("checked above");
    let verb = if servers.contains_key(name) {
        "Replaced"
    } else {
        "Added"
    };
    servers.insert(name.to_string(), entry);
    if let Err(message) = write(&path, &file) {
        return fail(message);
    }
    println!(
        "{verb} {scope_word} MCP server \"{name}\" in {}.",
        path.display()
    );
    if local && !place.trusted {
        println!(
            "The project is not trusted, so {} is ignored until you start pith in the project with --approve (or run pith trust).",
            path.display()
        );
    }
    println!("Check it with: pith mcp list");
    ExitCode::SUCCESS
}

fn remove(words: &[String], place: &Place<'_>) -> ExitCode {
    let local = words.iter().any(|w| w == "-l" || w == "--local");
    let names: Vec<&String> = words
        .iter()
        .filter(|w| *w != "-l" && *w != "--local")
        .collect();
    let [name] = names.as_slice() else {
        return fail(format!("Usage: pith mcp remove <server> [-l]\n{MORE}"));
    };
    let (path, scope_word, other) = if local {
        (place.project(), "project", place.global())
    } else {
        (place.global(), "global", place.project())
    };
    let mut file = match read(&path) {
        Ok(file) => file,
        Err(message) => return fail(message),
    };
    let removed = file["mcpServers"]
        .as_object_mut()
        .and_then(|servers| servers.remove(name.as_str()));
    if removed.is_none() {
        let elsewhere = read(&other)
            .ok()
            .is_some_and(|f| f["mcpServers"].get(name.as_str()).is_some());
        let hint = if elsewhere {
            format!(
                " It is defined in {}; {}.",
                other.display(),
                if local { "drop --local" } else { "use --local" }
            )
        } else {
            String::new()
        };
        return fail(format!(
            "No {scope_word} MCP server named \"{name}\" in {}.{hint}",
            path.display()
        ));
    }
    if let Err(message) = write(&path, &file) {
        return fail(message);
    }
    println!(
        "Removed {scope_word} MCP server \"{name}\" from {}.",
        path.display()
    );
    ExitCode::SUCCESS
}

/// pi's transport text: the command line, or the URL.
fn transport(server: &McpServer) -> String {
    match &server.config.transport {
        Transport::Stdio { command, args, .. } => std::iter::once(command.clone())
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        Transport::Http { url, .. } => url.clone(),
    }
}

async fn list(place: &Place<'_>, as_json: bool) -> ExitCode {
    let project = place.trusted.then(|| place.project());
    let config = McpConfig::load(&place.global(), project.as_deref());
    let note = place.untrusted_note();
    if config.servers.is_empty() && config.errors.is_empty() && !as_json {
        println!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            place.global().display()
        );
        if let Some(note) = note {
            println!("{note}");
        }
        return ExitCode::SUCCESS;
    }
    let context = Arc::new(ServerContext {
        cwd: place.cwd.to_path_buf(),
        policy: place.policy.clone(),
        log: Arc::new(crate::mcp::log::McpLog::at(place.agent_dir.join("mcp.log"))),
        user_file: place.global(),
    });
    let servers: Vec<Arc<McpServer>> = config
        .servers
        .iter()
        .cloned()
        .map(|s| McpServer::new(s, context.clone()))
        .collect();
    let connects = servers
        .iter()
        .filter(|s| s.config.enabled)
        .map(|s| s.connect());
    futures_util::future::join_all(connects).await;
    let mut failed = !config.errors.is_empty();
    let mut lines = Vec::new();
    let mut entries = Vec::new();
    for server in &servers {
        let scope = if server.config.source.as_deref() == Some(place.global().as_path()) {
            "global"
        } else {
            "project"
        };
        let exposure = server.config.exposure.as_str();
        let tools: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
        let (state, error) = match server.status() {
            Status::Disabled => ("disabled", None),
            Status::Connected => ("connected", None),
            Status::NeedsSignIn => ("needs sign-in", None),
            Status::Failed(e) | Status::Disconnected(e) => ("failed", Some(e)),
            Status::Starting | Status::Closed => ("failed", None),
        };
        failed |= server.config.enabled && state != "connected";
        let head = match state {
            "connected" => format!(
                "{}: connected, {} tool{} ({exposure}, {scope})",
                server.name(),
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            ),
            other => format!("{}: {other} ({exposure}, {scope})", server.name()),
        };
        lines.push(head);
        lines.push(format!("  {}", transport(server)));
        if let Some(over) = &server.config.overridden_by {
            lines.push(format!("  project override: {}", over.display()));
        }
        if !tools.is_empty() {
            lines.push(format!("  tools: {}", tools.join(", ")));
        }
        if server.has_resources() {
            lines.push("  offers resources".into());
        }
        if let Some(error) = &error {
            lines.extend(error.lines().map(|l| format!("  {l}")));
        }
        let mut entry = json!({
            "name": server.name(), "scope": scope,
            "source": server.config.source.as_ref().map(|p| p.display().to_string()),
            "enabled": server.config.enabled, "exposure": exposure,
            "transport": transport(server), "state": state, "tools": tools,
        });
        if server.has_resources() {
            entry["resources"] = json!(true);
        }
        if let Some(error) = error {
            entry["error"] = json!(error);
        }
        entries.push(entry);
        server.shut_down().await;
    }
    for error in &config.errors {
        lines.push(format!("config error: {error}"));
    }
    if as_json {
        let mut out = json!({"servers": entries, "errors": config.errors});
        if let Some(note) = &note {
            out["note"] = json!(note);
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        lines.extend(note);
        println!("{}", lines.join("\n"));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
