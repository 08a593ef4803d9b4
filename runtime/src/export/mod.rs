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

use std::io::Write;

use serde_json::{Value, json};

use crate::agent::conversation::messages::Messages;
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
/// folder, or `pith-session-<id>.html` there) and answers `{"path"}`. The page is written as it
/// is rendered, under the session's lock (a run goes on meanwhile, and waits for the lock only
/// to record what it adds).
pub fn export_session(session: &Session, output: Option<&str>) -> Result<Value, String> {
    session.read_record(|store, name, messages| {
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
        let target = session.cwd().join(output.unwrap_or(&default));
        write_file(&target, store, name, messages)?;
        Ok(json!({"path": output.map_or(default, str::to_string)}))
    })
}

/// Writes the page of `store` (its conversation at the leaf: `messages`) to `target`, making
/// its folder; the error names the file.
pub fn write_file<M: Messages + ?Sized>(
    target: &std::path::Path,
    store: &SessionFile,
    name: Option<&str>,
    messages: &M,
) -> Result<(), String> {
    let failed = |err: std::io::Error| format!("Cannot write {}: {err}", target.display());
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let file = std::fs::File::create(target).map_err(failed)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    write_page(&mut out, store, name, messages)
        .and_then(|()| out.flush())
        .map_err(failed)
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
fn system_of<M: Messages + ?Sized>(messages: &M) -> (Option<String>, Vec<Value>) {
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

/// A JSON text written inside the page's `<script type="application/json">`: in a script
/// element only `</script` and `<!--` matter, and no `<` at all is simplest (in JSON a `<` can
/// only be inside a string, where `\u003c` reads the same).
struct ScriptJson<'w, W: Write>(&'w mut W);

impl<W: Write> Write for ScriptJson<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|&b| b == b'<') {
            self.0.write_all(&rest[..at])?;
            self.0.write_all(b"\\u003c")?;
            rest = &rest[at + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes the session as the viewer reads it (the shape is written at the top of `session.js`):
/// every entry as its line in the file (no tree of values is built), then the leaf, the name,
/// the system prompt and tools in force.
fn write_data<W: Write, M: Messages + ?Sized>(
    out: &mut W,
    store: &SessionFile,
    name: Option<&str>,
    messages: &M,
) -> std::io::Result<()> {
    let mut out = ScriptJson(out);
    out.write_all(b"{\"header\":")?;
    serde_json::to_writer(&mut out, store.header())?;
    out.write_all(b",\"entries\":[")?;
    let lines = store.lines();
    for (at, entry) in store.all_entries().iter().enumerate() {
        if at > 0 {
            out.write_all(b",")?;
        }
        // The line as the file holds it, written from where the reading holds it.
        match lines.with_text(entry, |line| out.write_all(line.as_bytes())) {
            Some(written) => written?,
            None => serde_json::to_writer(&mut out, &lines.value(entry))?,
        }
    }
    drop(lines);
    out.write_all(b"]")?;
    let (system_prompt, tools) = system_of(messages);
    let rest = json!({
        "leafId": store.leaf_id(),
        "name": name,
        "systemPrompt": system_prompt,
        "tools": tools,
        "exportedAt": crate::time::iso(crate::time::now_millis()),
        "generator": format!("pith {}", env!("CARGO_PKG_VERSION")),
    });
    for (key, value) in rest.as_object().into_iter().flatten() {
        out.write_all(b",")?;
        serde_json::to_writer(&mut out, key)?;
        out.write_all(b":")?;
        serde_json::to_writer(&mut out, value)?;
    }
    out.write_all(b"}")
}

/// Writes the page for the session `store` at its leaf, whose conversation is `messages`.
pub fn write_page<W: Write, M: Messages + ?Sized>(
    out: &mut W,
    store: &SessionFile,
    name: Option<&str>,
    messages: &M,
) -> std::io::Result<()> {
    let title = name.map_or_else(|| format!("Session {}", store.id()), str::to_string);
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    fill(out, TEMPLATE, |key, out| match key {
        "TITLE" => out.write_all(escape(&title).as_bytes()).map(|()| true),
        "NONCE" => out.write_all(nonce.as_bytes()).map(|()| true),
        "STYLE" => out.write_all(STYLE.as_bytes()).map(|()| true),
        "SCRIPT" => out
            .write_all(SCRIPT_PARTS.join("\n").as_bytes())
            .map(|()| true),
        "DATA" => write_data(out, store, name, messages).map(|()| true),
        _ => Ok(false),
    })
}

/// Writes `template` with each `{{NAME}}` replaced in one pass by what `value` writes (a value is
/// never scanned again: the session may hold the same text); a name `value` does not know
/// (it answers `false` and writes nothing) is left as it is.
fn fill<W: Write>(
    out: &mut W,
    template: &str,
    mut value: impl FnMut(&str, &mut W) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..start])?;
        let after = &rest[start + 2..];
        let filled = match after.find("}}") {
            Some(end) => value(&after[..end], out)?.then_some(end),
            None => None,
        };
        match filled {
            Some(end) => rest = &after[end + 2..],
            None => {
                out.write_all(b"{{")?;
                rest = after;
            }
        }
    }
    out.write_all(rest.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(template: &str, value: impl Fn(&str) -> Option<String>) -> String {
        let mut out = Vec::new();
        fill(&mut out, template, |key, out| match value(key) {
            Some(text) => out.write_all(text.as_bytes()).map(|()| true),
            None => Ok(false),
        })
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn placeholders_are_filled_once_and_unknown_ones_kept() {
        let text = filled("a {{X}} b {{Y}} {{", |key| {
            (key == "X").then(|| "{{X}}".to_string())
        });
        assert_eq!(text, "a {{X}} b {{Y}} {{");
        let text = filled("<{{TITLE}}>", |_| Some("t".into()));
        assert_eq!(text, "<t>");
    }

    #[test]
    fn the_data_has_no_angle_bracket_left() {
        let mut out = Vec::new();
        ScriptJson(&mut out)
            .write_all(br#"{"a":"</script><!--<"}"#)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"{"a":"\u003c/script>\u003c!--\u003c"}"#);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["a"], "</script><!--<");
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
        let text = filled(TEMPLATE, |key| known.contains(&key).then(String::new));
        let body = text.split("-->").nth(1).unwrap_or_default();
        assert!(!body.contains("{{"), "an unfilled placeholder: {body}");
    }
}
