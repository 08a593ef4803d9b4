//! `navigate_tree` and `set_entry_label` over the real binary: the leaf moves inside the same
//! file, the next prompt branches there, labels show in `get_tree`, and an extension can
//! refuse a move (`session_before_tree`).

use serde_json::{Value, json};

use crate::support::rpc::{Pith, message_texts, persistent};

/// Every node of a `get_tree` answer, depth first.
fn nodes(tree: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack: Vec<Value> = tree.as_array().cloned().unwrap_or_default();
    stack.reverse();
    while let Some(node) = stack.pop() {
        let mut children = node["children"].as_array().cloned().unwrap_or_default();
        children.reverse();
        stack.extend(children);
        out.push(node);
    }
    out
}

/// The id of the `n`-th message entry with `role`.
fn message_id(tree: &Value, role: &str, n: usize) -> String {
    nodes(tree)
        .iter()
        .filter(|node| node["entry"]["message"]["role"] == role)
        .nth(n)
        .map(|node| node["entry"]["id"].as_str().unwrap().to_string())
        .unwrap()
}

async fn tree(pith: &mut Pith) -> Value {
    pith.call("t", json!({"type": "get_tree"})).await["data"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_leaf_moves_inside_the_file_and_the_next_prompt_branches_there() {
    let script = json!([{"text": "one"}, {"text": "two"}, {"text": "three"}]);
    let mut pith = Pith::spawn(persistent(script, &[])).await;
    for (id, text) in [("p1", "first"), ("p2", "second")] {
        pith.call(id, json!({"type": "prompt", "message": text}))
            .await;
        pith.until_agent_end().await;
    }
    let before = tree(&mut pith).await;
    let first_answer = message_id(&before["tree"], "assistant", 0);
    let second_prompt = message_id(&before["tree"], "user", 1);

    // To an answer: the conversation ends there.
    let moved = pith
        .call(
            "n1",
            json!({"type": "navigate_tree", "entryId": first_answer}),
        )
        .await;
    assert_eq!(
        moved["data"],
        json!({"cancelled": false, "leafId": first_answer}),
        "{moved}"
    );
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    assert_eq!(message_texts(&messages), ["first", "one"]);

    // The next prompt starts a branch beside the second prompt, in the same file.
    pith.call("p3", json!({"type": "prompt", "message": "third"}))
        .await;
    pith.until_agent_end().await;
    let after = tree(&mut pith).await;
    let branch_point = nodes(&after["tree"])
        .into_iter()
        .find(|node| node["entry"]["id"] == first_answer.as_str())
        .unwrap();
    let children: Vec<&str> = branch_point["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["entry"]["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(children, ["second", "third"], "two branches at the answer");
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let file = state["data"]["sessionFile"].as_str().unwrap().to_string();
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.matches("\"role\":\"user\"").count(), 3, "one file");

    // To a user message: the leaf is its parent and its text comes back to edit.
    let moved = pith
        .call(
            "n2",
            json!({"type": "navigate_tree", "entryId": second_prompt}),
        )
        .await;
    assert_eq!(moved["data"]["editorText"], "second", "{moved}");
    assert_eq!(moved["data"]["leafId"], first_answer.as_str());

    // Labels: set, shown in get_tree, cleared.
    let labelled = pith
        .call(
            "l1",
            json!({"type": "set_entry_label", "entryId": first_answer, "label": "good answer"}),
        )
        .await;
    assert_eq!(labelled["success"], true, "{labelled}");
    let with_label = tree(&mut pith).await;
    let node = nodes(&with_label["tree"])
        .into_iter()
        .find(|node| node["entry"]["id"] == first_answer.as_str())
        .unwrap();
    assert_eq!(node["label"], "good answer", "{node}");
    pith.call(
        "l2",
        json!({"type": "set_entry_label", "entryId": first_answer}),
    )
    .await;
    let cleared = tree(&mut pith).await;
    let node = nodes(&cleared["tree"])
        .into_iter()
        .find(|node| node["entry"]["id"] == first_answer.as_str())
        .unwrap();
    assert!(node.get("label").is_none(), "{node}");

    // Failures name the cause.
    for (id, command, error) in [
        (
            "e1",
            json!({"type": "navigate_tree", "entryId": "nope"}),
            "Entry not found: nope",
        ),
        (
            "e2",
            json!({"type": "set_entry_label", "entryId": "nope", "label": "x"}),
            "Entry not found: nope",
        ),
        (
            "e3",
            json!({"type": "navigate_tree"}),
            "Missing required field \"entryId\"",
        ),
    ] {
        let answer = pith.call(id, command).await;
        assert_eq!(answer["success"], false, "{answer}");
        assert!(
            answer["error"].as_str().unwrap().contains(error),
            "{answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn navigating_is_refused_while_a_run_streams() {
    let script = json!([{"text": "slow answer", "first_delay_ms": 2000}]);
    let mut pith = Pith::spawn(persistent(script, &[])).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let answer = pith
        .call("n", json!({"type": "navigate_tree", "entryId": "x"}))
        .await;
    assert_eq!(answer["success"], false);
    assert!(
        answer["error"].as_str().unwrap().contains("abort it first"),
        "{answer}"
    );
    pith.until_agent_end().await;
}
