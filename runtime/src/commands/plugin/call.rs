//! `pith plugin call`: a tool called once (as `pith tool`), or an extension command run in a
//! session built as `--mode rpc` builds it, its dialogs answered from `--answer` values in order
//! (then cancelled) and its notifications printed, so an author can try an extension without
//! writing protocol frames.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::agent::event::{AssistantUpdate, EventSink, SessionEvent, SinkFuture};
use crate::agent::models::ModelRegistry;
use crate::agent::session::Session;
use crate::agent::session::answers::CommandSource;
use crate::agent::session::front_end::WeakSession;
use crate::agent::session::input::Input;
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::plugin_host::PluginHost;
use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};
use crate::settings::Settings;

/// Prints what the extension shows and answers its dialogs from the queue.
struct Terminal {
    answers: Mutex<VecDeque<String>>,
    session: OnceLock<WeakSession>,
    failed: AtomicBool,
}

/// `text` as the answer to `request`, or why it cannot be one.
fn answer(request: &UiRequest, text: &str) -> Result<UiAnswer, String> {
    match request {
        UiRequest::Confirm { .. } => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(UiAnswer::Confirmed(true)),
            "n" | "no" | "false" => Ok(UiAnswer::Confirmed(false)),
            _ => Err(format!(
                "{text:?} does not answer a confirm: give yes or no"
            )),
        },
        UiRequest::Select { options, .. } => {
            if options.iter().any(|o| o == text) {
                return Ok(UiAnswer::Value(text.to_string()));
            }
            text.parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| options.get(i))
                .map(|o| UiAnswer::Value(o.clone()))
                .ok_or_else(|| {
                    format!(
                        "{text:?} is not one of the choices {options:?}: give a choice or its \
                         number (from 1)"
                    )
                })
        }
        _ => Ok(UiAnswer::Value(text.to_string())),
    }
}

impl Terminal {
    fn dialog(&self, id: &str, request: &UiRequest) {
        let question = match request {
            UiRequest::Confirm { title, message, .. } => format!("{title} {message} [yes/no]"),
            UiRequest::Select { title, options, .. } => format!("{title} {options:?}"),
            UiRequest::Input { title, .. } | UiRequest::Editor { title, .. } => title.clone(),
            _ => return,
        };
        let given = self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front();
        let reply = match given {
            None => {
                println!("? {question} → cancelled (no --answer left)");
                UiAnswer::Cancelled
            }
            Some(text) => match answer(request, &text) {
                Ok(reply) => {
                    println!("? {question} → {text}");
                    reply
                }
                Err(problem) => {
                    eprintln!("pith: --answer {problem}; the dialog is cancelled");
                    self.failed.store(true, Ordering::SeqCst);
                    UiAnswer::Cancelled
                }
            },
        };
        if let Some(session) = self.session.get().and_then(WeakSession::upgrade) {
            let id = id.to_string();
            tokio::spawn(async move {
                let _ = session.answer_dialog(&id, reply);
            });
        }
    }
}

impl EventSink for Terminal {
    fn emit(&self, event: &SessionEvent) {
        match event {
            SessionEvent::UiRequest { id, request, .. } => match request {
                UiRequest::Notify { message, kind } => {
                    println!("{}: {message}", kind.unwrap_or("info"))
                }
                UiRequest::SetStatus { key, text } => {
                    println!("status {key}: {}", text.as_deref().unwrap_or(""))
                }
                UiRequest::SetWidget { key, lines, .. } => {
                    println!(
                        "widget {key}: {}",
                        lines.as_deref().unwrap_or_default().join(" / ")
                    )
                }
                UiRequest::SetTitle { .. } | UiRequest::SetEditorText { .. } => {}
                other => self.dialog(id, other),
            },
            SessionEvent::ExtensionError {
                extension_path,
                event,
                error,
            } => {
                eprintln!("pith: {extension_path} failed in {event}: {error}");
                self.failed.store(true, Ordering::SeqCst);
            }
            SessionEvent::MessageEnd { message } => {
                if let Ok(text) = serde_json::to_string(message) {
                    println!("message: {text}");
                }
            }
            _ => {}
        }
    }

    fn message_update<'a>(&'a self, _update: &AssistantUpdate<'_>) -> SinkFuture<'a> {
        Box::pin(std::future::ready(()))
    }
}

/// Runs `/command args` with the `answers`.
pub async fn command(
    host: PluginHost,
    args: &Args,
    settings: &Settings,
    workspace: PathBuf,
    agent_dir: &AgentDir,
    line: &str,
    answers: Vec<String>,
) -> ExitCode {
    let (mut models, _problems) =
        ModelRegistry::load(&host, &agent_dir.models_file(), &agent_dir.auth_file());
    let mut args = args.clone();
    args.no_session = true;
    let config = match crate::commands::session_config::session_config(
        &args,
        settings,
        &mut models,
        workspace,
        agent_dir,
    ) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("pith: {message}");
            return ExitCode::FAILURE;
        }
    };
    let terminal = Arc::new(Terminal {
        answers: Mutex::new(answers.into()),
        session: OnceLock::new(),
        failed: AtomicBool::new(false),
    });
    let session = Session::new(Arc::new(host), terminal.clone(), models, config);
    let _ = terminal.session.set(session.downgrade());
    session.start_extensions().await;
    match session.process_input(line, Vec::new()).await {
        Input::Command(call) => call.run_to_end(&session).await,
        Input::Handled => println!("handled by an extension's input hook"),
        Input::Prompt { .. } => {
            let names: Vec<String> = session
                .commands()
                .commands
                .into_iter()
                .filter(|c| c.source == CommandSource::Extension)
                .map(|c| c.name)
                .collect();
            eprintln!(
                "pith: {line:?} is no extension command; the loaded extensions' commands are: {}",
                if names.is_empty() {
                    "none (load the extension with --plugins-dir or -e)".to_string()
                } else {
                    names
                        .iter()
                        .map(|n| format!("/{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
            return ExitCode::from(2);
        }
    }
    session.cancel_dialogs();
    if terminal.failed.load(Ordering::SeqCst) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_the_dialog_needs() {
        let confirm = UiRequest::Confirm {
            title: "t".into(),
            message: "m".into(),
            timeout_ms: None,
        };
        assert_eq!(answer(&confirm, "Yes"), Ok(UiAnswer::Confirmed(true)));
        assert!(answer(&confirm, "maybe").is_err());
        let select = UiRequest::Select {
            title: "t".into(),
            options: vec!["red".into(), "green".into()],
            timeout_ms: None,
        };
        assert_eq!(answer(&select, "2"), Ok(UiAnswer::Value("green".into())));
        assert_eq!(answer(&select, "red"), Ok(UiAnswer::Value("red".into())));
        assert!(answer(&select, "blue").is_err());
    }
}
