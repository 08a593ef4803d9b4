//! The command-line parser's unit tests.
use super::*;

fn parse(args: &[&str]) -> Result<Args, UsageError> {
    Args::parse(args.iter().map(|s| s.to_string()))
}

#[test]
fn rpc_mode_with_pi_flags() {
    let args = parse(&[
        "--mode",
        "rpc",
        "--plugins-dir",
        "a",
        "--plugins-dir",
        "b",
        "--agent-dir",
        "x",
        "--provider",
        "faux",
        "--model",
        "faux-model:high",
        "--no-session",
        "--tools",
        "read, bash",
    ])
    .unwrap();
    assert_eq!(args.command, Some(Command::Rpc));
    assert_eq!(
        args.plugins_dirs,
        vec![PathBuf::from("a"), PathBuf::from("b")]
    );
    assert_eq!(args.agent_dir, Some(PathBuf::from("x")));
    assert_eq!(args.model.as_deref(), Some("faux-model:high"));
    assert!(args.no_session);
    assert_eq!(
        args.tools,
        Some(vec!["read".to_string(), "bash".to_string()])
    );
}

#[test]
fn errors_are_usage_errors() {
    assert_eq!(
        parse(&["plugins", "--json"]).unwrap().command,
        Some(Command::Plugins { json: true })
    );
    assert!(parse(&["tool"]).is_err());
    assert_eq!(
        parse(&["export", "s.jsonl", "out.html"]).unwrap().command,
        Some(Command::Export {
            session: "s.jsonl".into(),
            output: Some("out.html".into())
        })
    );
    assert_eq!(
        parse(&["--export", "s.jsonl"]).unwrap().command,
        Some(Command::Export {
            session: "s.jsonl".into(),
            output: None
        })
    );
    assert!(parse(&["export"]).is_err());
    assert_eq!(
        parse(&["--mode", "tui"]).unwrap_err().0,
        "--mode tui is not supported: pith is headless, use --mode rpc, acp, json or text"
    );
    let print = |words: &[&str], output, chosen| Command::Print {
        output,
        words: words.iter().map(|w| w.to_string()).collect(),
        chosen,
    };
    use crate::print::Output::{Json, Text};
    // pi's rules: -p takes the next word unless it is a flag or a file; `--` ends flags.
    assert_eq!(
        parse(&["-p", "---yaml"]).unwrap().command,
        Some(print(&["---yaml"], Text, true))
    );
    assert_eq!(
        parse(&["-p", "@a.txt", "go", "on"]).unwrap().command,
        Some(print(&["@a.txt", "go", "on"], Text, true))
    );
    assert_eq!(
        parse(&["--mode", "json", "-p", "--", "-x", "--mode"])
            .unwrap()
            .command,
        Some(print(&["-x", "--mode"], Json, true))
    );
    assert_eq!(
        parse(&["--mode", "text", "hi"]).unwrap().command,
        Some(print(&["hi"], Text, true))
    );
    assert_eq!(
        parse(&["what", "is", "up"]).unwrap().command,
        Some(print(&["what", "is", "up"], Text, false))
    );
    assert_eq!(parse(&[]).unwrap().command, Some(print(&[], Text, false)));
    let tools = parse(&["--mode", "rpc", "-t", "+ls,-write", "-nbt", "-xt", "bash"]).unwrap();
    assert_eq!(tools.tools_add, ["ls"]);
    assert_eq!(tools.tools_remove, ["write"]);
    assert!(tools.no_builtin_tools);
    assert_eq!(tools.exclude_tools, ["bash"]);
    assert!(
        parse(&["--tools", "read,+ls"])
            .unwrap_err()
            .0
            .contains("cannot be mixed")
    );
    assert_eq!(parse(&["-v"]).unwrap().command, Some(Command::Version));
    assert!(parse(&["--mode", "rpc", "--theme", "dark", "--no-themes"]).is_ok());
    assert_eq!(
        parse(&["--mode", "acp"]).unwrap().command,
        Some(Command::Acp)
    );
    assert_eq!(
        parse(&["--mode", "rpc", "-Z"]).unwrap_err().0,
        "unknown option -Z"
    );
    // A long option of none of pith's is an extension's flag, resolved once they are loaded.
    let flags = parse(&["-p", "--plan", "do X", "--preset=fast", "--x", "-c"]).unwrap();
    let given: Vec<_> = flags
        .extension_flags
        .iter()
        .map(|f| (f.name.as_str(), f.value.as_deref(), f.inline, f.word_at))
        .collect();
    assert_eq!(
        given,
        vec![
            ("plan", Some("do X"), false, 0),
            ("preset", Some("fast"), true, 0),
            ("x", None, false, 0),
        ]
    );
    assert!(parse(&["--agent-dir"]).is_err());
    for bad in ["../x", "a/b", "", ".hidden"] {
        assert!(
            parse(&["--mode", "rpc", "--session-id", bad]).is_err(),
            "{bad:?}"
        );
    }
    assert_eq!(
        parse(&[
            "--mode",
            "rpc",
            "--session-id",
            "0199aaaa-0000-7000-8000-000000000001"
        ])
        .unwrap()
        .session_id
        .as_deref(),
        Some("0199aaaa-0000-7000-8000-000000000001")
    );
    assert!(parse(&["--mode", "rpc", "@file.txt"]).is_err());
}
