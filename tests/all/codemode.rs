//! pi 1.5.2's `codemode` tool over the real binary: a script the model writes calls built-in
//! and MCP tools (the official `server-everything`) in parallel through the session's tool
//! pipeline, keeps values across scripts per branch, and is held to its limits (computation,
//! memory, output, abort, the sandbox) while the session goes on.

use serde_json::{Value, json};

use crate::mcp::{everything, node};
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, openai_fake, persistent};

/// A turn whose answer is one `codemode` call.
fn script_turn(id: &str, code: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "codemode", "arguments": {"code": code}}]})
}

/// The text of a tool result message's content.
fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// The result message of the call `id`.
fn result_of(pith: &Pith, id: &str) -> Value {
    pith.frames
        .iter()
        .find(|f| {
            f["type"] == "message_end"
                && f["message"]["role"] == "toolResult"
                && f["message"]["toolCallId"] == id
        })
        .map(|f| f["message"].clone())
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// The `tool_execution_end` of the call `id`.
fn end_of(pith: &Pith, id: &str) -> Value {
    pith.frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no end for {id}"))
}

/// The tool named `name` of a chat-completions request body.
fn declared<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
}

/// The model's script runs `bash`, `read` and the MCP server's `echo` in parallel with
/// `Promise.allSettled`; each call runs as a nested call (`<call>/<n>`, `parentToolCallId`),
/// and only the script's output reaches the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_script_calls_built_in_and_mcp_tools_in_parallel() {
    let code = "const settled = await Promise.allSettled([\n  tools.bash({command: 'echo hi'}),\n  tools.read({path: 'a.txt'}),\n  tools.read({path: 'missing.txt'}),\n  tools.mcp__everything__echo({message: 'from a script'}),\n  tools.word_count({path: 'a.txt'}),\n]);\ntext(settled.map((s) => s.status).join(','));\nconst [shell, file, missing, echo] = settled;\nconsole.log('exit', shell.value.exit_code, JSON.stringify(shell.value.output));\ntext(file.value);\ntext(missing.reason.message.includes('missing.txt'));\nreturn echo.value.content[0].text;";
    let server = FakeLlm::start(json!([
        script_turn("call_1", code),
        {"text": "Done."}
    ]))
    .await;
    let mut options = openai_fake(&server.url, "fake-gpt");
    // The server's tools have pi's default exposure (`codemode`): reachable from scripts only.
    let config =
        json!({"mcpServers": {"everything": {"command": node(), "args": [everything(), "stdio"]}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    options.args.extend(["--tools".into(), "+codemode".into()]);
    options
        .work_files
        .push(("a.txt".into(), "file text\n".into()));
    // A third-party plugin's tool, beside the built-ins and the MCP server's.
    let plugins = crate::support::plugins_dir_with(&["examples/word-count"]);
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "Run it"}))
        .await;
    pith.until_agent_end().await;

    let result = result_of(&pith, "call_1");
    let text = text_of(&result);
    assert_eq!(result["isError"], false, "{result}");
    assert!(text.starts_with("Script completed\nWall time "), "{text}");
    assert!(
        text.contains("==> text 1/4 <==\nfulfilled,fulfilled,rejected,fulfilled,fulfilled"),
        "{text}"
    );
    assert!(text.contains("file text"), "{text}");
    assert!(text.contains("==> text 3/4 <==\ntrue"), "{text}");
    assert!(text.contains("Echo: from a script"), "{text}");
    assert!(
        text.contains("<console_output>\nexit 0 \"hi\\n\"\n</console_output>"),
        "{text}"
    );
    // Each call ran as a nested call of the script's, through the pipeline.
    let nested: Vec<&Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_start" && f["parentToolCallId"] == "call_1")
        .collect();
    let mut ids: Vec<&str> = nested
        .iter()
        .filter_map(|f| f["toolCallId"].as_str())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        ["call_1/1", "call_1/2", "call_1/3", "call_1/4", "call_1/5"]
    );
    assert!(pith.frames.iter().any(|f| f["type"] == "tool_execution_end"
        && f["toolCallId"] == "call_1/5"
        && f["toolName"] == "word_count"
        && f["isError"] == false));
    assert!(pith.frames.iter().any(|f| f["type"] == "tool_execution_end"
        && f["toolCallId"] == "call_1/4"
        && f["toolName"] == "mcp__everything__echo"
        && f["parentToolCallId"] == "call_1"));
    // The result message records them (pi's `nestedCalls`); nested results are no messages.
    let recorded = result["nestedCalls"]["calls"]
        .as_array()
        .unwrap_or_else(|| panic!("recorded: {result}"));
    assert_eq!(recorded.len(), 5, "{result}");
    assert_eq!(result["nestedCalls"]["complete"], true);
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let results = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .count();
    assert_eq!(
        results, 1,
        "only the script's result joins the conversation"
    );

    // The model was offered `codemode` with pi's description; the MCP tool only through it;
    // a declared tool says how scripts call it.
    let first = &server.requests()[0]["body"];
    let codemode = declared(first, "codemode")
        .unwrap_or_else(|| panic!("codemode declared: {}", first["tools"]));
    let description = codemode["function"]["description"].as_str().unwrap();
    assert!(description.starts_with("Run JavaScript that calls other tools."));
    assert!(declared(first, "mcp__everything__echo").is_none());
    let bash = declared(first, "bash").unwrap()["function"]["description"]
        .as_str()
        .unwrap();
    assert!(
        bash.contains("Codemode: `tools.bash(args)` resolves to `{ output, truncated, "),
        "{bash}"
    );
    // Tools reached from scripts are not offered to `tool_search` (pi's: `deferred` only),
    // also once the server is connected.
    let second = &server.requests()[1]["body"];
    assert!(
        declared(second, "tool_search").is_none(),
        "{}",
        second["tools"]
    );
    // The model saw the script's output, not the nested results.
    let second = second.to_string();
    assert!(second.contains("Echo: from a script"));
    assert_eq!(
        second.matches("file text").count(),
        1,
        "once, in the output"
    );
}

/// `store()` keeps a value for later scripts on the same branch: through a reopen of the
/// session file, and not on a branch forked before it was stored.
#[tokio::test(flavor = "multi_thread")]
async fn stored_values_follow_the_branch_and_survive_a_reopen() {
    let load = "return load('k') ?? 'empty';";
    let server = FakeLlm::start(json!([
        script_turn("call_1", "store('k', {n: 1}); return 'stored';"),
        {"text": "Stored."},
        script_turn("call_2", load),
        {"text": "Loaded."},
        script_turn("call_3", load),
        {"text": "On the fork."},
        script_turn("call_4", load),
        {"text": "Reopened."}
    ]))
    .await;
    let mut options = openai_fake(&server.url, "fake-gpt");
    options.args.retain(|a| a != "--no-session");
    options.args.extend(
        ["--session-dir", "sessions", "--tools", "+codemode"]
            .iter()
            .map(|s| s.to_string()),
    );
    let mut pith = Pith::spawn(options.clone()).await;
    pith.call("1", json!({"type": "prompt", "message": "one"}))
        .await;
    pith.until_agent_end().await;
    pith.call("2", json!({"type": "prompt", "message": "two"}))
        .await;
    pith.until_agent_end().await;
    assert!(text_of(&result_of(&pith, "call_2")).ends_with("{\"n\":1}"));
    let state = pith.call("s", json!({"type": "get_state"})).await;
    let file = state["data"]["sessionFile"].as_str().unwrap().to_string();
    let written = std::fs::read_to_string(&file).unwrap();
    let entry: Value = written
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["customType"] == "codemode-store")
        .expect("a codemode-store entry");
    assert_eq!(entry["type"], "custom");
    assert_eq!(entry["data"], json!({"set": {"k": {"n": 1}}, "delete": []}));

    // A fork before the value was stored does not see it.
    let forks = pith.call("f", json!({"type": "get_fork_messages"})).await;
    let first = forks["data"]["messages"][0]["entryId"].clone();
    pith.call("k", json!({"type": "fork", "entryId": first}))
        .await;
    pith.call("3", json!({"type": "prompt", "message": "alt"}))
        .await;
    pith.until_agent_end().await;
    assert!(text_of(&result_of(&pith, "call_3")).ends_with("Output:\nempty"));
    drop(pith);

    // The session reopened in a new process sees it.
    options
        .work_files
        .push(("kept/session.jsonl".into(), written));
    options
        .args
        .extend(["--session".into(), "kept/session.jsonl".into()]);
    let mut reopened = Pith::spawn(options).await;
    reopened
        .call("4", json!({"type": "prompt", "message": "three"}))
        .await;
    reopened.until_agent_end().await;
    let reloaded = text_of(&result_of(&reopened, "call_4"));
    assert!(reloaded.ends_with("{\"n\":1}"), "{reloaded}");
}

/// A script that computes without end, one that allocates without bound and one that prints
/// without bound are each stopped with a clear error, and the session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn runaway_scripts_are_stopped_and_the_session_goes_on() {
    let mut options = Options::faux(json!([
        script_turn("loop", "while (true) {}"),
        script_turn("alloc", "const kept = []; while (true) kept.push('x'.repeat(1 << 20) + kept.length);"),
        script_turn("print", "while (true) text('y'.repeat(1 << 20));"),
        script_turn("syntax", "return (;"),
        {"text": "Still here."}
    ]));
    options.args.extend(["--tools".into(), "+codemode".into()]);
    options.agent_files.push((
        "settings.json".into(),
        json!({"plugins": {"codemode": {"limits": {"deadlineMs": 2000, "memoryMb": 64}}}})
            .to_string(),
    ));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    let end = pith.until_agent_end().await;

    let looped = text_of(&result_of(&pith, "loop"));
    assert!(
        looped
            .contains("Script error:\nScript timed out: the script computed for more than 2000 ms"),
        "{looped}"
    );
    let allocated = text_of(&result_of(&pith, "alloc"));
    assert!(
        allocated.contains("Script error:\nInternalError: out of memory"),
        "{allocated}"
    );
    let printed = text_of(&result_of(&pith, "print"));
    assert!(
        printed.contains("RangeError: script output exceeded the limit of 16777216 characters"),
        "{printed}"
    );
    // The output kept is cut to the budget, the whole of it in a file.
    assert!(printed.contains("Warning: truncated output"), "{printed}");
    let syntax = text_of(&result_of(&pith, "syntax"));
    assert!(syntax.contains("Script error:\nSyntaxError"), "{syntax}");
    for id in ["loop", "alloc", "print", "syntax"] {
        assert_eq!(result_of(&pith, id)["isError"], true);
    }
    let last = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["text"], "Still here.", "{last}");
}

/// Aborting a run stops its script and the calls the script is waiting on; a nested call the
/// sandbox refuses arrives in the script as a rejected promise with the refusal's text.
#[tokio::test(flavor = "multi_thread")]
async fn abort_cancels_a_script_and_refusals_reach_it_as_rejections() {
    let refusal = "try { await tools.write({path: '/etc/pith-codemode-probe', content: 'x'}); return 'written'; } catch (error) { return 'refused: ' + error.message; }";
    let mut options = Options::faux(json!([
        script_turn("refused", refusal),
        {"text": "Refused."},
        script_turn("slow", "await tools.bash({command: 'sleep 30'}); return 'slept';"),
        {"text": "never"}
    ]));
    options.args.extend(["--tools".into(), "+codemode".into()]);
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "write"}))
        .await;
    pith.until_agent_end().await;
    let refused = text_of(&result_of(&pith, "refused"));
    assert!(refused.contains("Output:\nrefused: "), "{refused}");
    let direct = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == "refused/1")
        .expect("the nested write ended")
        .clone();
    assert_eq!(direct["isError"], true);
    let reason = direct["result"]["content"][0]["text"].as_str().unwrap();
    assert!(refused.contains(reason), "{refused} / {reason}");
    assert!(!std::path::Path::new("/etc/pith-codemode-probe").exists());

    let began = std::time::Instant::now();
    pith.call("q", json!({"type": "prompt", "message": "sleep"}))
        .await;
    pith.wait_for(|f| f["type"] == "tool_execution_start" && f["toolCallId"] == "slow/1")
        .await;
    let from = pith.frames.len();
    pith.call("a", json!({"type": "abort"})).await;
    if !pith.since(from).iter().any(|f| f["type"] == "agent_end") {
        pith.until_agent_end().await;
    }
    assert!(began.elapsed() < std::time::Duration::from_secs(20));
    let slow = text_of(&end_of(&pith, "slow")["result"]);
    assert!(slow.contains("Script aborted"), "{slow}");
    let bash_end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == "slow/1")
        .expect("the nested command ended");
    assert_eq!(bash_end["isError"], true);
}

/// Without `+codemode` (and no MCP server asking for it) there is no `codemode` tool;
/// `persistent` is used so the options of a plain session are checked.
#[tokio::test(flavor = "multi_thread")]
async fn codemode_is_off_unless_chosen() {
    let mut pith = Pith::spawn(persistent(json!([{"text": "hi"}]), &[])).await;
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    let names: Vec<&str> = tools["data"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["active"] == true)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"codemode"), "{names:?}");
}

/// An MCP server whose tools have pi's default exposure (`codemode`) turns `codemode` on once
/// it connects; `autoEnableCodemode: false` keeps it off.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_codemode_exposure_turns_codemode_on() {
    async fn active_once_connected(auto_enable: bool) -> bool {
        let mut config = json!({"mcpServers": {"everything": {"command": node(), "args": [everything(), "stdio"]}}});
        if !auto_enable {
            config["autoEnableCodemode"] = json!(false);
        }
        let mut options = Options::faux(json!([{"text": "hi"}]));
        options
            .agent_files
            .push(("mcp.json".into(), config.to_string()));
        let mut pith = Pith::spawn(options).await;
        for attempt in 0.. {
            let tools = pith
                .call(&format!("t{attempt}"), json!({"type": "get_tools"}))
                .await;
            let list = tools["data"]["tools"].as_array().unwrap().clone();
            let connected = list.iter().any(|t| t["mcp"]["state"] == "connected");
            if connected || attempt > 100 {
                return list
                    .iter()
                    .any(|t| t["name"] == "codemode" && t["active"] == true);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        unreachable!()
    }
    assert!(active_once_connected(true).await);
    assert!(!active_once_connected(false).await);
}

/// What varies between two runs of a script: the wall time, the working directory, a shell's
/// wall time, the stack lines of an error (pi's QuickJS and pith's engine name frames
/// differently), and a deadline's millisecond (pi subtracts its worker wait).
fn comparable(text: &str, work: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.replace(work, "<work>").lines() {
        if line.starts_with("    at ") {
            continue;
        }
        let line = if line.starts_with("Wall time ") {
            "Wall time <t> seconds".to_string()
        } else {
            line.replace("\"wall_time_seconds\":0.1", "\"wall_time_seconds\":0")
                .replace("after 299 ms", "after 300 ms")
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// pi 1.5.2's capture `tests/goldens-codemode/p_codemode` (see its NOTES.md), replayed: the
/// codemode tool's declaration, and the results of a script running `bash` and `read` in
/// parallel, of a failing script (partial output, a shell's non-zero exit resolving, dropped
/// store writes), of the discovery globals, and of a deadline, are pi's.
#[tokio::test(flavor = "multi_thread")]
async fn scripts_end_as_in_pis_capture() {
    let root = crate::support::repo_root().join("tests/goldens-codemode");
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("p_codemode.json")).unwrap())
            .unwrap();
    let server = FakeLlm::start(scenario["fake_llm"].clone()).await;
    let mut options = crate::support::rpc::anthropic_fake(&server.url, "fake-model");
    options.args.retain(|a| a != "--no-session");
    options
        .args
        .extend(["--session-dir".into(), "sessions".into()]);
    options
        .agent_files
        .push(("settings.json".into(), scenario["settings"].to_string()));
    options
        .work_files
        .push(("a.txt".into(), "alpha\nbeta\n".into()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "Use codemode."}))
        .await;
    pith.until_agent_end().await;
    let work = pith.work_dir().display().to_string();

    let golden = crate::support::rpc::golden_frames(&root.join("p_codemode/transcript.jsonl"));
    let ends = |frames: &[Value]| -> Vec<String> {
        frames
            .iter()
            .filter(|f| f["type"] == "tool_execution_end" && f["toolName"] == "codemode")
            .map(|f| text_of(&f["result"]))
            .collect()
    };
    let theirs = ends(&golden);
    let ours = ends(&pith.frames);
    assert_eq!(ours.len(), 4);
    let pi_work = "/tmp/pi3-golden/p_codemode/work";
    for index in [0, 1, 3] {
        assert_eq!(
            comparable(&ours[index], &work),
            comparable(&theirs[index], pi_work),
            "script {}",
            index + 1
        );
    }
    // The discovery script: the tools scripts see, and what it stored.
    let first_item = |text: &str| text.lines().nth(4).map(str::to_string);
    assert_eq!(first_item(&ours[2]), first_item(&theirs[2]), "{}", ours[2]);
    assert!(ours[2].ends_with("discovery done"), "{}", ours[2]);

    // The declaration: pi's schema and description (pith has no `models` global).
    let request = std::fs::read_to_string(root.join("p_codemode/requests.jsonl")).unwrap();
    let pi_request: Value = serde_json::from_str(request.lines().next().unwrap()).unwrap();
    let tool = |body: &Value| {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "codemode")
            .cloned()
            .unwrap()
    };
    let (pi_tool, our_tool) = (
        tool(&pi_request["body"]),
        tool(&server.requests()[0]["body"]),
    );
    assert_eq!(our_tool["input_schema"], pi_tool["input_schema"]);
    let pi_description: Vec<&str> = pi_tool["description"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("- `models`"))
        .collect();
    assert_eq!(
        our_tool["description"].as_str().unwrap(),
        pi_description.join("\n")
    );
}

/// The text items of a script's result (`==> text N/M <==` sections), without the header.
fn items(text: &str) -> Vec<String> {
    let body = text.split_once("Output:\n").map_or(text, |(_, body)| body);
    body.split("==> text ")
        .skip(1)
        .map(|item| {
            item.split_once("<==\n")
                .map_or("", |(_, t)| t)
                .trim_end()
                .to_string()
        })
        .collect()
}

/// pi 1.5.2's capture `tests/goldens-codemode/p2_codemode_mcp`, replayed against the same
/// server: an MCP call, an MCP call with bad arguments and a shell command in parallel, then
/// `ALL_TOOLS`, `searchTools` (with and without a namespace), `describeTool` and
/// `describeNamespace` over the server's tools give pi's values.
#[tokio::test(flavor = "multi_thread")]
async fn a_script_over_an_mcp_server_sees_what_pis_does() {
    let root = crate::support::repo_root().join("tests/goldens-codemode");
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("p2_codemode_mcp.json")).unwrap())
            .unwrap();
    let server = FakeLlm::start(scenario["fake_llm"].clone()).await;
    let mut options = crate::support::rpc::anthropic_fake(&server.url, "fake-model");
    let config = json!({"mcpServers": {"ever-thing": {
        "command": node(), "args": [everything(), "stdio"],
        "description": "Reference MCP test server"}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    options
        .agent_files
        .push(("settings.json".into(), scenario["settings"].to_string()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "Use the server."}))
        .await;
    pith.until_agent_end().await;

    let golden = crate::support::rpc::golden_frames(&root.join("p2_codemode_mcp/transcript.jsonl"));
    let result = |frames: &[Value]| {
        frames
            .iter()
            .find(|f| f["type"] == "tool_execution_end" && f["toolName"] == "codemode")
            .map(|f| text_of(&f["result"]))
            .expect("the script ended")
    };
    let (ours, theirs) = (items(&result(&pith.frames)), items(&result(&golden)));
    assert_eq!(ours.len(), 7, "{ours:#?}");
    for (index, (our, their)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            our.replace("\"wall_time_seconds\":0.1", "\"wall_time_seconds\":0"),
            their.replace("\"wall_time_seconds\":0.1", "\"wall_time_seconds\":0"),
            "item {}",
            index + 1
        );
    }
}
