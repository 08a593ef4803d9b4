//! The YAML frontmatter of skill, template and rule files, read as pi reads it
//! (`utils/frontmatter.js`: a leading byte-order mark dropped, line ends made LF, the YAML
//! between a leading `---` and the next `---` line parsed as YAML). Folded (`>-`) and literal
//! (`|`) blocks, quoted strings with escapes and lists (`- a` lines or `[a, b]`) come out as
//! YAML says; scalars are kept as text (`true`, `3`). A head that is not valid YAML is read as
//! flat `key: value` lines instead, so a file pi would reject still loads what it can.

use std::collections::BTreeMap;

use yaml_rust2::{Yaml, YamlLoader};

/// A file split into its frontmatter and body (CRLF turned into LF).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The frontmatter's scalar keys, when there was frontmatter.
    pub fields: Option<BTreeMap<String, String>>,
    /// The frontmatter's list keys.
    pub lists: BTreeMap<String, Vec<String>>,
    /// The text after it.
    pub body: String,
}

impl Parsed {
    /// A scalar field's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.as_ref()?.get(key).map(String::as_str)
    }

    /// A list field's items; a scalar is read as items separated by commas (optionally in
    /// brackets, each optionally quoted).
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        if let Some(items) = self.lists.get(key) {
            return Some(items.clone());
        }
        let text = self.get(key)?;
        Some(
            text.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(|item| unquote(item.trim()).to_string())
                .filter(|item| !item.is_empty())
                .collect(),
        )
    }
}

/// Splits `text` into frontmatter and body.
pub fn parse(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let Some(rest) = text.strip_prefix("---\n") else {
        return Parsed {
            body: text,
            ..Parsed::default()
        };
    };
    let (head, body) = match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            let body = after.split_once('\n').map_or("", |(_, body)| body);
            (&rest[..end], body)
        }
        None if rest.starts_with("---") => ("", rest[3..].trim_start_matches('\n')),
        None => {
            return Parsed {
                body: text.clone(),
                ..Parsed::default()
            };
        }
    };
    let (fields, lists) = yaml_fields(head).unwrap_or_else(|| (flat_fields(head), BTreeMap::new()));
    Parsed {
        fields: Some(fields),
        lists,
        body: body.to_string(),
    }
}

/// A head's scalar keys and list keys.
type Fields = (BTreeMap<String, String>, BTreeMap<String, Vec<String>>);

/// The head as YAML: its scalar and list keys; `None` when it is not a YAML mapping.
fn yaml_fields(head: &str) -> Option<Fields> {
    let (mut fields, mut lists) = (BTreeMap::new(), BTreeMap::new());
    if head.trim().is_empty() {
        return Some((fields, lists));
    }
    let documents = YamlLoader::load_from_str(head).ok()?;
    let mapping = documents.first()?.as_hash()?;
    for (key, value) in mapping {
        let Some(key) = scalar(key) else { continue };
        match value {
            Yaml::Array(items) => {
                lists.insert(key, items.iter().filter_map(scalar).collect());
            }
            other => {
                if let Some(text) = scalar(other) {
                    fields.insert(key, text);
                }
            }
        }
    }
    Some((fields, lists))
}

/// A YAML scalar as text (`null` and collections are not scalars).
fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
        Yaml::Integer(n) => Some(n.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The head as flat `key: value` lines (for a head that is not valid YAML).
fn flat_fields(head: &str) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    for line in head.lines() {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            fields.insert(key.trim().to_string(), unquote(value.trim()).to_string());
        }
    }
    fields
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_fields_and_body() {
        let parsed = parse("---\r\nname: a\r\ndescription: \"Does b\"\r\n---\r\nBody\r\n");
        assert_eq!(parsed.get("name"), Some("a"));
        assert_eq!(parsed.get("description"), Some("Does b"));
        assert_eq!(parsed.body, "Body\n");
    }

    #[test]
    fn folded_literal_quoted_and_list_values_are_yamls() {
        let parsed = parse(
            "\u{feff}---\ndescription: >-\n  Deploy the app\n  and check it\nnotes: |\n  one\n  two\nquoted: \"tab\\there\"\nglobs:\n  - \"*.rs\"\n  - Cargo.toml\nflow: [a, 'b c']\ncount: 3\nflag: true\n---\nBody\n",
        );
        assert_eq!(
            parsed.get("description"),
            Some("Deploy the app and check it")
        );
        assert_eq!(parsed.get("notes"), Some("one\ntwo\n"));
        assert_eq!(parsed.get("quoted"), Some("tab\there"));
        assert_eq!(parsed.list("globs").unwrap(), ["*.rs", "Cargo.toml"]);
        assert_eq!(parsed.list("flow").unwrap(), ["a", "b c"]);
        assert_eq!(parsed.get("count"), Some("3"));
        assert_eq!(parsed.get("flag"), Some("true"));
        assert_eq!(parsed.body, "Body\n");
    }

    #[test]
    fn a_head_that_is_not_yaml_is_read_as_flat_lines() {
        let parsed = parse("---\nname: a\nglobs: *.rs, *.toml\n---\nBody\n");
        assert_eq!(parsed.get("name"), Some("a"));
        assert_eq!(parsed.list("globs").unwrap(), ["*.rs", "*.toml"]);
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let parsed = parse("just text\n---\n");
        assert!(parsed.fields.is_none());
        assert_eq!(parsed.body, "just text\n---\n");
    }
}
