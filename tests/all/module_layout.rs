//! pith's files import each other without a circle: every path a file of `runtime/src/` names
//! (`use`, or a `crate::`/`super::`/`self::` path in its code) is resolved to the file that
//! defines it, and the graph of those edges has no cycle. In the engine, a run depends on the
//! session's shared parts, the session's commands on the run, never each on the other; in the
//! plugin host, the files beside `host.rs` extend `PluginHost` and `host.rs` names none of them
//! (see docs/architecture.md). A `mod.rs` that re-exports its children is a file like any
//! other: a child that names an item through it depends on it. Test modules
//! (`mod tests { … }` at a file's end) and comments (a doc link is no import) are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path under the crate root (`["agent", "session", "shared"]`).
type Module = Vec<String>;

/// Every `.rs` file under `dir`, with its module path.
fn modules(src: &Path, dir: &Path, found: &mut BTreeMap<Module, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            modules(src, &path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path
                .strip_prefix(src)
                .expect("under src")
                .with_extension("");
            let mut module: Module = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            found.insert(module, path);
        }
    }
}

/// The file's code without its trailing test module and its comment lines.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file reads");
    let tests = regex::Regex::new(r"#\[cfg\(test\)\]\s*mod tests\s*\{").expect("valid");
    let code = match tests.find(&text) {
        Some(found) => &text[..found.start()],
        None => &text,
    };
    let comments = regex::Regex::new(r"(?m)^\s*//.*$").expect("valid");
    comments.replace_all(code, "").into_owned()
}

/// The modules a file names.
fn imports(module: &Module, code: &str, known: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let mut found = BTreeSet::new();
    let path = regex::Regex::new(
        r"\b(crate|super|self)((?:::(?:super|[A-Za-z_]\w*))*)(?:::\{([^}]*)\}|::\*)?",
    )
    .expect("valid");
    let child_use =
        regex::Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([a-z_]\w*)::").expect("valid");
    for named in child_use.captures_iter(code) {
        let mut child = module.clone();
        child.push(named[1].to_string());
        if known.contains_key(&child) {
            found.insert(child);
        }
    }
    for named in path.captures_iter(code) {
        let whole = named.get(0).expect("a match");
        let before = &code[..whole.start()];
        if before.ends_with("pub(") || before.ends_with("pub(in ") {
            continue;
        }
        let head = &named[1];
        let segments: Vec<&str> = named[2].split("::").filter(|s| !s.is_empty()).collect();
        if segments.is_empty() && head != "super" {
            continue;
        }
        let mut targets: Vec<Vec<&str>> = Vec::new();
        match named.get(3) {
            Some(group) => {
                for item in group.as_str().split(',') {
                    let item = item.split(" as ").next().unwrap_or("").trim();
                    if !item.is_empty() {
                        let mut target = segments.clone();
                        target.extend(item.split("::"));
                        targets.push(target);
                    }
                }
            }
            None => targets.push(segments.clone()),
        }
        for target in targets {
            let mut base: Module = match head {
                "crate" => Vec::new(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.clone(),
            };
            let mut rest = target.as_slice();
            while let Some((&"super", tail)) = rest.split_first() {
                base.pop();
                rest = tail;
            }
            // The longest prefix that is a file.
            let mut resolved = None;
            for take in 0..=rest.len() {
                let mut candidate = base.clone();
                candidate.extend(rest[..take].iter().map(|s| s.to_string()));
                if known.contains_key(&candidate) {
                    resolved = Some(candidate);
                }
            }
            if let Some(resolved) = resolved
                && resolved != *module
            {
                found.insert(resolved);
            }
        }
    }
    found
}

/// The cycles of the graph (its strongly connected parts of more than one module).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    // Kosaraju: finish order on the graph, then components on the reversed graph.
    fn finish(
        at: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        seen: &mut BTreeSet<Module>,
        order: &mut Vec<Module>,
    ) {
        if !seen.insert(at.clone()) {
            return;
        }
        for next in edges.get(at).into_iter().flatten() {
            finish(next, edges, seen, order);
        }
        order.push(at.clone());
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for module in edges.keys() {
        finish(module, edges, &mut seen, &mut order);
    }
    let mut reversed: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, tos) in edges {
        for to in tos {
            reversed.entry(to.clone()).or_default().insert(from.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut found = Vec::new();
    for module in order.iter().rev() {
        let mut component = Vec::new();
        finish(module, &reversed, &mut assigned, &mut component);
        if component.len() > 1 {
            found.push(component);
        }
    }
    found
}

#[test]
fn no_file_is_in_an_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut known = BTreeMap::new();
    modules(&src, &src, &mut known);
    let in_folder = |folder: &str| {
        known
            .keys()
            .filter(|module| module.first().is_some_and(|first| first == folder))
            .count()
    };
    assert!(
        in_folder("agent") > 40 && in_folder("plugin_host") > 30,
        "the engine's and the plugin host's files are found: {}, {}",
        in_folder("agent"),
        in_folder("plugin_host")
    );
    let edges: BTreeMap<Module, BTreeSet<Module>> = known
        .iter()
        .map(|(module, path)| (module.clone(), imports(module, &code_of(path), &known)))
        .collect();
    let module = |name: &str| -> Module { name.split('/').map(str::to_string).collect() };
    // The graph is read at all: the loop names the session's shared parts, and the plugin host's
    // registration names the host.
    assert!(edges[&module("agent/run/agent_loop")].contains(&module("agent/session/shared")));
    assert!(edges[&module("plugin_host/register")].contains(&module("plugin_host/host")));
    let found = cycles(&edges);
    let named: Vec<String> = found
        .iter()
        .map(|cycle| {
            cycle
                .iter()
                .map(|module| module.join("/"))
                .collect::<Vec<_>>()
                .join(" ↔ ")
        })
        .collect();
    assert!(named.is_empty(), "import circles: {named:#?}");
}

#[test]
fn a_circle_is_found() {
    let module = |name: &str| -> Module { name.split('/').map(str::to_string).collect() };
    let mut known = BTreeMap::new();
    for name in ["agent/a", "agent/b", "agent/c"] {
        known.insert(module(name), PathBuf::new());
    }
    let edges: BTreeMap<Module, BTreeSet<Module>> = [
        (
            "agent/a",
            imports(&module("agent/a"), "use crate::agent::b::Thing;", &known),
        ),
        (
            "agent/b",
            imports(&module("agent/b"), "use super::{a::Other, c};", &known),
        ),
        (
            "agent/c",
            imports(&module("agent/c"), "pub(super) fn f() {}", &known),
        ),
    ]
    .into_iter()
    .map(|(name, to)| (module(name), to))
    .collect();
    assert!(
        edges[&module("agent/c")].is_empty(),
        "`pub(super)` is no path"
    );
    assert_eq!(edges[&module("agent/b")].len(), 2);
    let found = cycles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    let mut cycle = found[0].clone();
    cycle.sort();
    assert_eq!(cycle, vec![module("agent/a"), module("agent/b")]);
}
