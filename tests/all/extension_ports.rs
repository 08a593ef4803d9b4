//! pi's example extensions ported to pith's SDK (`plugins/examples/`), over the real binary
//! with the same scripted model, doing what pi's originals do.

use crate::extensions::notified;
use crate::support;
use crate::support::ports;
use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};
use std::process::Command;

/// `git` with `args` in `dir`; its trimmed stdout.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_commit_on_exit_commits_the_work_named_after_the_last_answer() {
    let plugins = support::plugins_dir_with(&["examples/auto-commit-on-exit"]);
    let mut options = Options::faux(json!([{"text": "Fixed the widget\nwith details below"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.agent_files = vec![(
        "settings.json".into(),
        json!({"plugins": {"auto-commit-on-exit": {"grant": {"process": true}}}}).to_string(),
    )];
    let mut pith = Pith::spawn(options).await;
    let work = pith.work_dir();
    git(&work, &["init", "-q"]);
    git(&work, &["config", "user.email", "test@example.com"]);
    git(&work, &["config", "user.name", "Test"]);
    std::fs::write(work.join("widget.txt"), "fixed\n").unwrap();

    pith.call("p", json!({"type": "prompt", "message": "fix the widget"}))
        .await;
    pith.until_agent_end().await;
    // The end of the session: pi's `session_shutdown`, awaited before the process exits.
    pith.close_stdin();
    assert_eq!(
        notified(&mut pith, "Auto-committed").await,
        "Auto-committed: [pi] Fixed the widget"
    );
    assert_eq!(pith.exit_code().await, Some(0));
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s"]),
        "[pi] Fixed the widget"
    );
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn bookmark_labels_the_last_answer_and_removes_it() {
    let plugins = support::plugins_dir_with(&["examples/bookmark"]);
    let mut options = Options::faux(json!([{"text": "an answer worth keeping"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    pith.call("n", json!({"type": "prompt", "message": "/bookmark"}))
        .await;
    assert_eq!(
        notified(&mut pith, "No assistant").await,
        "No assistant message to bookmark"
    );
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    pith.until_agent_end().await;
    pith.call(
        "b",
        json!({"type": "prompt", "message": "/bookmark keeper"}),
    )
    .await;
    assert_eq!(
        notified(&mut pith, "Bookmarked").await,
        "Bookmarked as: keeper"
    );
    let tree = pith.call("t", json!({"type": "get_tree"})).await;
    assert_eq!(
        answer_label(&tree["data"]["tree"]),
        Some(json!("keeper")),
        "{tree}"
    );
    pith.call("u", json!({"type": "prompt", "message": "/unbookmark"}))
        .await;
    assert_eq!(
        notified(&mut pith, "Removed").await,
        "Removed bookmark: keeper"
    );
    let tree = pith.call("t2", json!({"type": "get_tree"})).await;
    assert_eq!(answer_label(&tree["data"]["tree"]), None, "{tree}");
}

/// The label of the answer's node in a `get_tree` tree, if it has one.
fn answer_label(nodes: &serde_json::Value) -> Option<serde_json::Value> {
    nodes.as_array()?.iter().find_map(|node| {
        if node["entry"]["message"]["role"] == "assistant" {
            return node.get("label").cloned();
        }
        answer_label(&node["children"])
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn todo_keeps_its_list_in_the_results_as_pis_does() {
    let run = ports::replay("todo", "todo-list").await;
    // A batch's calls run in parallel and end in the order they finish (in pi and in pith), so
    // a loaded machine may swap two results: the decisions are compared as sets.
    let sorted = |mut decisions: Vec<serde_json::Value>| {
        decisions.sort_by_key(|d| d.to_string());
        decisions
    };
    let ours = ports::decisions(&run.ours);
    ports::assert_same_decisions(
        "todo",
        &sorted(ours.clone()),
        &sorted(ports::decisions(&run.theirs)),
    );
    // The list is rebuilt from the results: a later result carries the whole list.
    assert!(
        ours.iter()
            .any(|d| d["content"][0]["text"] == "[x] #1: Buy milk\n[ ] #2: Write tests"),
        "{ours:#?}"
    );
    assert_eq!(run.requests.len(), run.their_requests.len());
}

/// Replays `example` with its port and compares what each decided.
pub(crate) async fn same_as_pi(example: &str, port: &str) -> ports::Replayed {
    same_as_pi_with(example, port, json!({})).await
}

/// [`same_as_pi`] with more settings (the grants the port needs).
pub(crate) async fn same_as_pi_with(
    example: &str,
    port: &str,
    settings: serde_json::Value,
) -> ports::Replayed {
    let run = ports::replay_with(example, port, settings).await;
    ports::assert_same_decisions(
        example,
        &ports::decisions(&run.ours),
        &ports::decisions(&run.theirs),
    );
    run
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamic_tools_registers_tools_at_start_and_on_command() {
    same_as_pi("dynamic-tools", "dynamic-tools").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn event_bus_messages_reach_the_listener() {
    let run = ports::replay("event-bus", "event-bus").await;
    let started = json!({"method": "notify", "message": "Event from event-bus-example: Session started", "notifyType": "info"});
    let theirs = without_doubled_start(ports::decisions(&run.theirs), &started);
    ports::assert_same_decisions("event-bus", &ports::decisions(&run.ours), &theirs);
}

/// pi's decisions without the second of two `decision`s in a row: pi 1.5.2 sends
/// `session_start` twice for an RPC `new_session` (its runtime rebinds the extensions, then the
/// RPC handler rebinds them again), so an example's start-up notice comes twice; pith starts
/// the new session's extension once.
fn without_doubled_start(mut theirs: Vec<Value>, decision: &Value) -> Vec<Value> {
    let twice = theirs
        .windows(2)
        .position(|pair| pair[0] == *decision && pair[1] == *decision)
        .expect("pi's doubled session_start");
    theirs.remove(twice);
    theirs
}

#[tokio::test(flavor = "multi_thread")]
async fn model_status_follows_the_model() {
    let run = ports::replay("model-status", "model-status").await;
    let mut ours = ports::decisions(&run.ours);
    // pi 1.5.2 restores a switched-to session's model before the new session's extensions are
    // bound, so they never hear the `model_select` (`restore`) its docs promise; pith sends it,
    // and the example shows the restored model (without a notice, as it does for a restore).
    let restored =
        json!({"method": "setStatus", "statusKey": "model", "statusText": "🤖 fake-gpt"});
    let last = ours
        .iter()
        .rposition(|d| *d == restored)
        .expect("the restored model's status");
    ours.remove(last);
    ports::assert_same_decisions("model-status", &ours, &ports::decisions(&run.theirs));
}

#[tokio::test(flavor = "multi_thread")]
async fn trigger_compact_compacts_past_the_threshold_and_on_command() {
    same_as_pi("trigger-compact", "trigger-compact").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn preset_applies_the_flags_preset_and_the_commands() {
    // pi reads the user's presets from its agent directory; the port is given them as its
    // configuration (an extension reads no file outside the workspace).
    let scenario: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ports::fixture("preset").join("scenario.json")).unwrap(),
    )
    .unwrap();
    let presets = scenario["agent_files"]["presets.json"].clone();
    let settings = json!({"plugins": {"preset": {"grant": {"config": true, "workspace": "read"}, "config": {"presets": presets}}}});
    same_as_pi_with("preset", "preset", settings).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn structured_output_ends_the_run_with_its_result() {
    let run = same_as_pi("structured-output", "structured-output").await;
    assert_eq!(run.requests.len(), run.their_requests.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn summarize_asks_its_model_through_the_host() {
    let grant = json!({"plugins": {"summarize": {"grant": {"models": true}}}});
    let run = same_as_pi_with("summarize", "summarize", grant).await;
    assert_eq!(run.requests.len(), run.their_requests.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_compaction_summarizes_with_its_own_model() {
    let grant = json!({"plugins": {"custom-compaction": {"grant": {"models": true}}}});
    let run = same_as_pi_with("custom-compaction", "custom-compaction", grant).await;
    assert_eq!(run.requests.len(), run.their_requests.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_mode_plans_read_only_and_asks_what_next() {
    // `/todos` before a plan, `/plan`, a planning run with a blocked command, the plan's steps
    // and the select; the plan executed with its progress, `/todos` during and after it; a
    // second plan refined in the editor and its select cancelled; `/plan` to leave.
    same_as_pi("plan-mode", "plan-mode").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn jev_router_plans_on_one_model_and_implements_on_another() {
    let run = same_as_pi("jev-router", "jev-router").await;
    let model_of = |request: &Value| request.get("body").unwrap_or(request)["model"].clone();
    // Each request went to the physical model pi's router chose: Terra plans and makes the
    // first edit, Luna does the rest, the compaction's summary included.
    assert_eq!(
        run.requests.iter().map(model_of).collect::<Vec<_>>(),
        run.their_requests.iter().map(model_of).collect::<Vec<_>>(),
    );
    // The router state is stored on the branch as pi stores it.
    let states = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["type"] == "entry_appended")
            .map(|f| {
                json!([
                    f["entry"]["type"],
                    f["entry"]["customType"],
                    f["entry"]["data"]
                ])
            })
            .collect()
    };
    assert_eq!(states(&run.ours), states(&run.theirs));
    assert_eq!(states(&run.ours).len(), 2);
    // The selection stays the virtual model; the answers name the physical ones.
    let answer = |frames: &[Value], id: &str| {
        frames
            .iter()
            .find(|f| f["type"] == "response" && f["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no response {id}"))
    };
    for id in ["s0", "s1"] {
        let ours = answer(&run.ours, id);
        let theirs = answer(&run.theirs, id);
        for key in [
            "id",
            "name",
            "api",
            "provider",
            "reasoning",
            "thinkingLevelMap",
            "input",
            "contextWindow",
            "maxTokens",
        ] {
            assert_eq!(
                ours["data"]["model"][key], theirs["data"]["model"][key],
                "{id}: {key}"
            );
        }
        assert_eq!(
            ours["data"]["thinkingLevel"], theirs["data"]["thinkingLevel"],
            "{id}"
        );
    }
    let answered = |frames: &[Value]| -> Vec<Value> {
        answer(frames, "m1")["data"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "assistant")
            .map(|m| json!([m["provider"], m["model"], m["thinkingLevel"]]))
            .collect()
    };
    assert_eq!(answered(&run.ours), answered(&run.theirs));
    assert_eq!(answer(&run.ours, "c1")["success"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_virtual_model_routed_to_a_model_without_a_key_fails_the_request_and_the_session_goes_on()
{
    let plugins = support::plugins_dir_with(&["examples/jev-router"]);
    let options = Options {
        plugins_dir: Some(plugins.path().to_path_buf()),
        args: ["--no-session", "--model", "jev/auto"]
            .map(String::from)
            .to_vec(),
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    // Listed as pi lists it: its own provider needs no key.
    let models = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    let listed = models["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["provider"] == "jev" && m["id"] == "auto")
        .cloned()
        .expect("jev/auto listed");
    assert_eq!(listed["api"], "pi-virtual");
    assert_eq!(listed["contextWindow"], 272_000);
    // No key for openai-codex: the request ends with pi's text, on the virtual model.
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    let end = pith.until_agent_end().await;
    let answer = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "assistant")
        .cloned()
        .unwrap();
    assert_eq!(answer["stopReason"], "error");
    assert_eq!(
        answer["errorMessage"],
        "Virtual model jev/auto routed to openai-codex/gpt-5.6-terra, which has no credentials."
    );
    assert_eq!(
        (&answer["provider"], &answer["model"]),
        (&json!("jev"), &json!("auto"))
    );
    assert!(!pith.frames.iter().any(|f| f["type"] == "entry_appended"));
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["id"], "auto");
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamic_resources_adds_the_skill_and_template_beside_it() {
    let run = same_as_pi("dynamic-resources", "dynamic-resources").await;
    // The template and the skill are commands, as pi lists them.
    let listed = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .find(|f| f["type"] == "response" && f["command"] == "get_commands")
            .map(|f| {
                f["data"]["commands"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c["name"] == "dynamic" || c["name"] == "skill:dynamic-resources")
            .map(|c| json!([c["name"], c["description"], c["source"]]))
            .collect()
    };
    assert_eq!(listed(&run.ours), listed(&run.theirs));
    assert_eq!(listed(&run.ours).len(), 2);
    // `/dynamic` and `/skill:dynamic-resources` reach the model as pi sends them (the skill's
    // folder aside: the extension's folder differs).
    let last_user = |requests: &[Value]| -> Vec<String> {
        requests
            .iter()
            .map(|r| {
                let body = r.get("body").unwrap_or(r);
                let text = body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .map(|m| m["content"][0]["text"].as_str().unwrap_or("").to_string())
                    .unwrap_or_default();
                let folder = text
                    .split("References are relative to ")
                    .nth(1)
                    .and_then(|rest| rest.split(".\n").next())
                    .map(str::to_string);
                match folder {
                    Some(folder) => text.replace(&folder, "<folder>"),
                    None => text,
                }
            })
            .collect()
    };
    assert_eq!(last_user(&run.requests), last_user(&run.their_requests));
}

#[tokio::test(flavor = "multi_thread")]
async fn project_trust_is_asked_before_the_project_loads() {
    let run = ports::replay("project-trust", "project-trust").await;
    // Each names its own folder: the paths go.
    let without_paths = |decisions: Vec<Value>| -> Vec<Value> {
        decisions
            .into_iter()
            .map(|mut d| {
                if let Some(message) = d["message"].as_str()
                    && let Some((head, _)) = message.split_once(" in /")
                {
                    d["message"] = json!(format!("{head} in <cwd>"));
                }
                d
            })
            .collect()
    };
    ports::assert_same_decisions(
        "project-trust",
        &without_paths(ports::decisions(&run.ours)),
        &without_paths(ports::decisions(&run.theirs)),
    );
    // Asked once, before any session: the notice went to stderr, in pi's words.
    let asked = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix("project_trust fired for "))
            .filter_map(|l| l.split_once(" (").map(|(_, tail)| tail.to_string()))
            .collect()
    };
    assert_eq!(asked(&run.our_stderr), asked(&run.their_stderr));
    assert_eq!(asked(&run.our_stderr), ["mode: rpc, load: 1)"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_trigger_sends_what_is_written_to_a_file_outside_the_workspace() {
    // pi's example fixes /tmp/agent-trigger.txt. pith's test puts the file in a folder of its
    // own outside the test's directories (a granted folder holding the agent directory, as /tmp
    // does when the clone is under /tmp, is never opened), granted to the port; the user's
    // shell commands (the scenario writes the file with them) may write there too.
    let folder = tempfile::tempdir().unwrap();
    let folder = folder.path().canonicalize().unwrap();
    let trigger = folder.join("agent-trigger.txt").display().to_string();
    let settings = json!({
        "plugins": {"file-trigger": {
            "grant": {"dirs": true, "config": true}, "config": {"trigger-file": trigger}}},
        "sandbox": {"writableRoots": [folder]}
    });
    let manifest = std::fs::read_to_string(
        support::repo_root().join("plugins/examples/file-trigger/pith.toml"),
    )
    .unwrap();
    assert!(manifest.contains("dirs = [\"/tmp\"]"));
    let run = ports::replay_rewritten(
        "file-trigger",
        "file-trigger",
        settings,
        usize::MAX,
        &[
            ("/tmp/agent-trigger.txt", &trigger),
            ("\"/tmp\"", &format!("{folder:?}")),
        ],
    )
    .await;
    // Each names its own file: the paths go.
    let without_paths = |decisions: Vec<Value>| -> Vec<Value> {
        decisions
            .into_iter()
            .map(|mut d| {
                if d["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Watching "))
                {
                    d["message"] = json!("Watching <trigger file>");
                }
                d
            })
            .collect()
    };
    let watching =
        json!({"method": "notify", "message": "Watching <trigger file>", "notifyType": "info"});
    let theirs = without_doubled_start(without_paths(ports::decisions(&run.theirs)), &watching);
    ports::assert_same_decisions(
        "file-trigger",
        &without_paths(ports::decisions(&run.ours)),
        &theirs,
    );
    // The trigger reached the model as pi sends it, and started the turn.
    let custom = |frames: &[Value]| -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "custom")
            .map(|f| {
                json!([
                    f["message"]["customType"],
                    f["message"]["content"],
                    f["message"]["display"]
                ])
            })
            .collect()
    };
    assert_eq!(custom(&run.ours), custom(&run.theirs));
    assert_eq!(run.requests.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&trigger).unwrap(),
        "",
        "cleared after reading"
    );
}
