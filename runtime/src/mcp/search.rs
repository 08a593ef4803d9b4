//! `tool_search`'s ranking, as pi 1.5.2's `Bm25Ranker`: BM25 over each tool's description,
//! its schema's descriptions and property names, with a boost for terms of the tool's name and
//! a smaller one for its server's; an exact name match first, then the tools covering more of
//! the query, then the score.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

/// A tool as the search sees it.
pub struct Document {
    /// The name the model calls.
    pub name: String,
    /// Its description and schema text.
    pub text: String,
    /// Its server's namespace, description and instructions.
    pub namespace: String,
}

fn stem(word: String) -> String {
    if !word.is_ascii() {
        return word;
    }
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..n - 3]);
    }
    if n > 4
        && ["ches", "shes", "sses", "xes", "zes"]
            .iter()
            .any(|s| word.ends_with(s))
    {
        return word[..n - 2].to_string();
    }
    if n > 3 && word.ends_with('s') && !word.ends_with("ss") {
        return word[..n - 1].to_string();
    }
    word
}

/// pi's tokens: camelCase split, lowercased, split on anything but letters and digits, stop
/// words dropped, plain English plurals stemmed.
pub fn tokens(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                spaced.push(' ');
            }
        }
        spaced.push(c);
    }
    spaced
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| stem(w.to_string()))
        .collect()
}

/// The text of a schema: its descriptions and property names, nested ones included.
pub fn schema_text(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(d)) = map.get("description")
                && !d.trim().is_empty()
            {
                out.push(d.clone());
            }
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, property) in properties {
                    out.push(name.clone());
                    schema_text(property, out);
                }
            }
            for key in ["items", "anyOf", "oneOf", "allOf", "$defs", "definitions"] {
                if let Some(inner) = map.get(key) {
                    schema_text(inner, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| schema_text(i, out)),
        _ => {}
    }
}

fn normalize(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The indexes of `documents` matching `query`, best first, at most `limit`.
pub fn rank(documents: &[Document], query: &str, limit: usize) -> Vec<usize> {
    let terms: Vec<String> = {
        let mut seen = HashSet::new();
        tokens(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect()
    };
    let wanted = normalize(query);
    struct Indexed {
        name: HashSet<String>,
        local: HashSet<String>,
        namespace: HashSet<String>,
        counts: HashMap<String, usize>,
        len: usize,
    }
    let indexed: Vec<Indexed> = documents
        .iter()
        .map(|d| {
            let text = tokens(&d.text);
            let mut counts = HashMap::new();
            for t in &text {
                *counts.entry(t.clone()).or_insert(0) += 1;
            }
            let local = d.name.rsplit("__").next().unwrap_or(&d.name);
            Indexed {
                name: tokens(&d.name).into_iter().collect(),
                local: tokens(local).into_iter().collect(),
                namespace: tokens(&d.namespace).into_iter().collect(),
                counts,
                len: text.len(),
            }
        })
        .collect();
    let n = documents.len() as f64;
    let average = if indexed.is_empty() {
        1.0
    } else {
        (indexed.iter().map(|d| d.len).sum::<usize>() as f64 / n).max(1.0)
    };
    let idf: HashMap<&str, f64> = terms
        .iter()
        .map(|t| {
            let df = indexed
                .iter()
                .filter(|d| {
                    d.name.contains(t) || d.counts.contains_key(t) || d.namespace.contains(t)
                })
                .count() as f64;
            (t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .collect();
    let mut scored: Vec<(usize, bool, usize, f64)> = Vec::new();
    for (index, doc) in indexed.iter().enumerate() {
        let norm = K1 * (1.0 - B + B * doc.len as f64 / average);
        let mut covered = 0;
        let mut score = 0.0;
        for t in &terms {
            let count = *doc.counts.get(t).unwrap_or(&0) as f64;
            let weight = 3.0 * f64::from(u8::from(doc.name.contains(t)))
                + 0.5 * f64::from(u8::from(doc.namespace.contains(t)))
                + count * (K1 + 1.0) / (count + norm);
            if weight > 0.0 {
                covered += 1;
                score += idf[t.as_str()] * weight;
            }
        }
        if score == 0.0 {
            continue;
        }
        if !doc.local.is_empty() && doc.local.iter().all(|t| terms.contains(t)) {
            score += idf.values().sum::<f64>();
        }
        let name = &documents[index].name;
        let exact = normalize(name) == wanted || name.ends_with(&format!("__{wanted}"));
        scored.push((index, exact, covered, score));
    }
    scored.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(b.2.cmp(&a.2))
            .then(b.3.partial_cmp(&a.3).unwrap_or(std::cmp::Ordering::Equal))
    });
    scored.into_iter().take(limit).map(|s| s.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_as_pi_makes_them() {
        assert_eq!(
            tokens("getTinyImage of the Files"),
            ["get", "tiny", "image", "file"]
        );
        assert_eq!(
            tokens("HTTPServer boxes queries"),
            ["http", "server", "box", "query"]
        );
    }

    #[test]
    fn the_named_tool_comes_first() {
        let docs = vec![
            Document {
                name: "mcp__a__echo".into(),
                text: "Echoes back the input".into(),
                namespace: "mcp__a".into(),
            },
            Document {
                name: "mcp__a__add".into(),
                text: "Adds two numbers".into(),
                namespace: "mcp__a".into(),
            },
        ];
        assert_eq!(rank(&docs, "add numbers", 8), [1]);
        assert_eq!(rank(&docs, "echo", 8), [0]);
        assert!(rank(&docs, "weather", 8).is_empty());
    }
}
