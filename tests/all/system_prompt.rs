//! The system prompt as pi 1.5.2 builds it, over the real binary: the request's prompt equals
//! the one pi sent in its `b_prompt_text` capture (`tests/fixtures/pi-1.5-system-prompt/`)
//! but for pith's name, its docs and the folder; the `system` message records pi's sections
//! in pi's order and pi's tool declarations, a later one only what changed; `pith docs`, which the `docs` section names,
//! prints the documentation.

use crate::support;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake};
use serde_json::{Value, json};

/// The text between `<name>` and `</name>` in `prompt`, tags included.
fn section<'a>(prompt: &'a str, name: &str) -> &'a str {
    let open = format!("<{name}>\n");
    let close = format!("\n</{name}>");
    let start = prompt
        .find(&open)
        .unwrap_or_else(|| panic!("no {name} in {prompt}"));
    let end = prompt[start..].find(&close).unwrap() + start + close.len();
    &prompt[start..end]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prompt_is_pi_1_5s_with_pith_s_name_docs_and_folder() {
    let server = FakeLlm::start(json!([{"text": "one"}, {"text": "two"}])).await;
    let mut pith = Pith::spawn(anthropic_fake(&server.url, "fake-model")).await;
    pith.call("p", json!({"type": "prompt", "message": "Say hello"}))
        .await;
    pith.until_agent_end().await;
    let requests = server.requests();
    let prompt = requests[0]["body"]["system"][0]["text"].as_str().unwrap();

    let pi = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/pi-1.5-system-prompt/default.txt"),
    )
    .unwrap();
    let work = pith.work_dir();
    let expected = pi
        .replace(
            "You are a coding assistant running inside pi, a coding agent harness.",
            "You are a coding assistant running inside pith, a coding agent harness.",
        )
        .replace(section(&pi, "docs"), section(prompt, "docs"))
        .replace("$SCRATCH/b_prompt_text/work", work.to_str().unwrap());
    assert_eq!(prompt, expected);

    // The docs section names a command that prints pith's documentation.
    let docs = section(prompt, "docs");
    let exe = env!("CARGO_BIN_EXE_pith");
    assert!(docs.contains(&format!("`{exe} docs <topic>`")), "{docs}");
    let printed = std::process::Command::new(exe)
        .args(["docs", "mcp"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    assert!(String::from_utf8_lossy(&printed.stdout).contains("mcp.json"));
    let unknown = std::process::Command::new(exe)
        .args(["docs", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    let error = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        error.contains("no topic named \"nope\": the topics are readme"),
        "{error}"
    );

    // The record holds pi's sections in pi's order, and they make the prompt.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let system = &messages["data"]["messages"][0];
    let sections = system["sections"].as_object().unwrap();
    let names: Vec<&str> = sections.keys().map(String::as_str).collect();
    assert_eq!(names, ["preamble", "tools", "rules", "docs", "cwd"]);
    let joined: Vec<&str> = sections.values().filter_map(Value::as_str).collect();
    assert_eq!(joined.join("\n\n"), prompt);
    // The tools are declared byte for byte as pi declares them, so a session that moves
    // between pi and pith records no tool change (and keeps its tool order and cache prefix).
    let pi_tools: Value = serde_json::from_str(
        &std::fs::read_to_string(
            support::repo_root().join("tests/fixtures/pi-1.5-system-prompt/tools.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&system["toolsAdded"]).unwrap(),
        serde_json::to_string(&pi_tools).unwrap()
    );

    // A run with nothing changed records nothing; a changed context file is a patch of its
    // section alone.
    std::fs::write(work.join("AGENTS.md"), "Use tabs.\n").unwrap();
    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    let end = pith.until_agent_end().await;
    let patch = &end["messages"][0];
    assert_eq!(patch["role"], "system", "{end}");
    let names: Vec<&String> = patch["sections"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["project_context"]);
    assert!(patch.get("toolsAdded").is_none() && patch.get("toolsRemoved").is_none());
    let prompt = server.requests()[1]["body"]["system"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains(&format!(
            "\n\n<project_context>\nProject-specific instructions and guidelines:\n\n<project_instructions path=\"{}\">\nUse tabs.\n\n</project_instructions>\n</project_context>\n\n<cwd>",
            work.join("AGENTS.md").display()
        )),
        "{prompt}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pi_0_73s_profile_keeps_its_layout() {
    let server = FakeLlm::start(json!([{"text": "one"}])).await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.args.extend(["--pi-protocol".into(), "0.73".into()]);
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "Say hello"}))
        .await;
    pith.until_agent_end().await;
    let requests = server.requests();
    let prompt = requests[0]["body"]["system"][0]["text"].as_str().unwrap();
    let work = pith.work_dir();
    let date = &prompt[prompt.find("Current date: ").unwrap() + 14..][..10];
    let expected = format!(
        "You are an expert coding assistant operating inside pith, a coding agent harness. You help users by reading files, executing commands, editing code, and writing new files.\n\n\
         Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement, including multiple disjoint edits in one call\n- write: Create or overwrite files\n\n\
         In addition to the tools above, you may have access to other custom tools depending on the project.\n\n\
         Guidelines:\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- You can inspect PI_* environment variables for current model and session details.\n- Use edit for targeted changes. Batch changes to one file in a single call.\n- Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.\n- Use write only for new files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly when working with files\n\n\
         Current date: {date}\nCurrent working directory: {}",
        work.display()
    );
    assert_eq!(prompt, expected);
}
