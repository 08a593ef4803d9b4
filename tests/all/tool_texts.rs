//! The built-in tools' result texts beside pi 1.5.2's: every case of
//! `tests/fixtures/pi-1.5-tools/cases.json` (read, write, edit, bash, ls, grep, find over CRLF,
//! BOM, binary and empty files, fuzzy matches, overlaps, missing paths, timeouts, gitignore…,
//! captured from pi's `tool_execution_end` frames) is run through pith's tools in the same
//! workspace, in the same order, and must give the same text, the same error flag and leave
//! the same file. Where pith deliberately differs, the case is listed in [`DIFFERENCES`] with
//! the reason.

use std::collections::BTreeMap;

use crate::tools::Workspace;
use serde_json::Value;

/// Cases whose text differs from pi's on purpose, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "toolu_76_grep",
        "outside a git repository pi's grep (ripgrep's default) searches the files .gitignore \
         lists; pith's grep respects .gitignore there too, as both pith's and pi's find do",
    ),
    (
        "toolu_90_find",
        "pi passes fd's own stderr through (\"[fd error]: Search path … is not a directory\"); \
         pith's find says \"Path not found: …\"",
    ),
];

/// `text` with the placeholders of the fixture filled in for `work`.
fn fill(text: &str, work: &str) -> String {
    text.replace("${WORK}", work)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tools_answer_with_pis_texts() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            crate::support::repo_root().join("tests/fixtures/pi-1.5-tools/cases.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let ws = Workspace::new().await;
    let work = ws.root();
    let work_text = work.to_str().unwrap().to_string();
    for (name, text) in fixture["files"].as_object().unwrap() {
        ws.write(name, text.as_str().unwrap());
    }
    let differences: BTreeMap<&str, &str> = DIFFERENCES.iter().copied().collect();
    let mut failures = Vec::new();
    for case in fixture["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let tool = case["tool"].as_str().unwrap();
        let arguments: Value =
            serde_json::from_str(&fill(&case["arguments"].to_string(), &work_text)).unwrap();
        let out = ws.call(tool, arguments.clone()).await;
        if differences.contains_key(id) {
            continue;
        }
        let expected = fill(case["text"].as_str().unwrap(), &work_text);
        let mut ours = out.text();
        // bash's full-output file has a random name in both.
        if let Some(path) = out
            .details
            .as_ref()
            .and_then(|d| d["fullOutputPath"].as_str())
        {
            ours = ours.replace(path, "${TMPFILE}");
        }
        let same_text = ours == expected
            || (case
                .get("note")
                .is_some_and(|n| n.as_str().unwrap_or("").contains("as a set"))
                && sorted_lines(&ours) == sorted_lines(&expected));
        if !same_text || out.is_error != case["isError"].as_bool().unwrap() {
            failures.push(format!(
                "{id} {tool} {arguments}\n  pi   ({}): {expected:?}\n  pith ({}): {ours:?}",
                case["isError"], out.is_error
            ));
        }
        if let Some(after) = case.get("file_after").filter(|v| !v.is_null())
            && let Some(path) = arguments["path"].as_str()
        {
            let now = std::fs::read_to_string(work.join(path)).unwrap_or_default();
            if Some(now.as_str()) != after["text"].as_str() {
                failures.push(format!("{id}: {path} is {now:?}, pi left {after:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from pi 1.5.2:\n{}",
        failures.len(),
        fixture["cases"].as_array().unwrap().len(),
        failures.join("\n")
    );
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    lines
}
