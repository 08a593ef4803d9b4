//! `clientMessageId` over the real pipes: the host's id for a message is echoed in
//! `queue_update` and in the user message's `message_start`, and names a queued message for
//! `remove_queued`. Frames without ids are pi's, unchanged.

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

fn is_user_start(frame: &Value, text: &str) -> bool {
    frame["type"] == "message_start"
        && frame["message"]["role"] == "user"
        && frame["message"]["content"][0]["text"] == text
}

/// The first frame read so far or from now on that matches (a command's response may come
/// after the event it caused).
async fn frame(pith: &mut Pith, matches: impl Fn(&Value) -> bool) -> Value {
    if let Some(seen) = pith.frames.iter().find(|f| matches(f)) {
        return seen.clone();
    }
    pith.wait_for(matches).await
}

#[tokio::test(flavor = "multi_thread")]
async fn client_message_ids_are_echoed_and_name_a_queued_message_to_remove() {
    let script = json!([{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "four"}]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    pith.call(
        "p1",
        json!({"type": "prompt", "message": "first", "clientMessageId": "c-1"}),
    )
    .await;
    let start = frame(&mut pith, |f| is_user_start(f, "first")).await;
    assert_eq!(start["clientMessageId"], "c-1");
    let keys = crate::support::keys(&start);
    assert_eq!(keys, ["type", "message", "clientMessageId"]);
    pith.wait_for(|f| f["type"] == "agent_settled").await;

    // Queued while idle (delivered with the next prompt): the ids ride beside the texts.
    for (id, text, client) in [("f1", "later one", "c-2"), ("f2", "later two", "c-3")] {
        let queued = pith
            .call(
                id,
                json!({"type": "follow_up", "message": text, "clientMessageId": client}),
            )
            .await;
        assert_eq!(queued["success"], true, "{queued}");
    }
    let update = frame(&mut pith, |f| {
        f["type"] == "queue_update" && f["followUp"] == json!(["later one", "later two"])
    })
    .await;
    assert_eq!(
        update["clientMessageIds"],
        json!({"steering": [], "followUp": ["c-2", "c-3"]})
    );

    let removed = pith
        .call(
            "r1",
            json!({"type": "remove_queued", "clientMessageId": "c-2"}),
        )
        .await;
    assert_eq!(removed["success"], true, "{removed}");
    let update = frame(&mut pith, |f| {
        f["type"] == "queue_update" && f["followUp"] == json!(["later two"])
    })
    .await;
    assert_eq!(
        update["clientMessageIds"],
        json!({"steering": [], "followUp": ["c-3"]})
    );

    // Bad input: an id no queued message has, a missing id, an id that is not a string.
    let again = pith
        .call(
            "r2",
            json!({"type": "remove_queued", "clientMessageId": "c-2"}),
        )
        .await;
    assert_eq!(
        again["error"],
        "No queued message with clientMessageId \"c-2\": it was delivered, removed, or never queued with that id"
    );
    let missing = pith.call("r3", json!({"type": "remove_queued"})).await;
    assert_eq!(missing["success"], false, "{missing}");
    let wrong = pith
        .call(
            "f3",
            json!({"type": "follow_up", "message": "x", "clientMessageId": 5}),
        )
        .await;
    assert_eq!(wrong["success"], false, "{wrong}");
    assert!(
        wrong["error"].as_str().unwrap().contains("clientMessageId"),
        "{wrong}"
    );

    // The next prompt (without an id: pi's frame) delivers the follow-up left, with its id;
    // the removed one never comes.
    pith.call("p2", json!({"type": "prompt", "message": "plain"}))
        .await;
    let plain = frame(&mut pith, |f| is_user_start(f, "plain")).await;
    assert!(plain.get("clientMessageId").is_none(), "{plain}");
    let delivered = frame(&mut pith, |f| is_user_start(f, "later two")).await;
    assert_eq!(delivered["clientMessageId"], "c-3");
    pith.wait_for(|f| f["type"] == "agent_settled").await;
    assert!(
        !pith.frames.iter().any(|f| is_user_start(f, "later one")),
        "the removed follow-up is not delivered"
    );
    assert!(
        pith.frames
            .iter()
            .filter(|f| f["type"] == "queue_update")
            .filter(|f| f["followUp"] == json!([]) && f["steering"] == json!([]))
            .all(|f| f.get("clientMessageIds").is_none()),
        "empty queues carry no ids"
    );
}
