//! Liveness for hosts: `ping` answers at once with the uptime and whether a run is active, and
//! `shutdown` ends the run, answers, flushes and exits 0 without stdin closing (hosts such as
//! Erlang ports cannot close it).

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::rpc::{Options, Pith};

#[tokio::test(flavor = "multi_thread")]
async fn ping_and_shutdown() {
    let script = json!([{"text": "a long answer", "chunks": 200, "delay_ms": 20}]);
    let mut pith = Pith::spawn(Options::faux(script)).await;
    let idle = pith.call("p0", json!({"type": "ping"})).await;
    assert_eq!(idle["data"]["pong"], true, "{idle}");
    assert_eq!(idle["data"]["runActive"], false);
    assert!(idle["data"]["uptimeMs"].as_u64().is_some());
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.wait_for(|f| f["assistantMessageEvent"]["type"] == "text_delta")
        .await;
    let busy = pith.call("p1", json!({"type": "ping"})).await;
    assert_eq!(busy["data"]["runActive"], true, "{busy}");
    // stdin stays open (held here): shutdown alone ends the process.
    let mut stdin = pith.take_stdin();
    stdin
        .write_all(b"{\"id\":\"s\",\"type\":\"shutdown\"}\n")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let done = pith.response("s").await;
    assert_eq!(done["success"], true, "{done}");
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "agent_end")
        .cloned()
        .expect("the run ended before the answer");
    assert_eq!(
        end["messages"].as_array().unwrap().last().unwrap()["stopReason"],
        "aborted"
    );
    while pith.next_frame().await.is_some() {}
    assert_eq!(pith.exit_code().await, Some(0));
    drop(stdin);
}
