//! The project's context files over the real binary: a three-level tree of `AGENTS.md` and
//! `CLAUDE.md` files plus the agent directory's reach the model's system prompt exactly as
//! pi 1.5.2 sends them (the section captured from pi, in `tests/fixtures/pi-1.5-context/`),
//! in pi 0.73's form under its profile, not at all with `-nc`, and anew after an edit.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake};
use serde_json::json;

/// The tree pi's capture was made in: the agent directory's file, then `work/` (the root of
/// the project), `work/a/` with only a `CLAUDE.md`, and `work/a/b/` (where pith starts) with
/// both, `AGENTS.md` winning.
fn tree(options: &mut Options) {
    options.agent_files.push((
        "AGENTS.md".into(),
        "GLOBAL agent-dir AGENTS.md line\n".into(),
    ));
    options.work_files.extend([
        ("AGENTS.md".into(), "ROOT tree AGENTS.md\n".into()),
        ("a/CLAUDE.md".into(), "LEVEL-A CLAUDE.md only\n".into()),
        (
            "a/b/AGENTS.md".into(),
            "LEVEL-B AGENTS.md (cwd)\nsecond line\n".into(),
        ),
        (
            "a/b/CLAUDE.md".into(),
            "LEVEL-B CLAUDE.md (should be ignored)\n".into(),
        ),
    ]);
    options.cwd = "a/b";
}

/// The system prompt of each request the server received.
fn system_prompts(server: &FakeLlm) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| {
            r["body"]["system"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// Starts pith in the tree with `extra` arguments and asks one question.
async fn ask(server: &FakeLlm, extra: &[&str]) -> Pith {
    let mut options = anthropic_fake(&server.url, "fake-model");
    tree(&mut options);
    options.args.extend(extra.iter().map(|a| a.to_string()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    pith
}

#[tokio::test(flavor = "multi_thread")]
async fn context_files_reach_the_model_as_pi_sends_them() {
    let server = FakeLlm::start(json!([{"text": "one"}, {"text": "two"}])).await;
    let mut pith = ask(&server, &[]).await;
    let agent = pith.dir.path().join("agent");
    let work = pith.work_dir();
    let golden = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/pi-1.5-context/project_context.txt"),
    )
    .unwrap()
    .replace("${AGENT}", agent.to_str().unwrap())
    .replace("${WORK}", work.to_str().unwrap());
    let prompt = &system_prompts(&server)[0];
    assert!(
        prompt.contains(&format!("\n\n{golden}\n\n")),
        "pi's section is not in the prompt:\n{prompt}"
    );
    assert!(!prompt.contains("should be ignored"));

    // The section is the system message's own, as pi 1.5 records it.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let system = &messages["data"]["messages"][0];
    assert_eq!(system["role"], "system");
    assert_eq!(system["sections"]["project_context"], golden);

    // An edit reaches the next request.
    std::fs::write(work.join("a/CLAUDE.md"), "LEVEL-A edited\n").unwrap();
    pith.call("p2", json!({"type": "prompt", "message": "again"}))
        .await;
    pith.until_agent_end().await;
    let prompt = &system_prompts(&server)[1];
    assert!(prompt.contains("LEVEL-A edited"), "{prompt}");
    assert!(!prompt.contains("LEVEL-A CLAUDE.md only"), "{prompt}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_context_files_with_nc_and_pi_0_73s_form_under_its_profile() {
    let server = FakeLlm::start(json!([{"text": "one"}])).await;
    ask(&server, &["-nc"]).await;
    let prompt = &system_prompts(&server)[0];
    assert!(!prompt.contains("project_context"), "{prompt}");
    assert!(!prompt.contains("AGENTS.md"), "{prompt}");

    let server = FakeLlm::start(json!([{"text": "one"}])).await;
    let pith = ask(&server, &["--pi-protocol", "0.73"]).await;
    let prompt = &system_prompts(&server)[0];
    let work = pith.work_dir();
    let expected = format!(
        "# Project Context\n\nProject-specific instructions and guidelines:\n\n## {agent}/AGENTS.md\n\nGLOBAL agent-dir AGENTS.md line\n\n## {work}/AGENTS.md\n\nROOT tree AGENTS.md\n\n## {work}/a/CLAUDE.md\n\nLEVEL-A CLAUDE.md only\n\n## {work}/a/b/AGENTS.md\n\nLEVEL-B AGENTS.md (cwd)\nsecond line",
        agent = pith.dir.path().join("agent").display(),
        work = work.display()
    );
    assert!(prompt.contains(&expected), "{prompt}");
}
