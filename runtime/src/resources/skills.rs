//! Skills: `SKILL.md` files from pi's directories and the skills of skill-pack components;
//! their listing in the system prompt and the `/skill:name args` expansion, as pi does both
//! (pi-behaviour §14).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Location, ResourceDirs, frontmatter};
use crate::plugin_host::PluginHost;
use crate::plugin_host::manifest::Kind;
use crate::plugin_host::plugin::Plugin;

/// A skill.
#[derive(Debug, Clone)]
pub struct Skill {
    /// Its name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Hidden from the system prompt (still runnable as `/skill:name`).
    pub disable_model_invocation: bool,
    /// Its file (for a component skill, the copy pith keeps so the model can read it).
    pub path: PathBuf,
    /// Where it came from.
    pub location: Location,
    /// The skill pack it came from, for component skills.
    pub plugin: Option<Arc<Plugin>>,
}

impl Skill {
    /// The directory its relative references resolve against.
    pub fn base_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// Every skill: project directories, then the user's, then `--skill` paths, then skill packs;
/// the first of a name wins.
pub async fn discover(dirs: &ResourceDirs, host: &PluginHost) -> Vec<Skill> {
    let mut skills: Vec<Skill> = Vec::new();
    let mut seen_files: HashSet<PathBuf> = HashSet::new();
    let mut add = |skill: Skill, skills: &mut Vec<Skill>| {
        let real = skill.path.canonicalize().unwrap_or(skill.path.clone());
        if seen_files.insert(real) && !skills.iter().any(|s| s.name == skill.name) {
            skills.push(skill);
        }
    };
    if !dirs.no_skills {
        for dir in standard_dirs(dirs) {
            for file in skill_files(&dir) {
                if let Some(skill) = load_file(&file, dirs) {
                    add(skill, &mut skills);
                }
            }
        }
    }
    let named = dirs.extra_skills.iter().chain(&dirs.discovered_skills);
    for file in super::named_files(&dirs.cwd, named, skill_files) {
        if let Some(skill) = load_file(&file, dirs) {
            add(skill, &mut skills);
        }
    }
    if !dirs.no_skills {
        for skill in component_skills(dirs, host).await {
            add(skill, &mut skills);
        }
    }
    skills
}

/// pi's skill directories, project first.
fn standard_dirs(dirs: &ResourceDirs) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = dirs.project_dir("skills").into_iter().collect();
    for ancestor in dirs.cwd.ancestors().filter(|_| dirs.project_trusted) {
        list.push(ancestor.join(".agents").join("skills"));
        if ancestor.join(".git").exists() {
            break;
        }
    }
    list.push(dirs.agent_dir.join("skills"));
    if let Some(home) = std::env::var_os("HOME") {
        list.push(PathBuf::from(home).join(".agents").join("skills"));
    }
    list
}

/// The skill files of a skills directory: `*.md` at its root, and `SKILL.md` in its
/// subdirectories (a directory holding one is not searched further).
fn skill_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if skipped(&path) {
            continue;
        }
        if path.is_dir() {
            find_skill_md(&path, &mut files);
        } else if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

fn find_skill_md(dir: &Path, files: &mut Vec<PathBuf>) {
    let skill = dir.join("SKILL.md");
    if skill.is_file() {
        files.push(skill);
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !skipped(p))
        .collect();
    dirs.sort();
    for sub in dirs {
        find_skill_md(&sub, files);
    }
}

fn skipped(path: &Path) -> bool {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n.starts_with('.') || n == "node_modules")
}

fn location_of(path: &Path, dirs: &ResourceDirs) -> Location {
    if path.starts_with(dirs.agent_dir.join("skills")) {
        Location::User
    } else if path.starts_with(dirs.cwd.join(".pi").join("skills")) {
        Location::Project
    } else {
        Location::Path
    }
}

/// A skill file; `None` without a description (pi drops those). The name defaults to the
/// parent directory's.
fn load_file(path: &Path, dirs: &ResourceDirs) -> Option<Skill> {
    let text = std::fs::read_to_string(path).ok()?;
    let parsed = frontmatter::parse(&text);
    // Kept as YAML gives it (a folded block's final newline too), as pi lists it.
    let description = parsed.get("description")?.to_string();
    if description.trim().is_empty() {
        return None;
    }
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = parsed
        .get("name")
        .filter(|n| !n.is_empty())
        .map_or(parent, str::to_string);
    Some(Skill {
        name,
        description,
        disable_model_invocation: parsed.get("disable-model-invocation") == Some("true"),
        path: path.to_path_buf(),
        location: location_of(path, dirs),
        plugin: None,
    })
}

/// The skills of skill packs, each written once to `<agent dir>/plugin-skills/<id>/<name>/`
/// so the model can read it like any skill file.
async fn component_skills(dirs: &ResourceDirs, host: &PluginHost) -> Vec<Skill> {
    let mut skills = Vec::new();
    for plugin in host
        .plugins()
        .iter()
        .filter(|p| p.manifest.has_kind(Kind::Skill))
    {
        for meta in &plugin.meta.skills {
            let Ok(body) = host.load_skill(plugin, &meta.name).await else {
                continue;
            };
            let dir = dirs
                .agent_dir
                .join("plugin-skills")
                .join(&plugin.manifest.id)
                .join(&meta.name);
            let path = dir.join("SKILL.md");
            let text = format!(
                "---\nname: {}\ndescription: {}\n---\n{}\n",
                meta.name, meta.description, body
            );
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(&path, &text);
            }
            skills.push(Skill {
                name: meta.name.clone(),
                description: meta.description.clone(),
                disable_model_invocation: meta.disable_model_invocation,
                path,
                location: Location::Path,
                plugin: Some(plugin.clone()),
            });
        }
    }
    skills
}

/// How the skills block tells the model to load a skill's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillReader {
    /// pi 0.73's wording (the `read` tool).
    Legacy,
    /// pi 1.5's, with the `read` tool.
    Read,
    /// pi 1.5's, with `bash` (no `read` tool).
    Bash,
}

/// The system prompt's skills block (empty when no skill is visible to the model), worded as
/// pi's `formatSkillsForPrompt` for `reader`.
pub fn prompt_block(skills: &[Skill], reader: SkillReader) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let intro = match reader {
        SkillReader::Legacy => {
            "Use the read tool to load a skill's file when the task matches its description.\nWhen a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
        }
        SkillReader::Read => {
            "Use the read tool to load a skill's file when the task matches its description.\nResolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls."
        }
        SkillReader::Bash => {
            "Use bash to load a skill's file when the task matches its description.\nResolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls."
        }
    };
    let mut block = format!(
        "\n\nThe following skills provide specialized instructions for specific tasks.\n{intro}\n\n<available_skills>\n"
    );
    for skill in visible {
        block.push_str(&format!(
            "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    <location>{}</location>\n  </skill>\n",
            xml_escape(&skill.name),
            xml_escape(&skill.description),
            xml_escape(&skill.path.display().to_string()),
        ));
    }
    block.push_str("</available_skills>");
    block
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// Why a skill could not be expanded: the skill's file and the error.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpansionError {
    /// The skill's file.
    pub path: String,
    /// What went wrong.
    pub error: String,
}

/// Expands `/skill:name args`; `Ok(None)` when `text` is not a known skill's command (it is
/// sent as typed).
pub async fn expand(
    text: &str,
    skills: &[Skill],
    host: &PluginHost,
) -> Result<Option<String>, ExpansionError> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let fail = |error: String| ExpansionError {
        path: skill.path.display().to_string(),
        error,
    };
    let body = match &skill.plugin {
        Some(plugin) => host.load_skill(plugin, name).await.map_err(fail)?,
        None => {
            let text = std::fs::read_to_string(&skill.path).map_err(|e| fail(e.to_string()))?;
            frontmatter::parse(&text).body
        }
    };
    let mut expanded = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.path.display(),
        skill.base_dir().display(),
        body.trim()
    );
    let args = args.trim();
    if !args.is_empty() {
        expanded.push_str("\n\n");
        expanded.push_str(args);
    }
    Ok(Some(expanded))
}
