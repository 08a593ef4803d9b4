//! Skills and prompt templates from both sources: plain files in pi's directories and
//! skill / prompt-template components; and the expansion of `/skill:name` and `/name` prompts.

pub mod context_files;
pub mod frontmatter;
pub mod rules;
pub mod skills;
pub mod templates;

use std::path::{Path, PathBuf};

/// Where skill and template files are looked for.
#[derive(Debug, Clone, Default)]
pub struct ResourceDirs {
    /// The working directory.
    pub cwd: PathBuf,
    /// The agent directory.
    pub agent_dir: PathBuf,
    /// `--skill` paths.
    pub extra_skills: Vec<PathBuf>,
    /// `--prompt-template` paths.
    pub extra_templates: Vec<PathBuf>,
    /// Skill paths the extensions added (`resources_discover`), absolute.
    pub discovered_skills: Vec<PathBuf>,
    /// Prompt-template paths the extensions added (`resources_discover`), absolute.
    pub discovered_templates: Vec<PathBuf>,
    /// `--no-skills`: only `--skill` paths.
    pub no_skills: bool,
    /// `--no-prompt-templates`: only `--prompt-template` paths.
    pub no_templates: bool,
    /// Whether the project's own resources (`.pi/skills`, `.agents/skills`, `.pi/prompts`,
    /// `.pi/rules`) load: only when the project is trusted (`--approve`), as in pi 1.5.
    pub project_trusted: bool,
    /// `enableSkillCommands: false`: skills are not `/skill:name` commands (the model still
    /// sees and loads them).
    pub no_skill_commands: bool,
}

impl ResourceDirs {
    /// The project's `.pi/<name>` directory, when the project is trusted.
    pub fn project_dir(&self, name: &str) -> Option<PathBuf> {
        self.project_trusted
            .then(|| self.cwd.join(".pi").join(name))
    }
}

/// The project's own configuration that exists in `cwd` (`.pith/plugins`,
/// `.pith/settings.json`, `.pi/skills`, `.pi/prompts`, `.pi/rules`), each named for a message
/// with its path.
pub fn project_files(cwd: &Path) -> Vec<&'static str> {
    [
        (".pith/plugins", "plugins (.pith/plugins)"),
        (".pith/settings.json", "settings (.pith/settings.json)"),
        (".pi/skills", "skills (.pi/skills)"),
        (".pi/prompts", "prompt templates (.pi/prompts)"),
        (".pi/rules", "rules (.pi/rules)"),
    ]
    .into_iter()
    .filter(|(path, _)| cwd.join(path).exists())
    .map(|(_, name)| name)
    .collect()
}

/// Where a file resource came from, as pi labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The agent directory.
    User,
    /// The project's `.pi/` directory.
    Project,
    /// Anywhere else.
    Path,
}

impl Location {
    /// pi's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::User => "user",
            Location::Project => "project",
            Location::Path => "path",
        }
    }
}

/// The skills and templates of a session.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    /// Where they were found.
    pub dirs: ResourceDirs,
    /// The skills.
    pub skills: Vec<skills::Skill>,
    /// The templates.
    pub templates: Vec<templates::Template>,
    /// The streamed rules.
    pub rules: Vec<rules::Rule>,
}

impl Resources {
    /// The skills' directories (granted read-only to tools, so the model can load a skill and
    /// the files it references).
    pub fn skill_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for skill in &self.skills {
            let dir = skill.base_dir().to_path_buf();
            if !dirs.iter().any(|d| dir.starts_with(d)) {
                dirs.retain(|d| !d.starts_with(&dir));
                dirs.push(dir);
            }
        }
        dirs
    }

    /// Finds the skills and templates of `dirs` and of `host`'s packs.
    pub async fn load(dirs: ResourceDirs, host: &crate::plugin_host::PluginHost) -> Resources {
        let skills = skills::discover(&dirs, host).await;
        let templates = templates::discover(&dirs, host);
        let rules = rules::discover(&dirs, host);
        Resources {
            dirs,
            skills,
            templates,
            rules,
        }
    }
}

/// The files named on the command line (`--skill`, `--prompt-template`): each path, relative to
/// `cwd`, is a file, or a directory whose files `list` finds.
pub(crate) fn named_files<'a>(
    cwd: &Path,
    paths: impl IntoIterator<Item = &'a PathBuf>,
    list: impl Fn(&Path) -> Vec<PathBuf>,
) -> Vec<PathBuf> {
    paths
        .into_iter()
        .map(|path| cwd.join(path))
        .flat_map(|path| {
            if path.is_dir() {
                list(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}
