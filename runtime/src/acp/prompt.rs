//! `session/prompt` and `session/cancel`: the prompt's content blocks become a prompt of the
//! engine session (through the same command, hook and template path as an RPC prompt), and the
//! answer is sent with the stop reason once the run has ended and every update of it was sent.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;

use super::{AcpSession, Server};
use crate::agent::conversation::message::StopReason;
use crate::agent::session::SessionError;
use crate::agent::session::submit::{Disposition, PromptError, Submission};
use crate::content::Content;

/// The prompt's blocks as text and images: text joined by blank lines, a linked file as its
/// `@path`, an embedded text resource as a fenced block under its URI.
fn content(prompt: &[acp::ContentBlock]) -> (String, Vec<Content>) {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for block in prompt {
        match block {
            acp::ContentBlock::Text(text) => texts.push(text.text.clone()),
            acp::ContentBlock::Image(image) => images.push(Content::Image {
                data: image.data.clone(),
                mime_type: image.mime_type.clone(),
            }),
            acp::ContentBlock::ResourceLink(link) => texts.push(match file_path(&link.uri) {
                Some(path) => format!("@{path}"),
                None => link.uri.clone(),
            }),
            acp::ContentBlock::Resource(resource) => match &resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(text) => {
                    let name = file_path(&text.uri).unwrap_or_else(|| text.uri.clone());
                    texts.push(format!("{name}:\n{}", super::tools::fenced(&text.text, "")));
                }
                other => {
                    tracing::warn!(
                        ?other,
                        "acp: a binary resource in a prompt is not passed on"
                    )
                }
            },
            other => tracing::warn!(?other, "acp: a prompt block pith does not take, skipped"),
        }
    }
    (texts.join("\n\n"), images)
}

/// The local path of a `file://` URI (percent-decoded).
fn file_path(uri: &str) -> Option<String> {
    let url = reqwest::Url::parse(uri).ok()?;
    let path = url.to_file_path().ok()?;
    Some(path.display().to_string())
}

/// The error for a prompt sent while another runs in the session.
fn busy() -> Error {
    Error::new(
        agent_client_protocol::ErrorCode::INVALID_REQUEST,
        "A prompt is running in this session: wait for its answer, or send session/cancel",
    )
}

impl Server {
    /// Claims the session for a prompt (one at a time); the error when it cannot be.
    pub(super) fn claim(&self, id: &acp::SessionId) -> Result<Arc<AcpSession>, Error> {
        let open = self.session(id).ok_or_else(|| super::unknown_session(id))?;
        if open.prompting.swap(true, Ordering::SeqCst) {
            return Err(busy());
        }
        open.cancelled.store(false, Ordering::SeqCst);
        Ok(open)
    }

    /// `session/prompt`, on a claimed session.
    pub(super) async fn prompt(
        &self,
        open: Arc<AcpSession>,
        request: acp::PromptRequest,
        responder: Responder<acp::PromptResponse>,
    ) {
        let (text, images) = content(&request.prompt);
        let result = if text.trim().is_empty() && images.is_empty() {
            Err(super::invalid(
                "The prompt has no text or image pith can take (text, images, resource links and \
                 embedded text resources are taken)",
            ))
        } else {
            run(&open, text, images).await
        };
        open.prompting.store(false, Ordering::SeqCst);
        let _ = match result {
            Ok(reason) => responder.respond(acp::PromptResponse::new(reason)),
            Err(err) => responder.respond_with_error(err),
        };
    }

    /// `session/cancel`: withdraws the prompt's open dialogs and aborts its run; the prompt
    /// answers `cancelled`.
    pub(super) fn cancel(&self, id: &acp::SessionId) {
        let Some(open) = self.session(id) else {
            tracing::debug!(%id, "acp: cancel for an unknown session");
            return;
        };
        self.cancel_work(&open);
        let session = open.session.clone();
        tokio::spawn(async move { session.abort().await });
    }

    /// Marks the prompt cancelled and withdraws its open dialogs (answered as cancelled).
    pub(super) fn cancel_work(&self, open: &AcpSession) {
        open.cancelled.store(true, Ordering::SeqCst);
        for dialog in open.sink.withdraw_dialogs() {
            let _ = open.session.answer_dialog(
                &dialog,
                crate::plugin_host::imports::ui::UiAnswer::Cancelled,
            );
        }
    }
}

/// How a run's last answer ended, as ACP says it.
fn stop_reason(open: &AcpSession) -> Result<acp::StopReason, Error> {
    let last = open.sink.end_prompt();
    if open.cancelled.load(Ordering::SeqCst) {
        return Ok(acp::StopReason::Cancelled);
    }
    match last {
        Some((StopReason::Aborted, _)) => Ok(acp::StopReason::Cancelled),
        Some((StopReason::Length, _)) => Ok(acp::StopReason::MaxTokens),
        Some((StopReason::Error, message)) => Err(super::internal(
            message.unwrap_or_else(|| "the model's answer failed".into()),
        )),
        _ => Ok(acp::StopReason::EndTurn),
    }
}

/// `/compact [focus]`: a compaction of the session; "nothing to compact" is an answer, not an
/// error.
async fn compact(open: &AcpSession, instructions: &str) -> Result<acp::StopReason, Error> {
    let session = &open.session;
    if session.is_streaming() {
        return Err(busy());
    }
    let focus = (!instructions.is_empty()).then_some(instructions);
    match session.compact(focus).await {
        Ok(_) => Ok(acp::StopReason::EndTurn),
        Err(answer @ (SessionError::NothingToCompact | SessionError::AlreadyCompacted)) => {
            open.sink.send(acp::SessionUpdate::AgentMessageChunk(
                acp::ContentChunk::new(answer.to_string().into()),
            ));
            Ok(acp::StopReason::EndTurn)
        }
        Err(message) => Err(super::internal(format!("The compaction failed: {message}"))),
    }
}

/// Runs one prompt to its end.
async fn run(
    open: &AcpSession,
    text: String,
    images: Vec<Content>,
) -> Result<acp::StopReason, Error> {
    let session = &open.session;
    // The extensions' `session_start` comes first.
    let _ = open.ready.subscribe().wait_for(|ready| *ready).await;
    if let Some(rest) = text.strip_prefix("/compact")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace))
    {
        session.wait_compaction().await;
        return compact(open, rest.trim()).await;
    }
    let submitted = session
        .submit(Submission {
            images,
            ..Submission::text(text)
        })
        .await;
    let cancelled = open.cancelled.load(Ordering::SeqCst);
    let run = match submitted {
        // A run claimed is started even when cancelled meanwhile: the abort below ends it.
        Ok(Disposition::Started(run)) => run,
        _ if cancelled => return Ok(acp::StopReason::Cancelled),
        Ok(Disposition::Command(call)) => {
            // A command may start a run of its own (an extension's message with a turn).
            open.sink.begin_prompt(false);
            call.run_to_end(session).await;
            return stop_reason(open);
        }
        Ok(Disposition::Handled | Disposition::Queued) => return Ok(acp::StopReason::EndTurn),
        Err(PromptError::Busy) => return Err(busy()),
        Err(err) => {
            return Err(Error::new(
                agent_client_protocol::ErrorCode::INVALID_REQUEST,
                err.to_string(),
            ));
        }
    };
    open.sink.begin_prompt(true);
    let running = run.spawn();
    // A cancel that came while the run was being claimed found nothing to abort.
    if open.cancelled.load(Ordering::SeqCst) {
        let session = session.clone();
        tokio::spawn(async move { session.abort().await });
    }
    if let Err(err) = running.await {
        open.sink.end_prompt();
        return Err(super::internal(format!("the run failed: {err}")));
    }
    stop_reason(open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_become_text_and_images_stay_images() {
        let blocks: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///w/a%20b.rs", "name": "a b.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/b.rs", "text": "fn b() {}"}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]))
        .unwrap();
        let (text, images) = content(&blocks);
        assert_eq!(
            text,
            "look at\n\n@/w/a b.rs\n\n/w/b.rs:\n```\nfn b() {}\n```"
        );
        assert_eq!(images.len(), 1);
    }
}
