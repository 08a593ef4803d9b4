//! RPC and ACP send prompts down one path (`Session::submit`): the same prompts through both
//! front-ends, over the real pipes, leave the same conversation in the session file: an
//! `input` hook's transform and its handling, an extension's message before the run, an
//! extension command, and plain prompts.

use serde_json::{Value, json};

use crate::support;
use crate::support::acp::Acp;
use crate::support::rpc::{Options, Pith};

/// What the prompts are: a transform, a handled input, an injected message, a command, a
/// plain prompt.
const PROMPTS: [&str; 5] = [
    "upper:first question",
    "handled: not for the model",
    "INJECT second question",
    "/count",
    "third question",
];

fn options(plugins: &std::path::Path) -> Options {
    let mut options = Options::faux(json!([
        {"text": "one"}, {"text": "two"}, {"text": "three"}
    ]));
    options.args.retain(|a| a != "--no-session");
    options.plugins_dir = Some(plugins.to_path_buf());
    options
}

/// The conversation a session file holds: each message's role (or custom type) and text.
fn conversation(pith: &Pith) -> Vec<(String, String)> {
    let sessions = pith.dir.path().join("agent").join("sessions");
    let file = walkdir(&sessions)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap_or_else(|| panic!("no session file under {}", sessions.display()));
    let text = |content: &Value| -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    };
    std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| match entry["type"].as_str() {
            Some("message") => {
                let message = &entry["message"];
                let role = message["role"].as_str().unwrap_or_default().to_string();
                (role != "system").then(|| (role, text(&message["content"])))
            }
            Some("custom_message") => Some((
                format!(
                    "custom:{}",
                    entry["customType"].as_str().unwrap_or_default()
                ),
                text(&entry["content"]),
            )),
            _ => None,
        })
        .collect()
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walkdir(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_and_acp_prompts_take_the_same_path() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);

    let mut rpc = Pith::spawn(options(plugins.path())).await;
    let mut dispositions = Vec::new();
    for (i, text) in PROMPTS.iter().enumerate() {
        let id = format!("p{i}");
        let answer = rpc
            .call(&id, json!({"type": "prompt", "message": text}))
            .await;
        assert_eq!(answer["success"], true, "{answer}");
        let how = answer["data"]["disposition"].as_str().unwrap().to_string();
        if how == "started" {
            rpc.until_agent_end().await;
        }
        dispositions.push(how);
    }
    assert_eq!(
        dispositions,
        ["started", "handled", "started", "handled", "started"]
    );
    let by_rpc = conversation(&rpc);

    let mut acp = Acp::start(options(plugins.path()), json!({})).await;
    let session = acp.new_session().await;
    for text in PROMPTS {
        let done = acp.prompt(&session, text).await;
        assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    }
    let by_acp = conversation(&acp.pith);

    let texts = |list: &[(String, String)]| -> Vec<String> {
        list.iter()
            .map(|(who, text)| format!("{who}: {text}"))
            .collect()
    };
    assert_eq!(
        texts(&by_rpc),
        [
            "user: FIRST QUESTION",
            "assistant: one",
            "user: INJECT second question",
            "custom:probe-note: injected by the probe",
            "assistant: two",
            "user: third question",
            "assistant: three"
        ]
    );
    assert_eq!(texts(&by_acp), texts(&by_rpc));
}
