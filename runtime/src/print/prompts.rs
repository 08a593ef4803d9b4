//! The prompts of a one-shot run, built as pi 1.5.2 builds them (`initial-message.js`,
//! `file-processor.js`): piped stdin (trimmed), then the `@file` arguments (text wrapped in
//! `<file name="…">`, images as image blocks), then the first word, joined with nothing
//! between them, make the first prompt; every other word is a prompt of its own, sent after.

use std::path::{Path, PathBuf};

use base64::Engine;

use crate::content::Content;

/// The prompts to send in order; the images go with the first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompts {
    /// The first prompt's text, then each further prompt's.
    pub texts: Vec<String>,
    /// The images of the `@file` arguments, sent with the first prompt.
    pub images: Vec<Content>,
}

/// Why the prompts could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// An `@file` argument names no file (pi's message).
    #[error("Error: File not found: {}", .0.display())]
    FileNotFound(PathBuf),
    /// An `@file` argument could not be read.
    #[error("Error: Could not read file {}: {reason}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The image type of `bytes` by their signature, as pi detects it.
fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Builds the prompts from piped `stdin` (`None` when stdin is a terminal) and the `words`
/// (prompts and `@file` arguments, in order), with `@file` paths relative to `cwd`.
pub fn build(stdin: Option<&str>, words: &[String], cwd: &Path) -> Result<Prompts, PromptError> {
    let mut file_text = String::new();
    let mut images = Vec::new();
    let mut messages: Vec<String> = Vec::new();
    for word in words {
        let Some(name) = word.strip_prefix('@') else {
            messages.push(word.clone());
            continue;
        };
        let path = std::path::absolute(cwd.join(crate::agent_dir::expand_tilde(Path::new(name))))
            .unwrap_or_else(|_| cwd.join(name));
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(PromptError::FileNotFound(path));
            }
            Err(err) => {
                return Err(PromptError::Unreadable {
                    path,
                    reason: err.to_string(),
                });
            }
        };
        // Empty files are passed over, as pi does.
        if bytes.is_empty() {
            continue;
        }
        let shown = path.display();
        if let Some(mime) = image_type(&bytes) {
            images.push(Content::Image {
                data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                mime_type: mime.to_string(),
            });
            file_text.push_str(&format!("<file name=\"{shown}\"></file>\n"));
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        file_text.push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
    }
    let stdin = stdin.map(str::trim).filter(|s| !s.is_empty());
    let mut rest = messages.into_iter();
    let first: String = [
        stdin.unwrap_or(""),
        &file_text,
        &rest.next().unwrap_or_default(),
    ]
    .concat();
    let mut texts = Vec::new();
    if !first.is_empty() || !images.is_empty() {
        texts.push(first);
    }
    texts.extend(rest);
    Ok(Prompts { texts, images })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn stdin_files_and_the_first_word_make_the_first_prompt() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "line one\nline two\n").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let prompts = build(
            Some("STDIN\n"),
            &words(&["@empty.txt", "@notes.txt", "first", "second"]),
            dir.path(),
        )
        .unwrap();
        let path = dir.path().join("notes.txt");
        assert_eq!(
            prompts.texts,
            [
                format!(
                    "STDIN<file name=\"{}\">\nline one\nline two\n\n</file>\nfirst",
                    path.display()
                ),
                "second".to_string()
            ]
        );
        assert!(prompts.images.is_empty());
    }

    #[test]
    fn stdin_alone_is_trimmed_and_nothing_is_no_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let only = build(Some("\n  only stdin  \n"), &[], dir.path()).unwrap();
        assert_eq!(only.texts, ["only stdin"]);
        assert!(
            build(Some("  \n\t\n"), &[], dir.path())
                .unwrap()
                .texts
                .is_empty()
        );
        assert!(build(None, &[], dir.path()).unwrap().texts.is_empty());
    }

    #[test]
    fn images_are_blocks_and_a_missing_file_is_pis_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.png"), b"\x89PNG\r\n\x1a\n0000").unwrap();
        let prompts = build(None, &words(&["@p.png", "describe"]), dir.path()).unwrap();
        assert_eq!(prompts.images.len(), 1);
        assert!(prompts.texts[0].ends_with("p.png\"></file>\ndescribe"));
        let missing = build(None, &words(&["@missing.txt"]), dir.path()).unwrap_err();
        assert_eq!(
            missing.to_string(),
            format!(
                "Error: File not found: {}",
                dir.path().join("missing.txt").display()
            )
        );
    }
}
