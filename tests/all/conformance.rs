//! Conformance with pi's RPC mode: each scenario recorded from pi 1.5.2 (in
//! `tests/fixtures/pi-1.5-golden/`, under pith's default profile) and from pi 0.73.1 (in
//! `tests/fixtures/pi-golden/`, under `--pi-protocol 0.73`) is replayed against the real `pith`
//! binary, with the `faux` provider or the real provider against the fake server playing the
//! scenario's scripted model, and the frames are compared one by one: same types, same fields
//! in the same order, same content block kinds. Where pith deliberately differs, the test names
//! the difference.

use crate::support;

use std::path::PathBuf;

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, anthropic_fake, golden_frames, openai_fake, shape};
use serde_json::{Value, json};

/// A set of pi transcripts and the profile that replays it.
#[derive(Clone, Copy, PartialEq)]
enum Golden {
    /// pi 0.73.1's transcripts, replayed under `--pi-protocol 0.73`.
    Pi073,
    /// pi 1.5.2's transcripts, replayed under the default profile.
    Pi15,
}

impl Golden {
    fn fixture(self, name: &str) -> PathBuf {
        let dir = match self {
            Golden::Pi073 => "tests/fixtures/pi-golden",
            Golden::Pi15 => "tests/fixtures/pi-1.5-golden",
        };
        support::repo_root().join(dir).join(name)
    }
}

/// Which provider plays the scenario's model.
#[derive(Clone, Copy)]
enum Via {
    /// The scripted `faux` provider.
    Faux,
    /// The real provider of the scenario's wire format (anthropic-messages, or
    /// openai-completions for `fake-openai`) against the fake server, as pi was.
    Real,
}

/// Replays a scenario's steps against pith; returns every frame pith wrote.
async fn replay(golden: Golden, name: &str, via: Via) -> Vec<Value> {
    let scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(golden.fixture(name).join("scenario.json")).unwrap(),
    )
    .unwrap();
    let reasoner = scenario["model_args"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v == "fake-reasoner"));
    let mut _server = None;
    let options = match via {
        Via::Faux => {
            let model = if reasoner {
                "faux-reasoner"
            } else {
                "faux-model"
            };
            let mut options = Options::faux(scenario["fake_llm"].clone());
            options.args = vec![
                "--provider".into(),
                "faux".into(),
                "--model".into(),
                model.into(),
                "--no-session".into(),
            ];
            options
        }
        Via::Real => {
            let server = FakeLlm::start(scenario["fake_llm"].clone()).await;
            let openai = scenario["model_args"]
                .as_array()
                .is_some_and(|a| a.iter().any(|v| v == "fake-openai"));
            let options = if name == "g_models" {
                // pi's models.json for this scenario: two Anthropic-format models and one OpenAI one.
                let mut options = anthropic_fake(&server.url, "fake-model");
                let models = json!({"providers": {
                    "fake": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "fake-key", "models": [
                        {"id": "fake-model", "name": "Fake Model", "contextWindow": 200000, "maxTokens": 8192},
                        {"id": "fake-reasoner", "name": "Fake Reasoner", "reasoning": true, "contextWindow": 200000, "maxTokens": 16384}]},
                    "fake-openai": {"baseUrl": format!("{}/v1", server.url), "api": "openai-completions", "apiKey": "fake-key", "models": [
                        {"id": "fake-gpt", "name": "Fake GPT", "contextWindow": 128000, "maxTokens": 4096}]}}});
                options.agent_files = vec![("models.json".into(), models.to_string())];
                options
            } else if openai {
                openai_fake(&server.url, "fake-gpt")
            } else {
                let small = scenario["model_args"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|v| v == "fake-small"));
                anthropic_fake(
                    &server.url,
                    if reasoner {
                        "fake-reasoner"
                    } else if small {
                        "fake-small"
                    } else {
                        "fake-model"
                    },
                )
            };
            _server = Some(server);
            options
        }
    };
    let mut options = options;
    if golden == Golden::Pi073 {
        options.args.extend(["--pi-protocol".into(), "0.73".into()]);
    }
    if let Some(settings) = scenario.get("settings") {
        options
            .agent_files
            .push(("settings.json".into(), settings.to_string()));
    }
    // `${WS}` is the scenario's scratch directory: pith's working directory here.
    if let Some(extra) = scenario["agent_args"].as_array() {
        options.args.retain(|a| a != "--no-session");
        options.args.extend(
            extra
                .iter()
                .filter_map(Value::as_str)
                .map(|a| a.replace("${WS}", ".")),
        );
    }
    let mut pith = Pith::spawn(options).await;
    for (name, contents) in scenario["files"].as_object().into_iter().flatten() {
        std::fs::write(pith.work_dir().join(name), contents.as_str().unwrap_or("")).unwrap();
    }
    support::scenario::run_steps(&mut pith, &scenario, vec![("WS".into(), ".".into())]).await;
    pith.close_stdin();
    while pith.next_frame().await.is_some() {}
    assert_eq!(pith.exit_code().await, Some(0));
    assert!(
        pith.garbage.is_empty(),
        "non-JSON on stdout: {:?}",
        pith.garbage
    );
    pith.frames
}

/// True for an answer's `message_start`.
fn answer_start(frame: &Value) -> bool {
    frame["type"] == "message_start" && frame["message"]["role"] == "assistant"
}

/// Compares the shape sequences, frame by frame.
fn assert_same_shapes(name: &str, ours: &[Value], theirs: &[Value]) {
    // pi 1.5 races its own start against the provider's: an answer's `message_start` carries
    // the response id and first usage when the provider's start won, and neither when pi's did
    // (both happen in the same transcript, see the reference's PROTOCOL.md). pith always
    // starts with what the provider reported, so its start is accepted for either of pi's.
    let ours: Vec<Value> = ours
        .iter()
        .zip(theirs.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(frame, theirs)| {
            let mut frame = frame.clone();
            let raced =
                theirs.is_some_and(|t| answer_start(t) && t["message"].get("responseId").is_none());
            if answer_start(&frame)
                && raced
                && let Some(message) = frame["message"].as_object_mut()
            {
                message.remove("responseId");
            }
            frame
        })
        .collect();
    let frames = ours;
    let ours: Vec<String> = frames.iter().map(shape).collect();
    let theirs: Vec<String> = theirs.iter().map(shape).collect();
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        if a != b {
            eprintln!("{name}: pith's frame {i}: {}", frames[i]);
        }
        assert_eq!(
            a, b,
            "{name}: frame {i} differs\npith: {a}\npi:   {b}\nall of pith's: {ours:#?}"
        );
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{name}: frame counts differ\npith: {ours:#?}\npi: {theirs:#?}"
    );
}

/// Replays `name` from both golden sets with the real provider only.
async fn conform_real(name: &str) {
    futures_util::future::join_all(
        [Golden::Pi15, Golden::Pi073].map(|golden| conform_via(golden, name, Via::Real)),
    )
    .await;
}

/// Replays a scenario pi 0.73.1 has no transcript of (it lacks the commands or flags) from the
/// 1.5 set, with the real provider.
async fn conform_15(name: &str) {
    conform_via(Golden::Pi15, name, Via::Real).await;
}

/// Replays `name` from both golden sets, with both providers.
async fn conform(name: &str) {
    // The four replays are apart (each its own pith, server and directory) and mostly wait on
    // the scenario's pace: run together.
    let replays = [Golden::Pi15, Golden::Pi073]
        .into_iter()
        .flat_map(|golden| [Via::Faux, Via::Real].map(|via| conform_via(golden, name, via)));
    futures_util::future::join_all(replays).await;
}

async fn conform_via(golden: Golden, name: &str, via: Via) {
    let ours = replay(golden, name, via).await;
    let theirs = golden_frames(&golden.fixture(name).join("transcript.jsonl"));
    assert_same_shapes(name, &ours, &theirs);
    if golden == Golden::Pi073 {
        // Nested keys pi 1.5 added never reach a 0.73 host (the shapes compare the top levels).
        for frame in &ours {
            let text = frame.to_string();
            for key in [
                "totalFromProvider",
                "cacheWrite1h",
                "durationMs",
                "rawStopReason",
                "estimatedTokensAfter",
                "structuredContent",
                "\"role\":\"system\"",
            ] {
                assert!(!text.contains(key), "{name}: {key} in a 0.73 frame: {text}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fresh_state() {
    conform("a_fresh_state").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn text_answer() {
    conform("b_prompt_text").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_answer() {
    conform("b2_prompt_thinking").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn steering_and_follow_up_during_a_run() {
    conform("h_steer_followup").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_mid_stream() {
    conform("i_abort").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_and_its_result() {
    conform("c_bash_tool").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_through_openai_completions() {
    // faux orders blocks as the Anthropic wire does; only the real provider is compared here.
    conform_real("c2_openai_tool").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_read_tool_and_its_error_result() {
    conform("d_read_tool").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_commands() {
    conform_real("g_models").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn manual_compaction() {
    // The summary request is the fake server's next turn; faux picks turns by conversation.
    conform_real("m_compact").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compaction_that_keeps_a_small_tail() {
    conform_15("m2_compact_keep_small").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_cut_at_the_output_limit_never_run() {
    // The frames of pi's `failToolCallsFromTruncatedMessage`; the file checks are in `limits`.
    conform_15("p_truncated_tool_call").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_context_overflow_is_compacted_away_and_the_prompt_retried() {
    // pi 1.5: the failed run ends (`willRetry` false), its answer is taken out, then
    // `compaction_start` / `compaction_end` (reason overflow, `willRetry` true) and the run again.
    conform_15("r_overflow_recovery").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_compaction_frames_when_a_small_window_has_nothing_to_compact() {
    conform_15("r2_small_window_no_compaction").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_commands_pi_1_5_added() {
    conform_15("n_new_commands").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_named_at_startup() {
    conform_15("n2_name_flag").await;
}

/// pi 1.5.2's built-in `/mcp` as pi answers it outside its terminal (a notice, no run; with no
/// servers, where to add them). A deliberate difference: pi's `/llama` (a llama.cpp router
/// helper for its terminal) is not built in, so that prompt goes to the model, as in pi 0.73.1.
#[tokio::test(flavor = "multi_thread")]
async fn the_built_in_mcp_command_and_no_llama() {
    let golden = Golden::Pi15;
    let theirs = golden_frames(
        &golden
            .fixture("o_extension_commands")
            .join("transcript.jsonl"),
    );
    let listed: Vec<&str> = theirs[0]["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(listed, ["llama", "mcp"], "pi 1.5.2 lists its built-ins");
    let ours = replay(golden, "o_extension_commands", Via::Real).await;
    let commands = ours[0]["data"]["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0]["name"], "mcp");
    assert_eq!(
        commands[0]["sourceInfo"],
        theirs[0]["data"]["commands"][1]["sourceInfo"]
    );
    let dispositions: Vec<&Value> = ours
        .iter()
        .filter(|f| f["command"] == "prompt")
        .map(|f| &f["data"]["disposition"])
        .collect();
    assert_eq!(dispositions, [&json!("handled"), &json!("started")]);
    let notice = ours
        .iter()
        .find(|f| f["type"] == "extension_ui_request")
        .unwrap();
    let text = notice["message"].as_str().unwrap();
    assert!(
        text.starts_with("No MCP servers configured. Add them to ")
            && text.ends_with("/agent/mcp.json or .pi/mcp.json."),
        "{text}"
    );
    assert_eq!(notice["notifyType"], "info");
    let answers: Vec<&Value> = ours
        .iter()
        .filter(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| &f["message"]["content"][0]["text"])
        .collect();
    // One run (the scripted model's first answer, whatever its text): `/llama`'s.
    assert_eq!(answers.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_session_forked_renamed_exported_switched_and_cloned() {
    conform("j_session").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_command_and_abort_bash() {
    conform("e_bash_rpc").await;
}

/// Deliberate differences, named: every response keeps its id (pi drops it for unknown
/// commands), and `null` and other non-objects are parse errors (a `null` line kills pi).
#[tokio::test(flavor = "multi_thread")]
async fn malformed_input_gets_parse_errors_and_the_loop_goes_on() {
    let mut pith = Pith::spawn(Options::default()).await;
    pith.send_line("{not json").await;
    let frame = pith.next_frame().await.unwrap();
    assert_eq!(frame["command"], "parse");
    assert_eq!(frame["success"], false);
    assert!(
        frame["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse command: "),
        "{frame}"
    );
    assert!(frame.get("id").is_none());
    for line in ["", "   ", "null", "42", "\"just a string\"", "[]"] {
        pith.send_line(line).await;
        let frame = pith.next_frame().await.unwrap();
        assert_eq!(
            (
                frame["type"].as_str(),
                frame["command"].as_str(),
                frame["success"].as_bool()
            ),
            (Some("response"), Some("parse"), Some(false)),
            "{line:?}: {frame}"
        );
    }
    pith.send_bytes(b"\xff\xfe{}\n").await;
    let frame = pith.next_frame().await.unwrap();
    assert_eq!(
        frame["error"],
        "Failed to parse command: the line is not valid UTF-8"
    );
    // An object without a type keeps its id.
    pith.send(json!({"id": "nt"})).await;
    let frame = pith.next_frame().await.unwrap();
    assert_eq!(
        frame,
        json!({"id": "nt", "type": "response", "success": false, "error": "Unknown command: undefined (the command has no \"type\")"})
    );
    // An unknown command keeps its id (pi drops it).
    let frame = pith.call("u1", json!({"type": "no_such_command"})).await;
    assert_eq!(
        frame,
        json!({"id": "u1", "type": "response", "command": "no_such_command", "success": false, "error": "Unknown command: no_such_command"})
    );
    // CRLF is accepted; U+2028 is not a separator.
    pith.send_bytes(b"{\"id\":\"crlf\",\"type\":\"get_state\"}\r\n")
        .await;
    assert_eq!(pith.response("crlf").await["success"], true);
    pith.send_line("{\"id\":\"ls\",\"type\":\"set_session_name\",\"name\":\"a\u{2028}b\"}")
        .await;
    assert_eq!(pith.response("ls").await["success"], true);
    // A line of 100 MB gets a parse error with bounded memory, and the loop goes on.
    let big = vec![b'x'; 100 << 20];
    pith.send_bytes(&big).await;
    pith.send_bytes(b"\n").await;
    let frame = pith.next_frame().await.unwrap();
    assert!(
        frame["error"].as_str().unwrap().contains("over the"),
        "{frame}"
    );
    let alive = pith.call("alive", json!({"type": "get_state"})).await;
    assert_eq!(alive["success"], true);
}

/// A deliberate difference: stdin EOF lets the run in flight finish (pi exits at once and
/// drops it).
#[tokio::test(flavor = "multi_thread")]
async fn stdin_eof_finishes_the_run_in_flight_then_exits_zero() {
    let script = json!({"turns": [{"text": "one-shot answer", "chunks": 3, "delay_ms": 50}]});
    let mut pith = Pith::spawn(Options::faux(script)).await;
    pith.send(json!({"type": "prompt", "message": "go"})).await;
    pith.close_stdin();
    let end = pith.until_agent_end().await;
    // pi 1.5's run: the system message, the prompt, the answer.
    assert_eq!(end["messages"][0]["role"], "system");
    assert_eq!(end["messages"][2]["content"][0]["text"], "one-shot answer");
    assert_eq!(pith.next_frame().await.unwrap()["type"], "agent_settled");
    assert!(pith.next_frame().await.is_none());
    assert_eq!(pith.exit_code().await, Some(0));
}

/// A deliberate difference: pi (0.73.1 and 1.5.2) accepts any string as a queue mode and
/// answers success; pith answers an error that names the field and the modes it takes, and
/// keeps the mode it had.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_queue_mode_is_an_error_where_pi_accepts_it() {
    let mut pith = Pith::spawn(Options::default()).await;
    for kind in ["set_steering_mode", "set_follow_up_mode"] {
        let bad = pith.call("m", json!({"type": kind, "mode": "bogus"})).await;
        assert_eq!(
            bad,
            json!({"id": "m", "type": "response", "command": kind, "success": false,
                "error": "Field \"mode\" must be one of \"all\", \"one-at-a-time\", got \"bogus\""})
        );
    }
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["steeringMode"], "one-at-a-time");
    assert_eq!(state["data"]["followUpMode"], "one-at-a-time");
}
