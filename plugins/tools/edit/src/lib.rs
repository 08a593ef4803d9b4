//! The `edit` tool, as pi's: one or more exact replacements in a file, each `oldText` unique
//! and not overlapping the others, matched against the original file (line endings and a BOM
//! kept; trailing whitespace and typographic quotes and dashes forgiven when the exact text is
//! not found). Returns a diff with line numbers in `details`.

mod diff;
mod fuzzy;

use diff::diff;
use pith_sdk::host::resolve_model_path;
use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Edit {
    #[serde(rename = "oldText")]
    old_text: String,
    #[serde(rename = "newText")]
    new_text: String,
}

#[derive(serde::Deserialize)]
struct Args {
    path: String,
    edits: Vec<Edit>,
}

struct EditTool;

fn fail(message: String) -> ToolError {
    ToolError::new(message).with_details(json!({}))
}

/// Forgives what models commonly get wrong: trailing spaces, typographic quotes and dashes.
fn loosen(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            line.trim_end()
                .chars()
                .map(|c| match c {
                    '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' => '\'',
                    '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' => '"',
                    '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
                    '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => {
                        ' '
                    }
                    other => other,
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Byte ranges of every occurrence of `needle` in `haystack`.
fn occurrences(haystack: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    haystack.match_indices(needle).map(|(i, _)| i).collect()
}

impl Tool for EditTool {
    const NAME: &'static str = "edit";
    const DESCRIPTION: &'static str = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";

    fn parameters() -> Value {
        json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},
                            "newText": {"type": "string", "description": "Replacement text for this targeted edit."}
                        }
                    },
                    "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."
                }
            }
        })
    }

    fn prompt_snippet() -> Option<String> {
        Some("Make precise file edits with exact text replacement, including multiple disjoint edits in one call".into())
    }

    fn prompt_guidelines() -> Vec<String> {
        vec![
            "Use edit for targeted changes. Batch changes to one file in a single call.".into(),
            "Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.".into(),
        ]
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        let shown = &args.path;
        if args.edits.is_empty() {
            return Err(fail(
                "Edit tool input is invalid. edits must contain at least one replacement.".into(),
            ));
        }
        let path = resolve_model_path(&args.path);
        let raw = std::fs::read_to_string(&path).map_err(|err| {
            fail(
                pith_sdk::sandbox::explain_read_error(&path, &err).unwrap_or_else(|| {
                    format!("Could not edit file: {shown}. Error code: ENOENT.")
                }),
            )
        })?;
        let (bom, body) = match raw.strip_prefix('\u{feff}') {
            Some(rest) => ("\u{feff}", rest),
            None => ("", raw.as_str()),
        };
        let crlf = body
            .find('\n')
            .is_some_and(|i| i > 0 && body.as_bytes()[i - 1] == b'\r');
        let mut content = body.replace("\r\n", "\n");
        let edits: Vec<(String, String)> = args
            .edits
            .iter()
            .map(|e| {
                (
                    e.old_text.replace("\r\n", "\n"),
                    e.new_text.replace("\r\n", "\n"),
                )
            })
            .collect();
        // Exact matches first; without them, match on the loosened file. Only the lines a fuzzy
        // match touches are written loosened, as pi's line spans do: the rest keep their bytes.
        let original = content.clone();
        let exact = edits
            .iter()
            .all(|(old, _)| occurrences(&content, old).len() == 1);
        let mut fuzzy = false;
        let edits: Vec<(String, String)> = if exact {
            edits
        } else {
            let loose = loosen(&content);
            let all_found = edits.iter().all(|(old, _)| {
                !occurrences(&content, old).is_empty()
                    || !occurrences(&loose, &loosen(old)).is_empty()
            });
            if all_found
                && edits
                    .iter()
                    .any(|(old, _)| occurrences(&content, old).is_empty())
            {
                content = loose;
                fuzzy = true;
                edits
                    .into_iter()
                    .map(|(old, new)| (loosen(&old), new))
                    .collect()
            } else {
                edits
            }
        };
        let mut ranges: Vec<(usize, usize, usize)> = Vec::new();
        for (index, (old, _)) in edits.iter().enumerate() {
            if old.is_empty() {
                return Err(fail(if edits.len() > 1 {
                    format!("edits[{index}].oldText must not be empty in {shown}.")
                } else {
                    format!("oldText must not be empty in {shown}.")
                }));
            }
            let found = occurrences(&content, old);
            let which = if edits.len() > 1 {
                format!("edits[{index}].oldText")
            } else {
                "the text".to_string()
            };
            match found.len() {
                0 => {
                    return Err(fail(if edits.len() > 1 {
                        format!(
                            "Could not find edits[{index}] in {shown}. The oldText must match exactly including all whitespace and newlines."
                        )
                    } else {
                        format!(
                            "Could not find the exact text in {shown}. The old text must match exactly including all whitespace and newlines."
                        )
                    }));
                }
                1 => ranges.push((found[0], found[0] + old.len(), index)),
                n => {
                    return Err(fail(format!(
                        "Found {n} occurrences of {which} in {shown}. The text must be unique. Please provide more context to make it unique."
                    )));
                }
            }
        }
        ranges.sort();
        for pair in ranges.windows(2) {
            if pair[1].0 < pair[0].1 {
                return Err(fail(format!(
                    "edits[{}] and edits[{}] overlap in {shown}. Merge them into one edit or target disjoint regions.",
                    pair[0].2, pair[1].2
                )));
            }
        }
        let updated = if fuzzy {
            fuzzy::apply(&original, &content, &ranges, &edits)
        } else {
            let mut updated = String::with_capacity(content.len());
            let mut at = 0;
            for (start, end, index) in &ranges {
                updated.push_str(&content[at..*start]);
                updated.push_str(&edits[*index].1);
                at = *end;
            }
            updated.push_str(&content[at..]);
            updated
        };
        let content = original;
        if updated == content {
            return Err(fail(format!(
                "No changes made to {shown}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )));
        }
        let (diff_text, first_changed_line) = diff(&content, &updated);
        let written = if crlf {
            updated.replace('\n', "\r\n")
        } else {
            updated
        };
        std::fs::write(&path, format!("{bom}{written}")).map_err(|err| {
            fail(
                pith_sdk::sandbox::explain_write_error(&path, &err)
                    .unwrap_or_else(|| pith_sdk::host::node_error(&err, "open", shown)),
            )
        })?;
        // pi 1.5.2's words.
        let message = format!("Successfully replaced {} block(s) in {shown}.", edits.len());
        Ok(ToolResult::text(message)
            .with_details(json!({"diff": diff_text, "firstChangedLine": first_changed_line})))
    }
}

pith_sdk::export_tools!(EditTool);
