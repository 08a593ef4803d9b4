//! The one-shot modes scripts and CI use, as pi 1.5.2's (`print-mode.js`): `pith -p "…"`
//! (`--print`, `--mode text`, or prompt words or piped stdin with no mode) runs the prompts in
//! order and prints the last answer's text; `--mode json` prints the session header and then
//! every event as one JSON line, in the RPC protocol's shapes (no responses). Sessions are
//! saved as in RPC mode unless `--no-session`.
//!
//! Exit codes, as pi's: 0 when the last answer came; 1 after a failed or aborted answer (its
//! message on stderr), after an answer cut at the output token limit (its text on stdout, a
//! warning on stderr), or when an `@file` is missing; 143 on SIGTERM and 129 on SIGHUP (the
//! run is aborted first). In JSON mode the events carry the failure and the exit code is 0. Where
//! pi exits 0 having sent nothing (no prompt at all), pith says so and exits 2.

pub mod output;
pub mod prompts;

pub use output::Output;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::agent::conversation::message::{AssistantBlock, StopReason};
use crate::agent::event::{EventSink, NullSink};
use crate::agent::models::ModelRegistry;
use crate::agent::session::Session;
use crate::agent::session::submit::{Disposition, Submission};
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::content::Content;
use crate::plugin_host::PluginHost;
use crate::resources::Resources;
use crate::rpc::events::RpcEvents;
use crate::settings::Settings;

/// The warning of an answer cut at the output token limit (pi's).
pub const TRUNCATED: &str = "Response was truncated: the model reached its output token limit.";

/// Reads piped stdin to its end; `None` when stdin is a terminal.
fn piped_stdin() -> Option<String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut text = Vec::new();
    stdin.read_to_end(&mut text).ok()?;
    Some(String::from_utf8_lossy(&text).into_owned())
}

/// Runs `words` (prompts and `@file` arguments) with piped stdin.
pub async fn run(
    host: PluginHost,
    args: &Args,
    settings: &Settings,
    cwd: PathBuf,
    agent_dir: &AgentDir,
    output: Output,
    words: &[String],
) -> ExitCode {
    let stdin = piped_stdin();
    let prompts = match prompts::build(stdin.as_deref(), words, &cwd) {
        Ok(prompts) => prompts,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    if prompts.texts.is_empty() {
        eprintln!(
            "pith: no prompt: give it as arguments (pith -p \"…\"), as @file arguments, or on \
             stdin; `pith --help` lists the modes"
        );
        return ExitCode::from(2);
    }
    let (mut models, problems) =
        ModelRegistry::load(&host, &agent_dir.models_file(), &agent_dir.auth_file());
    for problem in problems {
        eprintln!("pith: {problem}");
    }
    let mut config = match crate::commands::session_config::session_config(
        args,
        settings,
        &mut models,
        cwd,
        agent_dir,
    ) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("pith: {message}");
            return ExitCode::FAILURE;
        }
    };
    config.resources = Resources::load(config.resources.dirs.clone(), &host).await;
    let host = Arc::new(host);
    let (json, writer) = match output {
        Output::Text => (None, None),
        Output::Json => {
            let (frames, writer) = crate::rpc::writer::spawn(std::io::stdout());
            let protocol =
                crate::commands::session_config::protocol(args, settings).unwrap_or_default();
            let events = Arc::new(RpcEvents::new(frames, false, protocol));
            (Some(events), Some(writer))
        }
    };
    let sink: Arc<dyn EventSink> = match &json {
        Some(events) => events.clone(),
        None => Arc::new(NullSink),
    };
    let session = Session::new(host, sink, models, config);
    if let Some(events) = &json {
        events
            .out()
            .send(&serde_json::Value::Object(session.session_header()));
    }
    session.start_extensions().await;
    // SIGTERM and SIGHUP abort the run and exit with 128 + the signal, as pi's print mode.
    let mut signals = crate::signals::Signals::listen(
        (crate::signals::Ending::Terminate, 143),
        (crate::signals::Ending::Hangup, 129),
    );
    let mut images = prompts.images;
    let mut exit = None;
    for text in prompts.texts {
        let sent = prompt(&session, &text, std::mem::take(&mut images));
        tokio::select! {
            result = sent => {
                if let Err(message) = result {
                    eprintln!("{message}");
                    exit = Some(ExitCode::FAILURE);
                    break;
                }
            }
            code = signals.next() => {
                session.abort().await;
                session.wait_idle().await;
                exit = Some(ExitCode::from(code));
                break;
            }
        }
    }
    if exit.is_none() {
        session.quit().await;
    }
    let code = match output {
        Output::Json => exit.unwrap_or(ExitCode::SUCCESS),
        Output::Text => {
            let outcome = print_last_answer(&session);
            exit.unwrap_or(outcome)
        }
    };
    drop(json);
    drop(session);
    if let Some(writer) = writer {
        let _ = tokio::time::timeout(crate::rpc::TERMINATION_GRACE * 5, writer.finished()).await;
    }
    code
}

/// Sends one prompt (a `/command`, template or skill as in RPC mode) and waits for its run
/// to end; `Err` with the message when it could not start.
async fn prompt(session: &Session, text: &str, images: Vec<Content>) -> Result<(), String> {
    let submission = Submission {
        images,
        ..Submission::text(text)
    };
    match session
        .submit(submission)
        .await
        .map_err(|err| err.to_string())?
    {
        Disposition::Command(call) => call.run_to_end(session).await,
        Disposition::Started(run) => {
            let _ = run.spawn().await;
        }
        Disposition::Handled | Disposition::Queued => {}
    }
    Ok(())
}

/// Prints the session's last answer as pi's print mode does; the exit code it calls for.
fn print_last_answer(session: &Session) -> ExitCode {
    let Some(answer) = session.last_answer() else {
        return ExitCode::SUCCESS;
    };
    if matches!(answer.stop_reason, StopReason::Error | StopReason::Aborted) {
        let message = answer.error_message.clone().unwrap_or_else(|| {
            format!(
                "Request {}",
                serde_json::to_value(answer.stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )
        });
        eprintln!("{message}");
        return ExitCode::FAILURE;
    }
    let mut out = String::new();
    for block in &answer.content {
        if let AssistantBlock::Text { text, .. } = block {
            out.push_str(text);
            out.push('\n');
        }
    }
    print!("{out}");
    if answer.stop_reason == StopReason::Length {
        eprintln!("{TRUNCATED}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
