//! A test plugin: each `op` tries one thing, so tests can check what the sandbox allows and
//! the exact error of what it forbids.

use pith_sdk::tool::*;

#[derive(serde::Deserialize)]
struct Args {
    op: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    key: String,
    #[serde(default)]
    command: String,
    #[serde(default)]
    depth: u64,
}

struct Probe;

impl Tool for Probe {
    const NAME: &'static str = "probe";
    const DESCRIPTION: &'static str = "Tries one sandboxed operation.";

    fn parameters() -> Value {
        json!({"type": "object", "properties": {"op": {"type": "string"}}, "required": ["op"]})
    }

    fn execute(call: ToolCall) -> Result<ToolResult, ToolError> {
        let args: Args = call.parse()?;
        match args.op.as_str() {
            "echo" => Ok(ToolResult::text(call.arguments.to_string())),
            "read" => std::fs::read_to_string(resolve_path(&args.path))
                .map(ToolResult::text)
                .map_err(|err| ToolError::new(format!("read failed: {err}"))),
            "write" => std::fs::write(resolve_path(&args.path), args.content)
                .map(|()| ToolResult::text("written"))
                .map_err(|err| ToolError::new(format!("write failed: {err}"))),
            "http" => pith_sdk::http::Request::get(&args.url)
                .send()
                .and_then(|response| Ok(format!("{} {}", response.status(), response.text()?)))
                .map(ToolResult::text)
                .map_err(|err| ToolError::new(err.message())),
            "config" => match pith_sdk::host::config(&args.key) {
                Ok(value) => Ok(ToolResult::text(format!("{value:?}"))),
                Err(pith_sdk::host::ConfigError::NotGranted(key)) => {
                    Err(ToolError::new(format!("config not granted: {key}")))
                }
            },
            "process" => run_process(&args.command),
            "spin" => spin(),
            "alloc" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "recurse" => Ok(ToolResult::text(recurse(args.depth).to_string())),
            "panic" => panic!("probe panicked on purpose"),
            "progress" => {
                for step in 1..=3 {
                    report_progress(&ToolResult::text(format!("step {step}")));
                }
                Ok(ToolResult::text("done"))
            }
            other => Err(ToolError::new(format!("unknown op {other}"))),
        }
    }
}

fn run_process(command: &str) -> Result<ToolResult, ToolError> {
    let child =
        pith_sdk::process::spawn(command, None).map_err(|err| ToolError::new(err.message()))?;
    let mut out = Vec::new();
    while let Some(chunk) = child.next_output() {
        match chunk {
            pith_sdk::process::Output::Stdout(bytes) | pith_sdk::process::Output::Stderr(bytes) => {
                out.extend_from_slice(&bytes)
            }
        }
    }
    let status = child.wait();
    Ok(ToolResult::text(format!(
        "{} exit={:?}",
        String::from_utf8_lossy(&out),
        status.code
    )))
}

fn spin() -> ! {
    let mut counter = 0u64;
    loop {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

/// Recursion that uses wasm's own stack (no locals in linear memory), so it is bounded by the
/// engine's stack limit rather than by the guest's shadow stack.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return 1;
    }
    let below = recurse(depth - 1);
    if below % 7 == 3 {
        below / 2
    } else {
        below.wrapping_add(depth)
    }
}

pith_sdk::export_tools!(Probe);
