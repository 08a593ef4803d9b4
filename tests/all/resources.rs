//! Skills and prompt templates from both sources (files in pi's directories and components),
//! expanded exactly as pi expands them, listed in the system prompt and by `get_commands`.

use crate::support;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Pith, anthropic_fake};
use serde_json::{Value, json};

const DEPLOY: &str = "---\nname: deploy\ndescription: Deploy the app & check it\n---\nRun `make deploy`.\r\n\r\nThen check <the> logs.\n";
const LINT: &str = "---\nname: lint\ndescription: Lint the code\ndisable-model-invocation: true\n---\nRun the linter.\n";
const NO_DESCRIPTION: &str = "---\nname: broken\n---\nNo description, so pi drops it.\n";
const FIX: &str = "---\ndescription: Fix an issue\n---\nFix $1 in ${@:2}; all: $@ ($ARGUMENTS)\n";
const HELLO: &str = "Say hello to $ARGUMENTS\r\nand nobody else\n";

async fn spawn(server: &FakeLlm) -> (Pith, tempfile::TempDir) {
    let plugins = support::plugins_dir_with(&["examples/skill-pack", "examples/prompt-pack"]);
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files.extend([
        ("skills/deploy/SKILL.md".to_string(), DEPLOY.to_string()),
        (
            "skills/broken/SKILL.md".to_string(),
            NO_DESCRIPTION.to_string(),
        ),
        ("prompts/hello.md".to_string(), HELLO.to_string()),
    ]);
    options.work_files = vec![
        (".pi/skills/lint/SKILL.md".into(), LINT.into()),
        (".pi/prompts/fix.md".into(), FIX.into()),
    ];
    // The project's own resources load in a trusted project.
    options.args.push("--approve".into());
    (Pith::spawn(options).await, plugins)
}

fn user_text(request: &Value) -> String {
    let messages = request["body"]["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    last["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_and_templates_expand_as_pi_expands_them() {
    let prompts = [
        "/skill:deploy now please",
        "/skill:lint",
        "/skill:commit-message",
        "/skill:nope keep me",
        "/fix bug.rs 'a b' c",
        "/hello world",
        "/review src/x.rs",
        "/unknown stays",
    ];
    let turns: Vec<Value> = prompts.iter().map(|_| json!({"text": "ok"})).collect();
    let server = FakeLlm::start(json!(turns)).await;
    let (mut pith, _plugins) = spawn(&server).await;
    let agent = pith.dir.path().join("agent");
    let work = pith.work_dir();
    for (i, prompt) in prompts.iter().enumerate() {
        pith.call(
            &format!("p{i}"),
            json!({"type": "prompt", "message": prompt}),
        )
        .await;
        pith.until_agent_end().await;
    }
    let requests = server.requests();
    let deploy = agent.join("skills/deploy/SKILL.md");
    assert_eq!(
        user_text(&requests[0]),
        format!(
            "<skill name=\"deploy\" location=\"{}\">\nReferences are relative to {}.\n\nRun `make deploy`.\n\nThen check <the> logs.\n</skill>\n\nnow please",
            deploy.display(),
            agent.join("skills/deploy").display()
        )
    );
    let lint = work.join(".pi/skills/lint/SKILL.md");
    assert_eq!(
        user_text(&requests[1]),
        format!(
            "<skill name=\"lint\" location=\"{}\">\nReferences are relative to {}.\n\nRun the linter.\n</skill>",
            lint.display(),
            work.join(".pi/skills/lint").display()
        )
    );
    let packed = agent.join("plugin-skills/skill-pack/commit-message/SKILL.md");
    assert!(
        packed.is_file(),
        "the component skill is kept as a file the model can read"
    );
    assert!(
        user_text(&requests[2]).starts_with(&format!(
            "<skill name=\"commit-message\" location=\"{}\">\nReferences are relative to {}.\n\nRun `git diff --staged`",
            packed.display(),
            packed.parent().unwrap().display()
        )),
        "{}",
        user_text(&requests[2])
    );
    assert_eq!(user_text(&requests[3]), "/skill:nope keep me");
    assert_eq!(
        user_text(&requests[4]),
        "Fix bug.rs in a b c; all: bug.rs a b c (bug.rs a b c)"
    );
    assert_eq!(
        user_text(&requests[5]),
        "Say hello to world\nand nobody else\n"
    );
    assert!(user_text(&requests[6]).starts_with("Review src/x.rs for bugs"));
    assert_eq!(user_text(&requests[7]), "/unknown stays");

    // The system prompt lists the skills the model may use, as pi 1.5 does (hidden ones left
    // out).
    let system = requests[0]["body"]["system"][0]["text"].as_str().unwrap();
    let block = format!(
        "<skills>\nThe following skills provide specialized instructions for specific tasks.\nUse the read tool to load a skill's file when the task matches its description.\nResolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.\n\n<available_skills>\n  <skill>\n    <name>deploy</name>\n    <description>Deploy the app &amp; check it</description>\n    <location>{}</location>\n  </skill>\n  <skill>\n    <name>commit-message</name>\n",
        deploy.display()
    );
    assert!(system.contains(&block), "{system}");
    assert!(!system.contains("<name>lint</name>"));
    assert!(!system.contains("broken"));
}

#[tokio::test(flavor = "multi_thread")]
async fn get_commands_lists_templates_then_skills_with_their_sources() {
    let server = FakeLlm::start(json!([])).await;
    let (mut pith, _plugins) = spawn(&server).await;
    let response = pith.call("c", json!({"type": "get_commands"})).await;
    // The project's commands (not the built-in `/mcp`).
    let commands: Vec<Value> = response["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["sourceInfo"]["source"] != "builtin")
        .cloned()
        .collect();
    let summary: Vec<(String, String, String)> = commands
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["source"].as_str().unwrap().to_string(),
                c["description"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("hello", "prompt", "Say hello to $ARGUMENTS"),
        ("fix", "prompt", "Fix an issue"),
        (
            "review",
            "prompt",
            "Review a file for bugs and unclear code",
        ),
        ("skill:lint", "skill", "Lint the code"),
        ("skill:deploy", "skill", "Deploy the app & check it"),
        (
            "skill:commit-message",
            "skill",
            "Write a conventional commit message for the staged changes",
        ),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(summary, expected);
    assert_eq!(commands[0]["location"], "user");
    assert_eq!(commands[0]["sourceInfo"]["scope"], "user");
    assert_eq!(commands[1]["location"], "project");
    assert_eq!(commands[4]["location"], "user");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_can_read_a_skill_outside_the_workspace() {
    let skills = tempfile::tempdir().unwrap();
    let skill_dir = skills.path().canonicalize().unwrap().join("deploy");
    std::fs::create_dir_all(&skill_dir).unwrap();
    std::fs::write(skill_dir.join("SKILL.md"), DEPLOY).unwrap();
    std::fs::write(skill_dir.join("steps.txt"), "step one\n").unwrap();
    let outside = skills.path().canonicalize().unwrap().join("secret.txt");
    std::fs::write(&outside, "not a skill\n").unwrap();
    let script = json!([
        {"tool_calls": [
            {"id": "r1", "name": "read", "arguments": {"path": skill_dir.join("SKILL.md")}},
            {"id": "r2", "name": "read", "arguments": {"path": skill_dir.join("steps.txt")}},
            {"id": "r3", "name": "read", "arguments": {"path": outside}}
        ]},
        {"text": "read"}
    ]);
    let mut options = support::rpc::Options::faux(script);
    options
        .args
        .extend(["--skill".to_string(), skill_dir.display().to_string()]);
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "deploy"}))
        .await;
    let end = pith.until_agent_end().await;
    let result = |id: &str| {
        end["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["toolCallId"] == id)
            .unwrap()
            .clone()
    };
    assert!(
        result("r1")["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Run `make deploy`."),
        "{}",
        result("r1")
    );
    assert_eq!(result("r2")["content"][0]["text"], "step one\n");
    // The default sandbox mode reads anywhere but the deny list, so the file beside the skill
    // is readable too.
    assert_eq!(result("r3")["content"][0]["text"], "not a skill\n");
}

/// Frontmatter is YAML as in pi: folded, literal and quoted descriptions of templates and
/// skills are listed by `get_commands` exactly as pi 1.5.2 lists them (its transcript of the
/// same files, `q_yaml_frontmatter`).
#[tokio::test(flavor = "multi_thread")]
async fn yaml_frontmatter_descriptions_equal_pis() {
    let fixture = support::repo_root().join("tests/fixtures/pi-1.5-golden/q_yaml_frontmatter");
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("scenario.json")).unwrap())
            .unwrap();
    let theirs = support::rpc::golden_frames(&fixture.join("transcript.jsonl"))
        .into_iter()
        .find(|f| f["id"] == "c1")
        .unwrap();
    let server = FakeLlm::start(json!([])).await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.args.push("--approve".into());
    for (path, text) in scenario["files"].as_object().unwrap() {
        options
            .work_files
            .push((path.clone(), text.as_str().unwrap().to_string()));
    }
    let mut pith = Pith::spawn(options).await;
    let ours = pith.call("c", json!({"type": "get_commands"})).await;
    let described = |answer: &Value| -> Vec<(String, String)> {
        answer["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["source"] != "extension")
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["description"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(described(&ours), described(&theirs));
}

/// pi's `enableSkillCommands: false`: skills are no `/skill:name` commands (not listed, not
/// expanded), and the model still has them in its prompt.
#[tokio::test(flavor = "multi_thread")]
async fn skill_commands_can_be_turned_off() {
    let server = FakeLlm::start(json!([{"text": "ok"}])).await;
    let mut options = anthropic_fake(&server.url, "fake-model");
    options.agent_files.extend([
        ("skills/deploy/SKILL.md".to_string(), DEPLOY.to_string()),
        (
            "settings.json".to_string(),
            json!({"enableSkillCommands": false}).to_string(),
        ),
    ]);
    let mut pith = Pith::spawn(options).await;
    let commands = pith.call("c", json!({"type": "get_commands"})).await;
    assert!(!commands.to_string().contains("skill:deploy"), "{commands}");
    pith.call(
        "p",
        json!({"type": "prompt", "message": "/skill:deploy now"}),
    )
    .await;
    pith.until_agent_end().await;
    let request = &server.requests()[0];
    assert_eq!(user_text(request), "/skill:deploy now");
    assert!(request["body"].to_string().contains("deploy"));
}
