//! pi's `mcp.json`, read as pi 1.5.2 reads it: `<agent dir>/mcp.json`, then the project's
//! `.pi/mcp.json` when the project is trusted. Each entry is checked on its own: an invalid one
//! is reported (`<file>: <problem>`, pi's texts) and skipped, and the others still connect. A
//! project entry with a transport replaces the global entry of its name; one without is an
//! override of `enabled`, `exposure` and `toolExposure` only. Beyond pi, an entry of the
//! user's own file may loosen the sandbox its server runs under (`"sandbox"`); a project's
//! file never may.
//!
//! Over 600 lines with its tests (the code is about 520): the file's rules and their tests of
//! pi's texts are read side by side.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

/// Where a server's tools are shown (pi's `exposure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Declared to the model.
    Direct,
    /// Found and loaded with `tool_search`.
    Deferred,
    /// For codemode scripts (pi's default); served as `deferred` until pith has codemode.
    Codemode,
    /// Never reachable.
    Hidden,
}

impl Exposure {
    /// Parses pi's names (`codemode-deferred` is pi's alias of `codemode`).
    pub fn parse(text: &str) -> Option<Exposure> {
        Some(match text {
            "direct" => Exposure::Direct,
            "deferred" => Exposure::Deferred,
            "codemode" | "codemode-deferred" => Exposure::Codemode,
            "hidden" => Exposure::Hidden,
            _ => return None,
        })
    }

    /// pi's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Direct => "direct",
            Exposure::Deferred => "deferred",
            Exposure::Codemode => "codemode",
            Exposure::Hidden => "hidden",
        }
    }

    /// True when the tool is found and loaded with `tool_search` (pi's: `deferred` only;
    /// `codemode` tools are reached from scripts).
    pub fn searchable(self) -> bool {
        self == Exposure::Deferred
    }

    /// True when the tool is reachable but not declared to the model (`deferred`, `codemode`).
    pub fn undeclared(self) -> bool {
        matches!(self, Exposure::Deferred | Exposure::Codemode)
    }
}

const EXPOSURE_CHOICES: &str = r#""codemode", "deferred", "direct", "hidden""#;

/// How pith reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A process on stdin/stdout.
    Stdio {
        /// The program (one executable, not a shell line); `~` expanded.
        command: String,
        /// Its arguments; `~` expanded.
        args: Vec<String>,
        /// Variables for it, in pi's value forms (resolved at each connect).
        env: Vec<(String, String)>,
        /// Its directory (relative to the session's), `~` expanded.
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers, in pi's value forms (resolved at each connect).
        headers: Vec<(String, String)>,
    },
}

/// How a server's sandbox is loosened (`"sandbox"` in the user's own `mcp.json`).
#[derive(Debug, Clone, PartialEq)]
pub enum SandboxLoosening {
    /// Another mode (`"full-access"`, `"workspace-write"`, `"read-only"`).
    Mode(crate::sandbox::SandboxMode),
    /// More writable directories, or the network.
    Widen {
        /// Directories the server may write besides the session's.
        writable_roots: Vec<PathBuf>,
        /// Network access, when set.
        network: Option<bool>,
    },
}

/// One server as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Its name (`[A-Za-z0-9_-]+`).
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// False: listed, never connected.
    pub enabled: bool,
    /// Each request's deadline (pi's `timeout`, 60 s by default), re-armed by progress.
    pub timeout: Duration,
    /// A line about it (for the model's list of servers).
    pub description: Option<String>,
    /// Where its tools are shown.
    pub exposure: Exposure,
    /// Per tool (exact names or `*` patterns, in order).
    pub tool_exposure: Vec<(String, Exposure)>,
    /// The file it came from (`None`: the ACP client's).
    pub source: Option<PathBuf>,
    /// The project file that overrode it.
    pub overridden_by: Option<PathBuf>,
    /// A loosened sandbox (user's file only).
    pub sandbox: Option<SandboxLoosening>,
    /// True when `env` and `headers` are taken as written (an ACP client's), not in pi's value
    /// forms (`${VAR}`, `!command`).
    pub literal_values: bool,
}

impl ServerConfig {
    /// A server with pi's defaults.
    pub fn new(name: impl Into<String>, transport: Transport) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport,
            enabled: true,
            timeout: DEFAULT_TIMEOUT,
            description: None,
            exposure: Exposure::Codemode,
            tool_exposure: Vec::new(),
            source: None,
            overridden_by: None,
            sandbox: None,
            literal_values: false,
        }
    }

    /// The exposure of the server's tool `tool`: an exact `toolExposure` key, else the first
    /// matching pattern, else the server's.
    pub fn exposure_of(&self, tool: &str) -> Exposure {
        if let Some((_, exposure)) = self.tool_exposure.iter().find(|(key, _)| key == tool) {
            return *exposure;
        }
        self.tool_exposure
            .iter()
            .find(|(key, _)| key.contains('*') && crate::agent::models::glob(key, tool))
            .map(|(_, exposure)| *exposure)
            .unwrap_or(self.exposure)
    }

    /// Every exposure the configuration names (the server's and its tools').
    pub fn exposures(&self) -> Vec<Exposure> {
        let mut all = vec![self.exposure];
        all.extend(self.tool_exposure.iter().map(|(_, e)| *e));
        all
    }

    /// pi's transport label (`stdio: node server.js`, `http: https://…`).
    pub fn transport_label(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut words = vec![command.clone()];
                words.extend(args.iter().cloned());
                format!("stdio: {}", words.join(" "))
            }
            Transport::Http { url, .. } => format!("http: {url}"),
        }
    }
}

/// pi's default request deadline.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The servers of a session and what was wrong with the files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    /// In order: the user's file, then the project's new names.
    pub servers: Vec<ServerConfig>,
    /// `<file>: <problem>` for each entry skipped.
    pub errors: Vec<String>,
    /// A project file that was not read because the project is not trusted.
    pub untrusted_project_file: Option<PathBuf>,
    /// `autoEnableCodemode` beside `mcpServers` (the project's over the user's): false keeps a
    /// server with `codemode` exposure from turning the `codemode` tool on.
    pub auto_enable_codemode: Option<bool>,
}

impl McpConfig {
    /// Reads `user_file` and, when `project_file` is given, the project's (trusted) file.
    pub fn load(user_file: &Path, project_file: Option<&Path>) -> McpConfig {
        let mut config = McpConfig {
            auto_enable_codemode: auto_enable_codemode(user_file),
            ..McpConfig::default()
        };
        if let Some(project_file) = project_file
            && let Some(project) = auto_enable_codemode(project_file)
        {
            config.auto_enable_codemode = Some(project);
        }
        if let Some(entries) = read_file(user_file, &mut config.errors) {
            for (name, entry) in entries {
                match parse_entry(&name, &entry, Scope::User, user_file) {
                    Ok(server) => config.add(server, user_file),
                    Err(problem) => config.error(user_file, problem),
                }
            }
        }
        if let Some(project_file) = project_file
            && let Some(entries) = read_file(project_file, &mut config.errors)
        {
            for (name, entry) in entries {
                config.add_project(&name, &entry, project_file);
            }
        }
        config
    }

    fn error(&mut self, file: &Path, problem: String) {
        self.errors.push(format!("{}: {problem}", file.display()));
    }

    /// Adds a server unless its name clashes (`-` and `_` alike) with one already there.
    fn add(&mut self, server: ServerConfig, file: &Path) {
        let key = |name: &str| name.replace('-', "_");
        if let Some(other) = self
            .servers
            .iter()
            .find(|s| s.name != server.name && key(&s.name) == key(&server.name))
        {
            let problem = format!(
                "server \"{}\" conflicts with \"{}\"",
                server.name, other.name
            );
            return self.error(file, problem);
        }
        match self.servers.iter_mut().find(|s| s.name == server.name) {
            Some(existing) => *existing = server,
            None => self.servers.push(server),
        }
    }

    fn add_project(&mut self, name: &str, entry: &Value, file: &Path) {
        let has_transport = entry.as_object().is_some_and(|object| {
            ["command", "url", "type"]
                .iter()
                .any(|k| object.contains_key(*k))
        });
        if has_transport || !entry.is_object() {
            match parse_entry(name, entry, Scope::Project, file) {
                Ok(server) => self.add(server, file),
                Err(problem) => self.error(file, problem),
            }
            return;
        }
        let Some(index) = self.servers.iter().position(|s| s.name == name) else {
            let problem = format!(
                "server \"{name}\" needs \"command\" or \"url\", or a global server to override"
            );
            return self.error(file, problem);
        };
        let object = entry.as_object().cloned().unwrap_or_default();
        if object
            .keys()
            .any(|k| !matches!(k.as_str(), "enabled" | "exposure" | "toolExposure"))
        {
            let problem = format!(
                "server \"{name}\": an override can only set enabled, exposure, toolExposure"
            );
            return self.error(file, problem);
        }
        let mut server = self.servers[index].clone();
        match apply_common(&mut server, &object) {
            Ok(()) => {
                server.overridden_by = Some(file.to_path_buf());
                self.servers[index] = server;
            }
            Err(problem) => self.error(file, problem),
        }
    }
}

/// Which file an entry is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's (`<agent dir>/mcp.json`).
    User,
    /// A project's (`.pi/mcp.json`).
    Project,
}

/// `autoEnableCodemode` in the file at `path`, if it says.
fn auto_enable_codemode(path: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(path).ok()?;
    let parsed: Value =
        serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text)).ok()?;
    parsed.get("autoEnableCodemode").and_then(Value::as_bool)
}

/// The `mcpServers` entries of `path` in file order; `None` (and no error) when there is no
/// file.
fn read_file(path: &Path, errors: &mut Vec<String>) -> Option<Vec<(String, Value)>> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let parsed: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(err) => {
            errors.push(format!("{}: {err}", path.display()));
            return None;
        }
    };
    let Some(servers) = parsed.get("mcpServers").and_then(Value::as_object) else {
        errors.push(format!(
            "{}: expected an object with an \"mcpServers\" object",
            path.display()
        ));
        return None;
    };
    Some(
        servers
            .iter()
            .map(|(name, entry)| (name.clone(), entry.clone()))
            .collect(),
    )
}

/// Checks one entry (pi's rules and texts).
pub fn parse_entry(
    name: &str,
    entry: &Value,
    scope: Scope,
    file: &Path,
) -> Result<ServerConfig, String> {
    let valid_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(format!(
            "invalid server name \"{name}\" (use letters, digits, \"_\" and \"-\")"
        ));
    }
    let Some(object) = entry.as_object() else {
        return Err(format!("server \"{name}\" must be an object"));
    };
    let problem = |text: &str| format!("server \"{name}\": {text}");
    let kind = object.get("type").and_then(Value::as_str);
    if kind == Some("sse") {
        return Err(problem(
            "legacy SSE transport is not supported; use the streamable HTTP URL",
        ));
    }
    let strings = |key: &str, what: &str| -> Result<Vec<(String, String)>, String> {
        match object.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(problem(what)),
                })
                .collect(),
            Some(_) => Err(problem(what)),
        }
    };
    let transport = match (object.get("url"), object.get("command")) {
        (Some(Value::String(url)), _)
            if matches!(kind, None | Some("http" | "streamable-http")) =>
        {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(problem("url must be an http or https URL"));
            }
            Transport::Http {
                url: url.clone(),
                headers: strings("headers", "headers must map names to strings")?,
            }
        }
        (_, Some(Value::String(command))) if matches!(kind, None | Some("stdio")) => {
            let args = match object.get("args") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(expand_home))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| problem("args must be an array of strings"))?,
                Some(_) => return Err(problem("args must be an array of strings")),
            };
            let cwd = match object.get("cwd") {
                None => None,
                Some(Value::String(cwd)) => Some(expand_home(cwd)),
                Some(_) => return Err(problem("cwd must be a string")),
            };
            Transport::Stdio {
                command: expand_home(command),
                args,
                env: strings("env", "env must map names to strings")?,
                cwd,
            }
        }
        _ => {
            return Err(format!(
                "server \"{name}\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)"
            ));
        }
    };
    let mut server = ServerConfig::new(name, transport);
    server.source = Some(file.to_path_buf());
    match object.get("timeout") {
        None => {}
        Some(value) => match value.as_f64() {
            Some(seconds) if seconds > 0.0 && seconds.is_finite() => {
                server.timeout = Duration::from_secs_f64(seconds);
            }
            _ => return Err(problem("timeout must be a positive number of seconds")),
        },
    }
    match object.get("description") {
        None => {}
        Some(Value::String(text)) => server.description = Some(text.clone()),
        Some(_) => return Err(problem("description must be a string")),
    }
    apply_common(&mut server, object)?;
    if let Some(value) = object.get("sandbox") {
        if scope == Scope::Project {
            return Err(problem(
                "sandbox is only allowed in the global mcp.json (a project cannot loosen the sandbox of the servers it brings)",
            ));
        }
        server.sandbox = Some(parse_sandbox(value).map_err(|text| problem(&text))?);
    }
    Ok(server)
}

/// `enabled`, `exposure` and `toolExposure` (the keys a project override may set).
fn apply_common(server: &mut ServerConfig, object: &Map<String, Value>) -> Result<(), String> {
    let name = server.name.clone();
    let problem = |text: String| format!("server \"{name}\": {text}");
    match object.get("enabled") {
        None => {}
        Some(Value::Bool(enabled)) => server.enabled = *enabled,
        Some(_) => return Err(problem("enabled must be a boolean".into())),
    }
    if let Some(value) = object.get("exposure") {
        server.exposure = value
            .as_str()
            .and_then(Exposure::parse)
            .ok_or_else(|| problem(format!("exposure must be one of {EXPOSURE_CHOICES}")))?;
    }
    match object.get("toolExposure") {
        None => {}
        Some(Value::Object(map)) => {
            let mut list = Vec::new();
            for (key, value) in map {
                let exposure = value.as_str().and_then(Exposure::parse).ok_or_else(|| {
                    problem(format!(
                        "toolExposure \"{key}\" must be one of {EXPOSURE_CHOICES}"
                    ))
                })?;
                list.push((key.clone(), exposure));
            }
            server.tool_exposure = list;
        }
        Some(_) => {
            return Err(problem(
                "toolExposure must map tool names to exposures".into(),
            ));
        }
    }
    Ok(())
}

fn parse_sandbox(value: &Value) -> Result<SandboxLoosening, String> {
    const HINT: &str = "sandbox must be \"full-access\", \"workspace-write\", \"read-only\" or {\"writableRoots\": [paths], \"network\": true|false}";
    match value {
        Value::String(mode) => crate::sandbox::SandboxMode::parse(mode)
            .map(SandboxLoosening::Mode)
            .map_err(|_| HINT.to_string()),
        Value::Object(object) => {
            if object
                .keys()
                .any(|k| !matches!(k.as_str(), "writableRoots" | "network"))
            {
                return Err(HINT.into());
            }
            let writable_roots = match object.get("writableRoots") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(|s| PathBuf::from(expand_home(s))))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| HINT.to_string())?,
                Some(_) => return Err(HINT.into()),
            };
            let network = match object.get("network") {
                None => None,
                Some(Value::Bool(network)) => Some(*network),
                Some(_) => return Err(HINT.into()),
            };
            Ok(SandboxLoosening::Widen {
                writable_roots,
                network,
            })
        }
        _ => Err(HINT.into()),
    }
}

/// `~` and `~/…` to the home directory.
fn expand_home(text: &str) -> String {
    if text == "~" || text.starts_with("~/") {
        crate::agent_dir::expand_tilde(Path::new(text))
            .to_string_lossy()
            .into_owned()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn load(user: Value, project: Option<Value>) -> McpConfig {
        let dir = tempfile::tempdir().expect("temp dir");
        let user_file = dir.path().join("mcp.json");
        std::fs::write(&user_file, user.to_string()).expect("write");
        let project_file = dir.path().join("project.json");
        if let Some(project) = &project {
            std::fs::write(&project_file, project.to_string()).expect("write");
        }
        McpConfig::load(
            &user_file,
            project.is_some().then_some(project_file.as_path()),
        )
    }

    #[test]
    fn invalid_entries_are_reported_and_the_others_kept() {
        let config = load(
            json!({"mcpServers": {
                "ok": {"command": "node", "args": ["s.js"], "exposure": "direct"},
                "bad name!": {"command": "node"},
                "sse1": {"type": "sse", "url": "http://x/sse"},
                "badtimeout": {"command": "node", "timeout": 0},
                "dup_x": {"command": "node"},
                "dup-x": {"command": "node"},
                "nocmd": {},
            }}),
            None,
        );
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ok", "dup_x"]);
        let problems: Vec<&str> = config
            .errors
            .iter()
            .map(|e| e.split_once(": ").map(|(_, p)| p).unwrap_or(""))
            .collect();
        assert_eq!(
            problems,
            [
                "invalid server name \"bad name!\" (use letters, digits, \"_\" and \"-\")",
                "server \"sse1\": legacy SSE transport is not supported; use the streamable HTTP URL",
                "server \"badtimeout\": timeout must be a positive number of seconds",
                "server \"dup-x\" conflicts with \"dup_x\"",
                "server \"nocmd\" needs either \"command\" (stdio) or \"url\" (streamable HTTP)",
            ]
        );
    }

    #[test]
    fn a_project_overrides_exposure_but_cannot_loosen_the_sandbox() {
        let config = load(
            json!({"mcpServers": {"a": {"command": "node", "sandbox": "full-access"}}}),
            Some(json!({"mcpServers": {
                "a": {"exposure": "direct"},
                "b": {"command": "node", "sandbox": "full-access"},
                "c": {"enabled": false},
            }})),
        );
        assert_eq!(config.servers.len(), 1);
        assert_eq!(config.servers[0].exposure, Exposure::Direct);
        assert!(config.servers[0].overridden_by.is_some());
        assert!(config.errors[0].contains("sandbox is only allowed in the global mcp.json"));
        assert!(config.errors[1].contains("or a global server to override"));
    }

    #[test]
    fn tool_exposure_prefers_exact_names_then_patterns() {
        let mut server = ServerConfig::new(
            "s",
            Transport::Http {
                url: "http://x".into(),
                headers: Vec::new(),
            },
        );
        server.tool_exposure = vec![
            ("get_*".into(), Exposure::Hidden),
            ("get_one".into(), Exposure::Direct),
        ];
        assert_eq!(server.exposure_of("get_one"), Exposure::Direct);
        assert_eq!(server.exposure_of("get_two"), Exposure::Hidden);
        assert_eq!(server.exposure_of("other"), Exposure::Codemode);
    }
}
