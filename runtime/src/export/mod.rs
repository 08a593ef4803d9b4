//! The session viewer: `export_html` and `pith export` write one self-contained HTML page
//! holding the whole session (every entry of every branch) as JSON, and a script that builds
//! the page from it in the browser: the tree with search and filters, the selected branch with
//! markdown, highlighted code, diffs and images, the header figures, the system prompt and
//! tools, a per-turn timeline, deep links (`#entry-<id>`) and a JSONL download.
//!
//! Safe by construction: the session reaches the page only as JSON inside a
//! `<script type="application/json">` (every `<` escaped, so it cannot close the element), the
//! script puts its text into the DOM as text, and the page's Content-Security-Policy allows no
//! request at all and no script but its own (a nonce fresh per page).

use serde_json::{Value, json};

use crate::agent::conversation::message::AgentMessage;
use crate::agent::session::Session;
use crate::agent::session::file::SessionFile;

/// The page, with `{{NAME}}` placeholders (listed at its top).
const TEMPLATE: &str = include_str!("viewer.html");
/// Its style sheet (light and dark themes).
const STYLE: &str = include_str!("viewer.css");
/// Its script, in parts joined by "\n" in this order into the page's one script element:
/// `markdown.js` and `session.js` each define one `const` (`pithMarkdown`, `pithSession`) that the
/// later parts read; `viewer.js` builds the page.
const SCRIPT_PARTS: [&str; 3] = [
    include_str!("markdown.js"),
    include_str!("session.js"),
    include_str!("viewer.js"),
];

/// `export_html`: writes the open session as one page (to `output`, relative to the session's
/// folder, or `pith-session-<id>.html` there) and answers `{"path"}`.
pub fn export_session(session: &Session, output: Option<&str>) -> Result<Value, String> {
    // Rendered under the session's lock, written after it.
    let (html, default) = session.read_record(|store, name, messages| {
        let Some(file) = store.path() else {
            return Err("Cannot export in-memory session to HTML".to_string());
        };
        if !store.is_written() {
            return Err("Nothing to export yet - start a conversation first".to_string());
        }
        let default = format!(
            "pith-session-{}.html",
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        Ok((render(store, name, messages), default))
    })?;
    let target = session.cwd().join(output.unwrap_or(&default));
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
    }
    std::fs::write(&target, html)
        .map_err(|err| format!("Cannot write {}: {err}", target.display()))?;
    Ok(json!({"path": output.map_or(default, str::to_string)}))
}

/// Escapes text for HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// The system prompt and the tools the conversation's `system` messages leave in force
/// (replayed in order).
fn system_of(messages: &[AgentMessage]) -> (Option<String>, Vec<Value>) {
    let Some(in_force) = crate::agent::conversation::system_record::InForce::replay(messages)
    else {
        return (None, Vec::new());
    };
    let tools = in_force
        .tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            })
        })
        .collect();
    (Some(in_force.sections.prompt()), tools)
}

/// The session as the viewer reads it (the shape is written at the top of `session.js`).
fn data(store: &SessionFile, name: Option<&str>, messages: &[AgentMessage]) -> Value {
    let (system_prompt, tools) = system_of(messages);
    json!({
        "header": store.header(),
        "entries": store.entries_since(None).unwrap_or_default(),
        "leafId": store.leaf_id(),
        "name": name,
        "systemPrompt": system_prompt,
        "tools": tools,
        "exportedAt": crate::time::iso(crate::time::now_millis()),
        "generator": format!("pith {}", env!("CARGO_PKG_VERSION")),
    })
}

/// Renders the page for the session `store` at its leaf, whose conversation is `messages`.
pub fn render(store: &SessionFile, name: Option<&str>, messages: &[AgentMessage]) -> String {
    let title = name.map_or_else(|| format!("Session {}", store.id()), str::to_string);
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    // In a script element only `</script` and `<!--` matter; no `<` at all is simplest.
    let data = data(store, name, messages)
        .to_string()
        .replace('<', "\\u003c");
    fill(TEMPLATE, |key| match key {
        "TITLE" => Some(escape(&title)),
        "NONCE" => Some(nonce.clone()),
        "STYLE" => Some(STYLE.to_string()),
        "SCRIPT" => Some(SCRIPT_PARTS.join("\n")),
        "DATA" => Some(data.clone()),
        _ => None,
    })
}

/// Replaces each `{{NAME}}` of `template` in one pass (a value is never scanned again: the
/// session may hold the same text); an unknown name is left as it is.
fn fill(template: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after
            .find("}}")
            .and_then(|end| value(&after[..end]).map(|v| (end, v)))
        {
            Some((end, filled)) => {
                out.push_str(&filled);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_once_and_unknown_ones_kept() {
        let filled = fill("a {{X}} b {{Y}} {{", |key| {
            (key == "X").then(|| "{{X}}".to_string())
        });
        assert_eq!(filled, "a {{X}} b {{Y}} {{");
        let filled = fill("<{{TITLE}}>", |_| Some("t".into()));
        assert_eq!(filled, "<t>");
    }

    #[test]
    fn the_inlined_assets_cannot_end_their_elements() {
        let script = SCRIPT_PARTS.join("\n").to_ascii_lowercase();
        assert!(!script.contains("</script") && !script.contains("<!--"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
    }

    #[test]
    fn the_template_names_only_known_placeholders() {
        let known = ["TITLE", "NONCE", "STYLE", "SCRIPT", "DATA"];
        let filled = fill(TEMPLATE, |key| known.contains(&key).then(String::new));
        let body = filled.split("-->").nth(1).unwrap_or_default();
        assert!(!body.contains("{{"), "an unfilled placeholder: {body}");
    }
}
