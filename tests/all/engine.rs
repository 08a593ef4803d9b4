//! The engine without a transport: a session built through the library and driven through its
//! Rust API, with its events collected in memory by a sink of the test's own — no RPC mode, no
//! frames, no pipes — runs a prompt, a real tool call (the first-party `read` component) and the
//! answer after it.

use std::sync::{Arc, Mutex};

use pith::agent::event::{AssistantUpdate, EventSink, SessionEvent, SinkFuture};
use pith::agent::models::ModelRegistry;
use pith::agent::session::Session;
use pith::agent::session::submit::{Disposition, Submission};
use pith::agent_dir::AgentDir;
use pith::cli::Args;
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;
use serde_json::json;

/// Keeps what the engine said.
#[derive(Default)]
struct Collected {
    kinds: Mutex<Vec<String>>,
    deltas: Mutex<String>,
}

impl EventSink for Collected {
    fn emit(&self, event: &SessionEvent) {
        self.kinds.lock().unwrap().push(event.kind().to_string());
    }

    fn message_update<'a>(&'a self, update: &AssistantUpdate<'_>) -> SinkFuture<'a> {
        if let pith::agent::event::UpdatePayload::Delta(delta) = update.payload
            && update.kind.appends_text()
        {
            self.deltas.lock().unwrap().push_str(delta);
        }
        Box::pin(std::future::ready(()))
    }
}

/// A session over the faux provider replaying `script`, in a workspace holding `notes.txt`.
async fn session(script: serde_json::Value) -> (tempfile::TempDir, Session, Arc<Collected>) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "hello from the workspace").unwrap();
    let settings = Settings::from_value(json!({
        "plugins": {"faux": {"config": {"PITH_FAUX_SCRIPT": script.to_string()}}}
    }));
    let (host, errors) = PluginHost::load(HostOptions {
        workspace: work.clone(),
        plugin_dirs: Vec::new(),
        cache_dir: Some(crate::support::shared_cache()),
        settings: settings.clone(),
        embedded: true,
        plugin_files: Vec::new(),
        no_extensions: true,
        sandbox: std::sync::Arc::new(pith::sandbox::SandboxPolicy::workspace_write(&work)),
    })
    .await
    .unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let mut models = ModelRegistry::from_host(&host);
    let args = Args::parse(
        [
            "--provider",
            "faux",
            "--model",
            "faux-model",
            "--no-session",
        ]
        .map(String::from),
    )
    .unwrap();
    let agent_dir = AgentDir::at(dir.path().join("agent"));
    let config =
        pith::commands::startup::session_config(&args, &settings, &mut models, work, &agent_dir)
            .unwrap();
    let sink = Arc::new(Collected::default());
    let session = Session::new(Arc::new(host), sink.clone(), models, config);
    (dir, session, sink)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_runs_end_to_end_with_an_in_memory_sink() {
    let (_dir, session, sink) = session(json!([
        {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "I see notes.txt", "chunks": 3}
    ]))
    .await;

    // Awaiting the run's handle means every event of it was emitted (`agent_settled` too):
    // what a front-end that answers a prompt when its run ends relies on.
    let Ok(Disposition::Started(run)) = session.submit(Submission::text("what is here?")).await
    else {
        panic!("the prompt does not start a run");
    };
    let run = run.spawn();
    tokio::time::timeout(std::time::Duration::from_secs(20), run)
        .await
        .expect("the run ends")
        .expect("the run's task completes");

    let kinds = sink.kinds.lock().unwrap().clone();
    let expected = [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
        "agent_settled",
    ];
    assert_eq!(kinds, expected);
    assert_eq!(*sink.deltas.lock().unwrap(), "I see notes.txt");
    let messages = session.with_messages(|messages| json!({ "messages": messages }));
    // The session's own record of its prompt and tools comes first (pi 1.5's system message).
    assert_eq!(messages["messages"][0]["role"], "system");
    let tool_result = &messages["messages"][3];
    assert_eq!(tool_result["role"], "toolResult");
    assert!(
        tool_result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello from the workspace"),
        "{tool_result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_claimed_and_never_started_gives_the_session_back() {
    let (_dir, session, _sink) = session(json!([{"text": "answered"}])).await;
    let Ok(Disposition::Started(run)) = session.submit(Submission::text("first")).await else {
        panic!("the prompt does not start a run");
    };
    assert!(session.is_streaming());
    drop(run);
    assert!(!session.is_streaming());
    let Ok(Disposition::Started(run)) = session.submit(Submission::text("second")).await else {
        panic!("the session does not take a prompt after a dropped run");
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), run.spawn())
        .await
        .expect("the run ends")
        .expect("the run's task completes");
    let messages = session.with_messages(|messages| json!({ "messages": messages }));
    let texts: Vec<&str> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["second"]);
}
