//! Plugin manifests: what a plugin is and what it asks for.
//!
//! A manifest is TOML, either `<name>.toml` beside `<name>.wasm` or `pith.toml` in a plugin's
//! own directory:
//!
//! ```toml
//! id = "word-count"          # letters, digits, `-`, `_`, `.`; unique among loaded plugins
//! version = "0.1.0"
//! kinds = ["tool"]           # or `kind = "tool"`; tool, provider, extension, skill, prompt-template
//! component = "word_count.wasm"   # optional, relative to the manifest
//! description = "…"         # optional
//!
//! [capabilities]             # what it asks for; the user's settings grant
//! workspace = "read"         # none | read | write
//! http = ["https://api.example.com/v1/"]
//! config = ["EXAMPLE_API_KEY"]
//! process = false
//!
//! [limits]
//! memory-mb = 256            # linear memory cap
//! deadline-ms = 10000        # guest execution time per call (time in host calls excluded)
//! timeout-ms = 1800000       # wall-clock time per call; 0 = none
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::grants::{LimitOverrides, Requested, UrlPrefix, WorkspaceAccess};

/// A plugin kind: the world a component targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Exports `pith:plugin/tool`.
    Tool,
    /// Exports `pith:plugin/provider`.
    Provider,
    /// Exports `pith:plugin/extension`.
    Extension,
    /// Exports `pith:plugin/skill`.
    Skill,
    /// Exports `pith:plugin/prompt-template`.
    PromptTemplate,
    /// Exports `pith:plugin/script-engine`: the engine `codemode` scripts run in (first-party
    /// only).
    ScriptEngine,
}

impl Kind {
    /// The kind's name as written in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Provider => "provider",
            Kind::Extension => "extension",
            Kind::Skill => "skill",
            Kind::PromptTemplate => "prompt-template",
            Kind::ScriptEngine => "script-engine",
        }
    }

    /// The interface the component must export for this kind.
    pub fn export_interface(self) -> &'static str {
        match self {
            Kind::Tool => "pith:plugin/tool@0.1.0",
            Kind::Provider => "pith:plugin/provider@0.1.0",
            Kind::Extension => "pith:plugin/extension@0.1.0",
            Kind::Skill => "pith:plugin/skill@0.1.0",
            Kind::PromptTemplate => "pith:plugin/prompt-template@0.1.0",
            Kind::ScriptEngine => "pith:plugin/script-engine@0.2.0",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Per-call limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The linear-memory cap in bytes.
    pub memory_bytes: u64,
    /// Guest execution time allowed per call, in milliseconds.
    pub deadline_ms: u64,
    /// Wall-clock time allowed per call, in milliseconds; `None` for no limit.
    pub timeout_ms: Option<u64>,
}

impl Limits {
    /// The largest memory cap a manifest may ask for, in MiB: the pooling allocator reserves
    /// address space for this much per memory slot, and no plugin pith ships needs more.
    pub const MAX_MEMORY_MB: u64 = 4096;
    /// Default memory cap in MiB: room for a tool walking a large tree or a provider holding a
    /// long answer, small enough that a runaway plugin cannot take the machine's memory.
    pub const DEFAULT_MEMORY_MB: u64 = 256;
    /// Default guest time per call (host calls excluded): seconds of pure computation is far
    /// beyond what a tool or a provider's parsing needs, and stops an endless loop quickly.
    pub const DEFAULT_DEADLINE_MS: u64 = 10_000;
    /// Default wall-clock time per call: long enough for a slow build or test run through the
    /// process import, short enough that a hung call ends within a working session.
    pub const DEFAULT_TIMEOUT_MS: u64 = 30 * 60 * 1000;

    /// These limits with the user's overrides (settings `plugins.<id>.limits`).
    pub fn overridden(mut self, overrides: &LimitOverrides) -> Result<Limits, String> {
        if let Some(mb) = overrides.memory_mb {
            if mb == 0 || mb > Self::MAX_MEMORY_MB {
                return Err(format!(
                    "limits.memoryMb must be between 1 and {}, got {mb}",
                    Self::MAX_MEMORY_MB
                ));
            }
            self.memory_bytes = mb << 20;
        }
        if let Some(ms) = overrides.deadline_ms {
            if ms == 0 {
                return Err("limits.deadlineMs must be above 0".into());
            }
            self.deadline_ms = ms;
        }
        if let Some(ms) = overrides.timeout_ms {
            self.timeout_ms = (ms > 0).then_some(ms);
        }
        Ok(self)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: Self::DEFAULT_MEMORY_MB << 20,
            deadline_ms: Self::DEFAULT_DEADLINE_MS,
            timeout_ms: Some(Self::DEFAULT_TIMEOUT_MS),
        }
    }
}

/// A validated manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The plugin's id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// The worlds it targets.
    pub kinds: Vec<Kind>,
    /// What it is, for listings.
    pub description: Option<String>,
    /// The component file, relative to the manifest, when given.
    pub component: Option<PathBuf>,
    /// What it asks for.
    pub requested: Requested,
    /// Its per-call limits.
    pub limits: Limits,
}

/// Why a manifest was refused. The message names the field.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ManifestError {
    /// Not valid TOML, or a field of the wrong type, or an unknown field.
    #[error("{0}")]
    Syntax(String),
    /// A field has a bad value.
    #[error("field `{field}`: {reason}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: String,
    version: String,
    kind: Option<Kind>,
    kinds: Option<Vec<Kind>>,
    description: Option<String>,
    component: Option<PathBuf>,
    #[serde(default)]
    capabilities: RawCapabilities,
    #[serde(default)]
    limits: RawLimits,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCapabilities {
    #[serde(default)]
    workspace: WorkspaceAccess,
    #[serde(default)]
    http: Vec<String>,
    #[serde(default)]
    config: Vec<String>,
    #[serde(default)]
    process: bool,
    #[serde(default)]
    models: bool,
    #[serde(default)]
    dirs: Vec<String>,
    #[serde(default)]
    providers: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLimits {
    memory_mb: Option<u64>,
    deadline_ms: Option<u64>,
    timeout_ms: Option<u64>,
}

impl Manifest {
    /// Parses and validates manifest text.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|err| {
            ManifestError::Syntax(err.message().to_string() + &location(text, err.span()))
        })?;
        let field = |field: &'static str, reason: String| ManifestError::Field { field, reason };

        if !valid_id(&raw.id) {
            return Err(field(
                "id",
                format!(
                    "{:?} is not a plugin id (1-64 of a-z 0-9 - _ ., starting with a letter or digit)",
                    raw.id
                ),
            ));
        }
        if !valid_version(&raw.version) {
            return Err(field(
                "version",
                format!("{:?} is not a version like 1.2.3", raw.version),
            ));
        }
        let kinds = match (raw.kind, raw.kinds) {
            (Some(_), Some(_)) => {
                return Err(field("kinds", "give `kind` or `kinds`, not both".into()));
            }
            (Some(kind), None) => vec![kind],
            (None, Some(kinds)) if kinds.is_empty() => {
                return Err(field("kinds", "is empty".into()));
            }
            (None, Some(mut kinds)) => {
                let before = kinds.len();
                kinds.sort();
                kinds.dedup();
                if kinds.len() != before {
                    return Err(field("kinds", "lists a kind twice".into()));
                }
                kinds
            }
            (None, None) => {
                return Err(field(
                    "kinds",
                    "is missing (e.g. kinds = [\"tool\"])".into(),
                ));
            }
        };
        if let Some(component) = &raw.component
            && (component.is_absolute()
                || component
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir)))
        {
            return Err(field(
                "component",
                format!(
                    "{} must be a relative path inside the plugin's directory",
                    component.display()
                ),
            ));
        }
        let http = raw
            .capabilities
            .http
            .iter()
            .map(|prefix| {
                UrlPrefix::parse(prefix).map_err(|reason| field("capabilities.http", reason))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(key) = raw
            .capabilities
            .config
            .iter()
            .find(|k| k.is_empty() || k.contains(char::is_whitespace))
        {
            return Err(field(
                "capabilities.config",
                format!("{key:?} is not a config key"),
            ));
        }
        let memory_mb = raw.limits.memory_mb.unwrap_or(Limits::DEFAULT_MEMORY_MB);
        if memory_mb == 0 || memory_mb > Limits::MAX_MEMORY_MB {
            return Err(field(
                "limits.memory-mb",
                format!("{memory_mb} is outside 1..={}", Limits::MAX_MEMORY_MB),
            ));
        }
        let deadline_ms = raw
            .limits
            .deadline_ms
            .unwrap_or(Limits::DEFAULT_DEADLINE_MS);
        if deadline_ms == 0 {
            return Err(field("limits.deadline-ms", "must be above 0".into()));
        }
        let timeout_ms = match raw.limits.timeout_ms {
            None => Some(Limits::DEFAULT_TIMEOUT_MS),
            Some(0) => None,
            Some(ms) => Some(ms),
        };
        let mut dirs = Vec::new();
        for dir in &raw.capabilities.dirs {
            let path = std::path::Path::new(dir);
            if !path.is_absolute() {
                return Err(field(
                    "capabilities.dirs",
                    format!("{dir:?} is not an absolute path (the workspace is `workspace`)"),
                ));
            }
            dirs.push(crate::sandbox::paths::normalize(path));
        }
        Ok(Manifest {
            id: raw.id,
            version: raw.version,
            kinds,
            description: raw.description,
            component: raw.component,
            requested: Requested {
                workspace: raw.capabilities.workspace,
                http,
                config: raw.capabilities.config,
                process: raw.capabilities.process,
                models: raw.capabilities.models,
                dirs,
                providers: raw.capabilities.providers,
            },
            limits: Limits {
                memory_bytes: memory_mb << 20,
                deadline_ms,
                timeout_ms,
            },
        })
    }

    /// The component file for a manifest at `manifest_path`: the `component` field, else
    /// `<stem>.wasm` beside a `<stem>.toml`.
    pub fn component_path(&self, manifest_path: &Path) -> PathBuf {
        let dir = manifest_path.parent().unwrap_or(Path::new("."));
        match &self.component {
            Some(component) => dir.join(component),
            None => manifest_path.with_extension("wasm"),
        }
    }

    /// True when the plugin targets `kind`.
    pub fn has_kind(&self, kind: Kind) -> bool {
        self.kinds.contains(&kind)
    }
}

fn location(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    format!(" (line {line})")
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && id.len() <= 64
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'))
}

fn valid_version(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn settings_override_the_limits() {
        let overrides = LimitOverrides {
            memory_mb: Some(64),
            deadline_ms: Some(30_000),
            timeout_ms: Some(0),
        };
        let limits = Limits::default().overridden(&overrides).unwrap();
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(limits.deadline_ms, 30_000);
        assert_eq!(limits.timeout_ms, None);
        let too_big = LimitOverrides {
            memory_mb: Some(1 << 20),
            ..LimitOverrides::default()
        };
        assert!(
            Limits::default()
                .overridden(&too_big)
                .unwrap_err()
                .contains("memoryMb")
        );
    }

    use super::*;

    const FULL: &str = r#"
id = "word-count"
version = "0.1.0"
kinds = ["tool"]
description = "counts"

[capabilities]
workspace = "read"
http = ["https://api.example.com/v1/"]
config = ["KEY"]
process = true

[limits]
memory-mb = 64
deadline-ms = 500
timeout-ms = 0
"#;

    #[test]
    fn parses_every_field() {
        let m = Manifest::parse(FULL).unwrap();
        assert_eq!(m.id, "word-count");
        assert_eq!(m.kinds, vec![Kind::Tool]);
        assert_eq!(m.requested.workspace, WorkspaceAccess::Read);
        assert_eq!(m.requested.http.len(), 1);
        assert_eq!(m.requested.config, vec!["KEY".to_string()]);
        assert!(m.requested.process);
        assert_eq!(
            m.limits,
            Limits {
                memory_bytes: 64 << 20,
                deadline_ms: 500,
                timeout_ms: None
            }
        );
    }

    #[test]
    fn defaults_are_deny_everything() {
        let m = Manifest::parse("id = \"a\"\nversion = \"1.0.0\"\nkind = \"skill\"\n").unwrap();
        assert_eq!(m.requested, Requested::default());
        assert_eq!(m.requested.workspace, WorkspaceAccess::None);
        assert_eq!(m.limits, Limits::default());
    }

    #[test]
    fn bad_fields_are_named() {
        let cases = [
            (
                "id = \"Bad Id\"\nversion = \"1.0.0\"\nkind = \"tool\"",
                "field `id`",
            ),
            (
                "id = \"a\"\nversion = \"one\"\nkind = \"tool\"",
                "field `version`",
            ),
            ("id = \"a\"\nversion = \"1.0.0\"", "field `kinds`"),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkinds = []",
                "field `kinds`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"gadget\"",
                "unknown variant `gadget`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"\nflavour = 1",
                "unknown field `flavour`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"\n[capabilities]\nhttp = [\"ftp://x\"]",
                "field `capabilities.http`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"\n[limits]\nmemory-mb = 0",
                "field `limits.memory-mb`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"\ncomponent = \"../x.wasm\"",
                "field `component`",
            ),
            (
                "id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"\n[capabilities]\nworkspace = \"all\"",
                "unknown variant `all`",
            ),
        ];
        for (text, expected) in cases {
            let err = Manifest::parse(text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn component_defaults_to_the_manifest_stem() {
        let m = Manifest::parse("id = \"a\"\nversion = \"1.0.0\"\nkind = \"tool\"").unwrap();
        assert_eq!(
            m.component_path(Path::new("/p/a.toml")),
            Path::new("/p/a.wasm")
        );
    }
}
