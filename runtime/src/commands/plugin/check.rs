//! `pith plugin check <path>`: loads one plugin beside the others, as a session would, without
//! starting one, and reports: the manifest's problems, whether pith refused it and why (with
//! the fix for imports pith cannot satisfy), the worlds it implements and what it imports, what
//! it offers, tool names it shares with other plugins (and which one wins), and what the user
//! must grant it.

use std::path::Path;
use std::process::ExitCode;

use crate::plugin_host::grants::WorkspaceAccess;
use crate::plugin_host::manifest::{Kind, Manifest};
use crate::plugin_host::{LoadError, PluginHost};

fn world_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Tool => "tool-plugin",
        Kind::Provider => "provider-plugin",
        Kind::Extension => "extension-plugin",
        Kind::Skill => "skill-plugin",
        Kind::PromptTemplate => "prompt-template-plugin",
        Kind::ScriptEngine => "script-engine-plugin",
    }
}

/// Prints the report; exit 1 when the plugin is refused or its manifest is wrong.
pub async fn report(host: &PluginHost, errors: &[LoadError], path: &Path) -> ExitCode {
    let manifest_path = crate::plugin_host::discovery::explicit_manifest(path);
    let manifest = match std::fs::read_to_string(&manifest_path)
        .map_err(|err| err.to_string())
        .and_then(|text| Manifest::parse(&text).map_err(|err| err.to_string()))
    {
        Ok(manifest) => manifest,
        Err(err) => {
            eprintln!("✗ manifest {}: {err}", manifest_path.display());
            return ExitCode::FAILURE;
        }
    };
    println!(
        "plugin {} {} ({})",
        manifest.id,
        manifest.version,
        manifest_path.display()
    );
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    // The files the loader reads for it: the manifest, and the component it resolves.
    let component = match (&manifest.component, manifest_path.parent()) {
        (None, Some(dir)) if manifest_path.ends_with("pith.toml") => {
            crate::plugin_host::discovery::sole_component(dir).unwrap_or_default()
        }
        _ => manifest.component_path(&manifest_path),
    };
    let ours = [canonical(&manifest_path), canonical(&component)];
    let refused: Vec<&LoadError> = errors
        .iter()
        .filter(|e| ours.contains(&canonical(Path::new(&e.path))))
        .collect();
    if !refused.is_empty() {
        // The reasons carry their fixes (an import pith refuses names what to do instead).
        for error in refused {
            eprintln!("✗ refused: {}", error.reason);
        }
        return ExitCode::FAILURE;
    }
    let plugins = host.plugins();
    let Some(plugin) = plugins.iter().find(|p| p.manifest.id == manifest.id) else {
        eprintln!(
            "✗ {} did not load: it is disabled in the settings (plugins.{}.enabled), or another \
             plugin with the id {:?} was loaded in its place (`pith plugins` lists them)",
            path.display(),
            manifest.id,
            manifest.id
        );
        return ExitCode::FAILURE;
    };
    let mut problems = 0;
    match host.loaded(plugin).await {
        Ok(loaded) => {
            let kinds: Vec<String> = plugin
                .manifest
                .kinds
                .iter()
                .map(|k| format!("{k} (world {})", world_of(*k)))
                .collect();
            println!("✓ implements {}", kinds.join(", "));
            let Some(engine) = host.engine() else {
                eprintln!("✗ the WebAssembly engine did not start");
                return ExitCode::FAILURE;
            };
            let mut imports: Vec<String> = loaded
                .component
                .component_type()
                .imports(engine)
                .map(|(name, _)| name.to_string())
                .collect();
            imports.sort();
            println!("  imports: {}", imports.join(", "));
        }
        Err(err) => {
            eprintln!("✗ {err}");
            return ExitCode::FAILURE;
        }
    }
    let meta = &plugin.meta;
    let offers: Vec<String> = meta
        .tools
        .iter()
        .map(|t| format!("tool {}", t.name))
        .chain(
            meta.extension
                .iter()
                .flat_map(|e| e.tools.iter().map(|t| format!("tool {}", t.name))),
        )
        .chain(
            meta.extension
                .iter()
                .flat_map(|e| e.commands.iter().map(|c| format!("command /{}", c.name))),
        )
        .chain(meta.extension.iter().flat_map(|e| {
            e.flags.iter().map(|f| match f.kind {
                crate::plugin_host::resources::FlagKind::Boolean => format!("flag --{}", f.name),
                crate::plugin_host::resources::FlagKind::Text => {
                    format!("flag --{} <value>", f.name)
                }
            })
        }))
        .chain(meta.extension.iter().flat_map(|e| {
            e.virtual_models
                .iter()
                .map(|m| format!("virtual model {}/{}", m.provider, m.id))
        }))
        .chain(meta.extension.iter().flat_map(|e| {
            e.providers.iter().flat_map(|p| {
                std::iter::once(format!("provider {}", p.name)).chain(
                    p.config
                        .models
                        .iter()
                        .map(move |m| format!("model {}/{}", p.name, m.id)),
                )
            })
        }))
        .chain(
            meta.provider
                .iter()
                .flat_map(|p| p.apis.iter().map(|api| format!("api {api}"))),
        )
        .chain(meta.skills.iter().map(|s| format!("skill {}", s.name)))
        .chain(
            meta.templates
                .iter()
                .map(|t| format!("template /{}", t.name)),
        )
        .chain(meta.provider.iter().flat_map(|p| {
            p.models
                .iter()
                .map(|m| format!("model {}/{}", m.provider, m.id))
        }))
        .collect();
    println!(
        "  offers: {}",
        if offers.is_empty() {
            "nothing".into()
        } else {
            offers.join(", ")
        }
    );
    let winners = host.tools();
    for tool in &meta.tools {
        let others: Vec<&str> = plugins
            .iter()
            .filter(|p| p.manifest.id != plugin.manifest.id)
            .filter(|p| p.meta.tools.iter().any(|t| t.name == tool.name))
            .map(|p| p.manifest.id.as_str())
            .collect();
        if others.is_empty() {
            continue;
        }
        problems += 1;
        let winner = winners
            .iter()
            .find(|(spec, _)| spec.name == tool.name)
            .map(|(_, p)| p.manifest.id.clone())
            .unwrap_or_default();
        println!(
            "! the tool {} is also exported by {}: {winner} wins (the plugin loaded last: \
             agent plugins, then the project's, then --plugins-dir, then -e); rename one",
            tool.name,
            others.join(", ")
        );
    }
    if let Some(extension) = &meta.extension {
        problems += extension_report(plugin, &plugins, &winners, extension);
    }
    grants(plugin);
    if problems > 0 {
        println!("{problems} warning(s)");
    }
    ExitCode::SUCCESS
}

/// An extension's events (those pith does not know, never delivered), and its tools that share
/// a name with a built-in or plugin tool (the extension's replaces it) or with an extension
/// loaded before it (whose tool is kept, as pi keeps the first registered); returns the number of
/// warnings.
fn extension_report(
    plugin: &crate::plugin_host::plugin::Plugin,
    plugins: &[std::sync::Arc<crate::plugin_host::plugin::Plugin>],
    tools: &[(
        crate::plugin_host::tool::ToolSpec,
        std::sync::Arc<crate::plugin_host::plugin::Plugin>,
    )],
    extension: &crate::plugin_host::resources::ExtensionMeta,
) -> usize {
    let mut warnings = 0;
    println!(
        "  events: {}",
        if extension.events.is_empty() {
            "none".into()
        } else {
            extension.events.join(", ")
        }
    );
    for unknown in &extension.unknown_events {
        warnings += 1;
        println!(
            "! the event {unknown} is not one pith knows (a typo?): it is never delivered;              `pith docs plugins` lists the events"
        );
    }
    // The extension loaded before this one that `registers` something too.
    let loaded_before =
        |registers: &dyn Fn(&crate::plugin_host::resources::ExtensionMeta) -> bool| {
            plugins
                .iter()
                .take_while(|p| p.manifest.id != plugin.manifest.id)
                .find(|p| p.meta.extension.as_ref().is_some_and(registers))
                .cloned()
        };
    for flag in &extension.flags {
        if let Some(first) = loaded_before(&|e| e.flags.iter().any(|f| f.name == flag.name)) {
            println!(
                "  note: the flag --{} is also registered by the extension {}, loaded first: \
                 both see one value, and its default wins (as in pi)",
                flag.name, first.manifest.id
            );
        }
    }
    for tool in &extension.tools {
        if let Some((_, owner)) = tools.iter().find(|(spec, _)| spec.name == tool.name) {
            println!(
                "  note: the tool {} replaces {}'s tool of that name in every session (an                  extension's tool wins over a built-in, as in pi)",
                tool.name, owner.manifest.id
            );
        }
        if let Some(first) = loaded_before(&|e| e.tools.iter().any(|t| t.name == tool.name)) {
            warnings += 1;
            println!(
                "! the tool {} is also registered by the extension {}, loaded first, whose tool                  is used (the first registered wins, as in pi); rename one",
                tool.name, first.manifest.id
            );
        }
    }
    warnings
}

/// What the manifest asks for, what the user's settings grant now, and how to grant the rest.
fn grants(plugin: &crate::plugin_host::plugin::Plugin) {
    let asked = &plugin.manifest.requested;
    let has = &plugin.capabilities;
    let (mut missing, mut http, mut config) = (Vec::<String>::new(), Vec::new(), Vec::new());
    let access = |a: WorkspaceAccess| match a {
        WorkspaceAccess::None => "none",
        WorkspaceAccess::Read => "read",
        WorkspaceAccess::Write => "write",
    };
    println!(
        "  workspace: asks {}, has {}",
        access(asked.workspace),
        access(has.workspace)
    );
    if asked.workspace == WorkspaceAccess::None && plugin.manifest.has_kind(Kind::Tool) {
        println!(
            "  note: no workspace: the tool cannot read files (add workspace = \"read\" under \
             [capabilities] if it should)"
        );
    }
    for prefix in &asked.http {
        let granted = has.http.iter().any(|p| p.as_str() == prefix.as_str());
        println!(
            "  http {}: {}",
            prefix.as_str(),
            if granted { "granted" } else { "not granted" }
        );
        if !granted {
            http.push(format!("{:?}", prefix.as_str()));
        }
    }
    for key in &asked.config {
        let granted = has.config.contains(key);
        println!(
            "  config {key}: {}",
            if granted { "granted" } else { "not granted" }
        );
        if !granted {
            config.push(format!("{key:?}"));
        }
    }
    if asked.process {
        println!(
            "  process: {}",
            if has.process {
                "granted"
            } else {
                "not granted"
            }
        );
        if !has.process {
            missing.push("\"process\": true".to_string());
        }
    }
    if asked.models {
        println!(
            "  models: {}",
            if has.models { "granted" } else { "not granted" }
        );
        if !has.models {
            missing.push("\"models\": true".to_string());
        }
    }
    let mut dirs = Vec::new();
    for dir in &asked.dirs {
        let granted = has.dirs.contains(dir);
        println!(
            "  folder {} (outside the workspace): {}",
            dir.display(),
            if granted { "granted" } else { "not granted" }
        );
        if !granted {
            dirs.push(format!("{:?}", dir.display().to_string()));
        }
    }
    if !dirs.is_empty() {
        missing.push(format!("\"dirs\": [{}]", dirs.join(", ")));
    }
    if !http.is_empty() {
        missing.push(format!("\"http\": [{}]", http.join(", ")));
    }
    if !config.is_empty() {
        missing.push(format!("\"config\": [{}]", config.join(", ")));
    }
    if !missing.is_empty() {
        println!(
            "  to grant what it asks, add to the settings (~/.pith/agent/settings.json): \
             {{\"plugins\": {{\"{}\": {{\"grant\": {{{}}}}}}}}}",
            plugin.manifest.id,
            missing.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::plugin_host::import_fix;

    #[test]
    fn a_refused_import_names_its_fix_and_a_wrong_world_does_not() {
        let http = import_fix(
            "imports something pith does not provide: component imports instance \
             `wasi:http/types@0.2.10`, but a matching implementation was not found in the linker",
        );
        assert!(http.unwrap().contains("--disable http fetch-event"));
        let newer = import_fix(
            "imports something pith does not provide: component imports instance \
             `pith:plugin/host@0.2.0`",
        );
        assert!(newer.unwrap().contains("pith plugin wit"));
        let world = import_fix(
            "does not implement the provider world: no exported instance named \
             `pith:plugin/provider@0.1.0`",
        );
        assert_eq!(world, None);
    }
}
