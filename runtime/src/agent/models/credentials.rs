//! pi's value forms for keys and header values (`auth.json` keys, `models.json` `apiKey` and
//! `headers`): a literal; `$NAME` / `${NAME}` anywhere in the text (every variable must be
//! set and not empty, else the whole value is unresolved); `$$` and `$!` for a literal `$` and
//! `!`; and `!command`, whose trimmed output is the value (run by `/bin/sh -c` as pi runs it:
//! the user's own configuration, outside the tool sandbox, stdin and stderr closed, 10 s, at
//! most 1 MiB; a failure, a timeout or no output leaves the value unresolved — it is never
//! sent as it is written). `auth.json` commands run once per process; `models.json` ones at
//! every request.

use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// The most output a command may print.
const COMMAND_OUTPUT_LIMIT: usize = 1 << 20;

/// Why a value could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// Its command failed, timed out or printed nothing.
    Command(String),
    /// These variables are unset or empty.
    Variables(Vec<String>),
}

impl Unresolved {
    /// pi's message: `Failed to resolve <what> from …`.
    pub fn message(&self, what: &str) -> String {
        match self {
            Unresolved::Command(command) => {
                format!("Failed to resolve {what} from shell command: {command}")
            }
            Unresolved::Variables(names) if names.len() == 1 => format!(
                "Failed to resolve {what} from environment variable: {}",
                names[0]
            ),
            Unresolved::Variables(names) => format!(
                "Failed to resolve {what} from environment variables: {}",
                names.join(", ")
            ),
        }
    }
}

/// Where a value's variables are looked up: the credential's own `env` first, then the
/// process's (an empty value counts as unset).
pub struct Lookup<'a> {
    /// A credential's `env` object.
    pub scoped: Option<&'a serde_json::Map<String, serde_json::Value>>,
}

impl Lookup<'_> {
    /// The process environment only.
    pub const PROCESS: Lookup<'static> = Lookup { scoped: None };

    fn get(&self, name: &str) -> Option<String> {
        self.scoped
            .and_then(|env| env.get(name))
            .and_then(serde_json::Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }
}

/// One piece of a template.
enum Part<'a> {
    Text(std::borrow::Cow<'a, str>),
    Var(&'a str),
}

/// The pieces of a template value (pi's `parseConfigValueTemplate`).
fn template(value: &str) -> Vec<Part<'_>> {
    let is_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        if at > 0 {
            parts.push(Part::Text(rest[..at].into()));
        }
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            parts.push(Part::Text("$".into()));
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('!') {
            parts.push(Part::Text("!".into()));
            rest = tail;
        } else if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                None => {
                    parts.push(Part::Text("$".into()));
                    rest = after;
                }
                Some(close) => {
                    let name = &braced[..close];
                    let valid = name.starts_with(is_start) && name.chars().all(is_name);
                    if valid {
                        parts.push(Part::Var(name));
                    } else {
                        parts.push(Part::Text(rest[at..at + close + 3].into()));
                    }
                    rest = &braced[close + 1..];
                }
            }
        } else if after.starts_with(is_start) {
            let end = after.find(|c: char| !is_name(c)).unwrap_or(after.len());
            parts.push(Part::Var(&after[..end]));
            rest = &after[end..];
        } else {
            parts.push(Part::Text("$".into()));
            rest = after;
        }
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.into()));
    }
    parts
}

/// Resolves `value`; `cached` keeps a command's result (and failure) for the process, as pi
/// does for `auth.json` keys.
pub fn resolve(value: &str, lookup: &Lookup<'_>, cached: bool) -> Result<String, Unresolved> {
    if let Some(command) = value.strip_prefix('!') {
        let output = if cached {
            static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
            let cache = CACHE.get_or_init(Mutex::default);
            let known = cache
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get(command)
                .cloned();
            match known {
                Some(output) => output,
                None => {
                    let output = run(command);
                    cache
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .insert(command.to_string(), output.clone());
                    output
                }
            }
        } else {
            run(command)
        };
        return output.ok_or_else(|| Unresolved::Command(command.to_string()));
    }
    let mut out = String::new();
    let mut missing: Vec<String> = Vec::new();
    for part in template(value) {
        match part {
            Part::Text(text) => out.push_str(&text),
            Part::Var(name) => match lookup.get(name) {
                Some(found) => out.push_str(&found),
                None if !missing.iter().any(|m| m == name) => missing.push(name.to_string()),
                None => {}
            },
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(Unresolved::Variables(missing))
    }
}

/// True when `value` would resolve without running anything: a command counts as resolvable
/// (pi lists its provider without running it), a template when its variables are set (and not
/// only whitespace).
pub fn looks_resolvable(value: &str) -> bool {
    if value.starts_with('!') {
        return true;
    }
    template(value).iter().all(|part| match part {
        Part::Text(_) => true,
        Part::Var(name) => std::env::var(name).is_ok_and(|v| !v.trim().is_empty()),
    })
}

/// Runs `command` with `/bin/sh -c`: its trimmed output, or `None` when it fails, times out,
/// prints more than 1 MiB or prints nothing.
fn run(command: &str) -> Option<String> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut output = Vec::new();
        let read = (&mut stdout)
            .take(COMMAND_OUTPUT_LIMIT as u64 + 1)
            .read_to_end(&mut output);
        read.ok().map(|_| output)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    let output = reader.join().ok().flatten()?;
    if !status?.success() || output.len() > COMMAND_OUTPUT_LIMIT {
        return None;
    }
    let text = String::from_utf8_lossy(&output).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(value: &str) -> Result<String, Unresolved> {
        let scoped: serde_json::Map<String, serde_json::Value> = serde_json::from_value(
            serde_json::json!({"PITH_CRED_FOO": "bar", "PITH_CRED_EMPTY": ""}),
        )
        .unwrap();
        resolve(
            value,
            &Lookup {
                scoped: Some(&scoped),
            },
            false,
        )
    }

    #[test]
    fn pi_s_value_forms() {
        for (raw, resolved) in [
            ("sk-abc", "sk-abc"),
            ("$PITH_CRED_FOO", "bar"),
            ("${PITH_CRED_FOO}", "bar"),
            ("Bearer $PITH_CRED_FOO", "Bearer bar"),
            ("$PITH_CRED_FOO-x", "bar-x"),
            ("${PITH_CRED_FOO}_x", "bar_x"),
            ("$$", "$"),
            ("$$PITH_CRED_FOO", "$PITH_CRED_FOO"),
            ("$!cmd", "!cmd"),
            ("a$!b", "a!b"),
            ("cost$5", "cost$5"),
            ("$", "$"),
            ("${", "${"),
            ("${PITH_CRED_FOO", "${PITH_CRED_FOO"),
            ("${1A}", "${1A}"),
            ("${}", "${}"),
            ("${A-B}", "${A-B}"),
            (" !echo hi", " !echo hi"),
            ("!echo hi", "hi"),
            ("!printf '  a\\n b \\n'", "a\n b"),
        ] {
            assert_eq!(env(raw).as_deref(), Ok(resolved), "{raw:?}");
        }
        let missing = |raw| env(raw).unwrap_err();
        assert_eq!(
            missing("$PITH_CRED_FOO_x"),
            Unresolved::Variables(vec!["PITH_CRED_FOO_x".into()])
        );
        assert_eq!(
            missing("$PITH_CRED_EMPTY"),
            Unresolved::Variables(vec!["PITH_CRED_EMPTY".into()])
        );
        assert_eq!(
            missing("$PITH_CRED_M1$PITH_CRED_M2").message("API key for provider \"p\""),
            "Failed to resolve API key for provider \"p\" from environment variables: PITH_CRED_M1, PITH_CRED_M2"
        );
        for command in ["exit 3", "echo out; exit 1", "true", "echo ok >&2", ""] {
            assert_eq!(
                env(&format!("!{command}")),
                Err(Unresolved::Command(command.into())),
                "{command:?}"
            );
        }
        assert_eq!(
            Unresolved::Command("exit 3".into()).message("API key for provider \"p\""),
            "Failed to resolve API key for provider \"p\" from shell command: exit 3"
        );
    }
}
