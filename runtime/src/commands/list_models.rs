//! `pith --list-models [search]`, as pi prints it: the available models in a table (provider,
//! model, context, max-out, thinking, images), sorted by provider and id as pi sorts them, and
//! filtered as pi's fuzzy search filters them (every word must match `provider id` in order).

use std::cmp::Ordering;
use std::process::ExitCode;

use crate::agent::model::Model;
use crate::agent::models::ModelRegistry;

/// What to do when nothing is available (pi points at its `/login` and its docs).
const NONE_AVAILABLE: &str = "No models available. Set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, …), add one to auth.json, or log in with pi's /login; pith's README, \"Models and providers\", lists them.";

/// Prints the table for `search` to stdout.
pub fn print(models: &ModelRegistry, search: Option<&str>) -> ExitCode {
    print!("{}", table(models.available(), search));
    ExitCode::SUCCESS
}

/// The text pi prints for `models` and `search`.
pub fn table(mut models: Vec<Model>, search: Option<&str>) -> String {
    if models.is_empty() {
        return format!("{NONE_AVAILABLE}\n");
    }
    if let Some(search) = search.filter(|s| !s.trim().is_empty()) {
        let words: Vec<&str> = search.split_whitespace().collect();
        models.retain(|m| {
            let text = format!("{} {}", m.provider, m.id);
            words.iter().all(|word| fuzzy_matches(word, &text))
        });
        if models.is_empty() {
            return format!("No models matching \"{search}\"\n");
        }
    }
    models.sort_by(|a, b| collate(&a.provider, &b.provider).then_with(|| collate(&a.id, &b.id)));
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                token_count(m.context_window),
                token_count(m.max_tokens),
                if m.reasoning { "yes" } else { "no" }.to_string(),
                if m.input.iter().any(|i| i == "image") {
                    "yes"
                } else {
                    "no"
                }
                .to_string(),
            ]
        })
        .collect();
    let headers = [
        "provider", "model", "context", "max-out", "thinking", "images",
    ];
    let widths: Vec<usize> = (0..6)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .chain([headers[column].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(headers.to_vec());
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// pi's `formatTokenCount`: `200K`, `1M`, `1.5M`, `8192`.
fn token_count(count: u64) -> String {
    let scaled = |unit: f64, suffix: &str| {
        let value = count as f64 / unit;
        if value.fract() == 0.0 {
            format!("{value}{suffix}")
        } else {
            format!("{value:.1}{suffix}")
        }
    };
    if count >= 1_000_000 {
        scaled(1_000_000.0, "M")
    } else if count >= 1_000 {
        scaled(1_000.0, "K")
    } else {
        count.to_string()
    }
}

/// pi's fuzzy match: the word's characters in order in `text` (case ignored), or its letters
/// and digits swapped (`4sonnet` for `sonnet4`).
fn fuzzy_matches(word: &str, text: &str) -> bool {
    let text = text.to_lowercase();
    let word = word.to_lowercase();
    let in_order = |query: &str| {
        let mut rest = text.chars();
        query.chars().all(|c| rest.any(|t| t == c))
    };
    if in_order(&word) {
        return true;
    }
    let split = word
        .find(|c: char| c.is_ascii_digit())
        .filter(|_| word.starts_with(|c: char| c.is_ascii_lowercase()))
        .or_else(|| {
            word.find(|c: char| c.is_ascii_lowercase())
                .filter(|_| word.starts_with(|c: char| c.is_ascii_digit()))
        });
    let Some(at) = split else {
        return false;
    };
    let (head, tail) = word.split_at(at);
    let two_runs = head.chars().all(|c| c.is_ascii_alphanumeric())
        && !tail.is_empty()
        && tail.chars().all(|c| {
            if head.starts_with(|h: char| h.is_ascii_digit()) {
                c.is_ascii_lowercase()
            } else {
                c.is_ascii_digit()
            }
        });
    two_runs && in_order(&format!("{tail}{head}"))
}

/// The order of JavaScript's `localeCompare` (the root collation) for the characters of model
/// names: punctuation first, then digits, then letters without regard to case; then lower case
/// before upper; then the bytes.
fn collate(a: &str, b: &str) -> Ordering {
    fn weight(c: char) -> (u32, u32) {
        const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
        if let Some(at) = PUNCTUATION.find(c) {
            (1, at as u32)
        } else if c.is_ascii_digit() {
            (2, c as u32)
        } else if c.is_alphabetic() {
            (3, c.to_lowercase().next().unwrap_or(c) as u32)
        } else {
            (4, c as u32)
        }
    }
    let primary = |s: &str| s.chars().map(weight).collect::<Vec<_>>();
    primary(a)
        .cmp(&primary(b))
        .then_with(|| {
            let case = |s: &str| s.chars().map(|c| c.is_uppercase()).collect::<Vec<_>>();
            case(a).cmp(&case(b))
        })
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_s_counts_and_matches() {
        assert_eq!(token_count(200_000), "200K");
        assert_eq!(token_count(1_000_000), "1M");
        assert_eq!(token_count(1_048_576), "1.0M");
        assert_eq!(token_count(1_500_000), "1.5M");
        assert_eq!(token_count(8192), "8.2K");
        assert_eq!(token_count(512), "512");
        assert!(fuzzy_matches("sonnet", "anthropic claude-sonnet-4-5"));
        assert!(fuzzy_matches("4sonnet", "anthropic claude-sonnet-4-5"));
        assert!(!fuzzy_matches("zzz", "anthropic claude-sonnet-4-5"));
        assert_eq!(
            collate("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
            Ordering::Less
        );
        assert_eq!(collate("a-b", "a.b"), Ordering::Less);
        assert_eq!(collate("Kimi", "kimi"), Ordering::Greater);
    }
}
