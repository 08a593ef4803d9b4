//! `get_pending_ui_requests` over the real pipes: the dialogs a host lost, listed until they
//! are answered or time out.

use crate::extensions::{is_ui, notified, spawn_with};
use crate::support::rpc::Pith;
use serde_json::{Value, json};

/// `get_pending_ui_requests`' list.
async fn pending(pith: &mut Pith, id: &str) -> Value {
    let response = pith
        .call(id, json!({"type": "get_pending_ui_requests"}))
        .await;
    assert_eq!(response["success"], true, "{response}");
    response["data"]["requests"].clone()
}

/// A host that lost a dialog (a reconnect, a dropped frame) asks which are open and answers
/// them by id; answered and timed-out dialogs leave the list.
#[tokio::test(flavor = "multi_thread")]
async fn open_dialogs_are_listed_until_answered_or_timed_out() {
    let (mut pith, _plugins) = spawn_with(&["testing/ext-probe"], json!([])).await;
    assert_eq!(pending(&mut pith, "p0").await, json!([]));

    pith.send(json!({"id": "a", "type": "prompt", "message": "/ask confirm 60000"}))
        .await;
    let request = pith.wait_for(|f| is_ui(f, "confirm")).await;
    let listed = pending(&mut pith, "p1").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let mut again = listed[0].clone();
    let remaining = again
        .as_object_mut()
        .unwrap()
        .remove("remainingMs")
        .unwrap();
    let remaining = remaining.as_u64().unwrap();
    assert!(remaining > 0 && remaining <= 60_000, "{remaining}");
    assert_eq!(again, request, "the frame as it was sent, with remainingMs");
    pith.send(json!({"type": "extension_ui_response", "id": request["id"], "confirmed": true}))
        .await;
    assert_eq!(notified(&mut pith, "answer:").await, "answer: true");
    assert_eq!(pending(&mut pith, "p2").await, json!([]));

    // A dialog without a timeout has no remainingMs; once timed out, a dialog is gone.
    pith.send(json!({"id": "b", "type": "prompt", "message": "/ask input"}))
        .await;
    let input = pith.wait_for(|f| is_ui(f, "input")).await;
    let listed = pending(&mut pith, "p3").await;
    assert_eq!(listed, json!([input]));
    pith.send(json!({"type": "extension_ui_response", "id": input["id"], "cancelled": true}))
        .await;
    assert_eq!(notified(&mut pith, "answer:").await, "answer: None");
    pith.call(
        "c",
        json!({"type": "prompt", "message": "/ask confirm 100"}),
    )
    .await;
    pith.since_sent(|f| is_ui(f, "cancel")).await;
    assert_eq!(pending(&mut pith, "p4").await, json!([]));
}
