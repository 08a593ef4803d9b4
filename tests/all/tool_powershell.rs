//! pi's optional `powershell` tool over the real pipes: off by default, turned on by `--tools`
//! or `defaultTools`, run with pi's arguments and command text by the PowerShell the host finds
//! (here a stand-in `pwsh` on `PATH`, since no PowerShell can be installed offline), reported as
//! pi's shell tools report, and a clear error when there is none.

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// pi's description of the tool.
const DESCRIPTION: &str = "Execute a PowerShell command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";

/// A `pwsh` that prints its directory and its arguments, one per line in brackets, and exits 3
/// when the command says `fail`.
const STAND_IN: &str = "#!/bin/sh\nprintf 'cwd=%s\\n' \"$PWD\"\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\ncase \"$*\" in *fail*) exit 3;; esac\n";

fn end_text(frames: &[Value], id: &str) -> (String, bool) {
    let end = frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolCallId"] == id)
        .unwrap_or_else(|| panic!("no end for {id}"));
    (
        end["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        end["isError"] == true,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn powershell_runs_the_command_as_pi_gives_it_to_pwsh() {
    let bin = tempfile::tempdir().unwrap();
    let pwsh = bin.path().join("pwsh");
    std::fs::write(&pwsh, STAND_IN).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pwsh, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = json!([
        {"tool_calls": [{"id": "ok", "name": "powershell", "arguments": {"command": "Get-ChildItem | Select-Object Name"}}]},
        {"tool_calls": [{"id": "bad", "name": "powershell", "arguments": {"command": "fail now"}}]},
        {"text": "done"}
    ]);
    let mut options = Options::faux(script);
    options
        .args
        .extend(["--tools".to_string(), "-bash,+powershell".to_string()]);
    let path = std::env::var("PATH").unwrap_or_default();
    options
        .env
        .push(("PATH".into(), format!("{}:{path}", bin.path().display())));
    let mut pith = Pith::spawn(options).await;
    let tools = pith.call("t", json!({"type": "get_tools"})).await;
    let listed = tools["data"]["tools"].as_array().unwrap();
    let active: Vec<&str> = listed
        .iter()
        .filter(|t| t["active"] == true)
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(active, ["read", "powershell", "edit", "write"]);
    let tool = listed.iter().find(|t| t["name"] == "powershell").unwrap();
    assert_eq!(tool["description"], DESCRIPTION);
    assert_eq!(tool["parameters"]["required"], json!(["command"]));

    pith.call("p", json!({"type": "prompt", "message": "list"}))
        .await;
    pith.until_agent_end().await;
    let workspace = pith.work_dir().canonicalize().unwrap();
    let prefix = "try { [Console]::OutputEncoding=[System.Text.Encoding]::UTF8 } catch {}";
    let (ok, ok_error) = end_text(&pith.frames, "ok");
    assert!(!ok_error, "{ok}");
    assert_eq!(
        ok,
        format!(
            "cwd={}\n[-NoProfile]\n[-NonInteractive]\n[-ExecutionPolicy]\n[Bypass]\n[-Command]\n[{prefix}\nGet-ChildItem | Select-Object Name]\n",
            workspace.display()
        )
    );
    let (bad, bad_error) = end_text(&pith.frames, "bad");
    assert!(bad_error);
    assert!(
        bad.ends_with("catch {}\nfail now]\n\n\nCommand exited with code 3"),
        "{bad}"
    );
    // The model read the tool's snippet in the system prompt, as pi words it.
    let messages = pith.call("m", json!({"type": "get_messages"})).await;
    let sections = &messages["data"]["messages"][0]["sections"];
    let system = sections["tools"].to_string();
    assert!(
        sections["rules"].as_str().unwrap_or_default().starts_with(
            "<rules>\n- Use PowerShell for file operations like listing, searching, and finding files\n"
        ),
        "{sections}"
    );
    assert!(
        system.contains("- powershell: Execute PowerShell commands"),
        "{system}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_powershell_the_call_says_what_to_install_and_the_session_goes_on() {
    let script = json!([
        {"tool_calls": [{"id": "none", "name": "powershell", "arguments": {"command": "Get-Date"}}]},
        {"text": "done"}
    ]);
    let mut options = Options::faux(script);
    options.agent_files.push((
        "settings.json".into(),
        json!({"defaultTools": ["read", "powershell", "edit", "write"]}).to_string(),
    ));
    options.env.push(("PATH".into(), "/usr/bin:/bin".into()));
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "date"}))
        .await;
    pith.until_agent_end().await;
    let (text, is_error) = end_text(&pith.frames, "none");
    assert!(is_error);
    assert_eq!(
        text,
        "cannot start the process: No PowerShell executable found. Install PowerShell 7 (pwsh) or add pwsh to PATH."
    );
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["success"], true);
}
