//! The YAML frontmatter of skill and template files: the `key: value` lines between a leading
//! `---` and the next `---` line (flat scalars, as pi's skills and templates use).

use std::collections::BTreeMap;

/// A file split into its frontmatter and body (CRLF turned into LF).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The frontmatter's keys, when there was frontmatter.
    pub fields: Option<BTreeMap<String, String>>,
    /// The text after it.
    pub body: String,
}

impl Parsed {
    /// A field's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.as_ref()?.get(key).map(String::as_str)
    }
}

/// Splits `text` into frontmatter and body.
pub fn parse(text: &str) -> Parsed {
    let text = text.replace("\r\n", "\n");
    let Some(rest) = text.strip_prefix("---\n") else {
        return Parsed {
            fields: None,
            body: text,
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
                fields: None,
                body: text.clone(),
            };
        }
    };
    let mut fields = BTreeMap::new();
    for line in head.lines() {
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            fields.insert(key.trim().to_string(), unquote(value.trim()).to_string());
        }
    }
    Parsed {
        fields: Some(fields),
        body: body.to_string(),
    }
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
    fn no_frontmatter_is_all_body() {
        let parsed = parse("just text\n---\n");
        assert!(parsed.fields.is_none());
        assert_eq!(parsed.body, "just text\n---\n");
    }
}
