//! Prompt templates: `*.md` files from pi's directories and the templates of prompt-template
//! components; `/name args` expands with pi's argument rules (pi-behaviour §15).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Location, ResourceDirs, frontmatter};
use crate::plugin_host::PluginHost;
use crate::plugin_host::manifest::Kind;
use crate::plugin_host::plugin::Plugin;

/// A prompt template.
#[derive(Debug, Clone)]
pub struct Template {
    /// Its name, run as `/name`.
    pub name: String,
    /// Its description, as pi lists it (where it came from is in `location` and `sourceInfo`).
    pub description: String,
    /// Its file, or the plugin's manifest.
    pub path: String,
    /// Where it came from.
    pub location: Location,
    /// The text of a file template.
    content: Option<String>,
    /// The pack it came from, for component templates.
    plugin: Option<Arc<Plugin>>,
}

/// Every template: the user's, the project's, `--prompt-template` paths, then template packs;
/// the first of a name wins.
pub fn discover(dirs: &ResourceDirs, host: &PluginHost) -> Vec<Template> {
    let mut templates: Vec<Template> = Vec::new();
    let add = |template: Template, templates: &mut Vec<Template>| {
        if !templates.iter().any(|t| t.name == template.name) {
            templates.push(template);
        }
    };
    if !dirs.no_templates {
        let project = dirs
            .project_dir("prompts")
            .map(|dir| (dir, Location::Project));
        for (dir, location) in
            std::iter::once((dirs.agent_dir.join("prompts"), Location::User)).chain(project)
        {
            for file in md_files(&dir) {
                if let Some(template) = load_file(&file, location) {
                    add(template, &mut templates);
                }
            }
        }
    }
    let named = dirs
        .extra_templates
        .iter()
        .chain(&dirs.discovered_templates);
    for file in super::named_files(&dirs.cwd, named, md_files) {
        if let Some(template) = load_file(&file, Location::Path) {
            add(template, &mut templates);
        }
    }
    if !dirs.no_templates {
        for plugin in host
            .plugins()
            .iter()
            .filter(|p| p.manifest.has_kind(Kind::PromptTemplate))
        {
            for meta in &plugin.meta.templates {
                add(
                    Template {
                        name: meta.name.clone(),
                        description: meta.description.clone(),
                        path: plugin.path.clone(),
                        location: Location::Path,
                        content: None,
                        plugin: Some(plugin.clone()),
                    },
                    &mut templates,
                );
            }
        }
    }
    templates
}

fn md_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

fn load_file(path: &Path, location: Location) -> Option<Template> {
    let text = std::fs::read_to_string(path).ok()?;
    let parsed = frontmatter::parse(&text);
    let content = if parsed.fields.is_some() {
        parsed.body.trim().to_string()
    } else {
        parsed.body.clone()
    };
    let description = match parsed.get("description").filter(|d| !d.is_empty()) {
        Some(description) => description.to_string(),
        None => {
            let first = content
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("");
            if first.chars().count() > 60 {
                format!("{}...", first.chars().take(60).collect::<String>())
            } else {
                first.to_string()
            }
        }
    };
    Some(Template {
        name: path.file_stem()?.to_string_lossy().into_owned(),
        description,
        path: path.display().to_string(),
        location,
        content: Some(content),
        plugin: None,
    })
}

/// Expands `/name args` when `name` is a template; `Ok(None)` otherwise. A pack's failure is
/// `Err` with its message.
pub async fn expand(
    text: &str,
    templates: &[Template],
    host: &PluginHost,
) -> Result<Option<String>, String> {
    let Some(rest) = text.strip_prefix('/') else {
        return Ok(None);
    };
    let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
    let Some(template) = templates.iter().find(|t| t.name == name) else {
        return Ok(None);
    };
    let args = split_args(args);
    match (&template.content, &template.plugin) {
        (Some(content), _) => Ok(Some(substitute(content, &args))),
        (None, Some(plugin)) => host.expand_template(plugin, name, args).await.map(Some),
        (None, None) => Ok(None),
    }
}

/// Splits arguments as pi does: `'…'` and `"…"` group (no escapes), spaces and tabs separate.
pub fn split_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                started = true;
            }
            None if c == ' ' || c == '\t' => {
                if started || !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => current.push(c),
        }
    }
    if started || !current.is_empty() {
        args.push(current);
    }
    args
}

/// Substitutes `$1`…`$N`, `${@:N}`, `${@:N:L}`, `$ARGUMENTS` and `$@` in one pass (values are
/// never substituted again).
pub fn substitute(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let index: usize = tail[..digits].parse().unwrap_or(0);
            if let Some(value) = index.checked_sub(1).and_then(|i| args.get(i)) {
                out.push_str(value);
            }
            rest = &tail[digits..];
        } else if let Some((value, used)) = slice_form(tail, args) {
            out.push_str(&value);
            rest = &tail[used..];
        } else if let Some(after) = tail.strip_prefix("ARGUMENTS") {
            out.push_str(&all);
            rest = after;
        } else if let Some(after) = tail.strip_prefix('@') {
            out.push_str(&all);
            rest = after;
        } else {
            out.push('$');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// `{@:N}` or `{@:N:L}` at the start of `tail`: the joined slice and the bytes used.
fn slice_form(tail: &str, args: &[String]) -> Option<(String, usize)> {
    let inner = tail.strip_prefix("{@:")?;
    let end = inner.find('}')?;
    let mut parts = inner[..end].split(':');
    let start: usize = parts.next()?.parse().ok()?;
    let length: Option<usize> = match parts.next() {
        Some(l) => Some(l.parse().ok()?),
        None => None,
    };
    if parts.next().is_some() {
        return None;
    }
    let from = start.max(1) - 1;
    let slice: Vec<&str> = args
        .iter()
        .skip(from)
        .take(length.unwrap_or(usize::MAX))
        .map(String::as_str)
        .collect();
    Some((slice.join(" "), 3 + end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splits_like_pi() {
        assert_eq!(
            split_args("a 'b c'  \"d e\"\tf"),
            args(&["a", "b c", "d e", "f"])
        );
        assert_eq!(split_args("''"), args(&[""]));
        assert!(split_args("  ").is_empty());
    }

    #[test]
    fn substitutes_in_pi_order_without_recursion() {
        let a = args(&["x", "$ARGUMENTS", "z"]);
        assert_eq!(substitute("$1-$2-$3-$4", &a), "x-$ARGUMENTS-z-");
        assert_eq!(substitute("${@:2}", &a), "$ARGUMENTS z");
        assert_eq!(substitute("${@:0:1}|${@:3:5}", &a), "x|z");
        assert_eq!(
            substitute("[$@] [$ARGUMENTS] $x", &a),
            "[x $ARGUMENTS z] [x $ARGUMENTS z] $x"
        );
        assert_eq!(substitute("cost $", &a), "cost $");
    }
}
