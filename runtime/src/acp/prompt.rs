//! `session/prompt` and `session/cancel`: the prompt's content blocks become a prompt of the
//! engine session (through the same command, hook and template path as an RPC prompt), and the
//! answer is sent with the stop reason once the run has ended and every update of it was sent.

use std::sync::atomic::Ordering;

use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;

use super::{AcpSession, Server};
use crate::agent::input::Input;
use crate::agent::message::StopReason;
use crate::content::Content;

/// The prompt's blocks as text and images: text joined by blank lines, a linked resource as its
/// URI, an embedded text resource as a fenced block under its URI.
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
            acp::ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").unwrap_or(&link.uri);
                texts.push(format!("@{path}"));
            }
            acp::ContentBlock::Resource(resource) => match &resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(text) => {
                    texts.push(format!("{}:\n```\n{}\n```", text.uri, text.text));
                }
                other => tracing::debug!(?other, "acp: binary resource in a prompt, skipped"),
            },
            other => tracing::debug!(?other, "acp: prompt block pith does not take, skipped"),
        }
    }
    (texts.join("\n\n"), images)
}

impl Server {
    /// `session/prompt`.
    pub(super) async fn prompt(
        &self,
        request: acp::PromptRequest,
        responder: Responder<acp::PromptResponse>,
    ) {
        let Some(open) = self.session(&request.session_id) else {
            let _ = responder.respond_with_error(super::unknown_session(&request.session_id));
            return;
        };
        let (text, images) = content(&request.prompt);
        open.cancelled.store(false, Ordering::SeqCst);
        let result = run(&open, text, images).await;
        let _ = match result {
            Ok(reason) => responder.respond(acp::PromptResponse::new(reason)),
            Err(err) => responder.respond_with_error(err),
        };
    }

    /// `session/cancel`: aborts the run; its prompt answers `cancelled`.
    pub(super) fn cancel(&self, id: &acp::SessionId) {
        let Some(open) = self.session(id) else {
            tracing::debug!(%id, "acp: cancel for an unknown session");
            return;
        };
        open.cancelled.store(true, Ordering::SeqCst);
        let session = open.session.clone();
        tokio::spawn(async move { session.abort().await });
    }
}

/// Runs one prompt to its end.
async fn run(
    open: &AcpSession,
    text: String,
    images: Vec<Content>,
) -> Result<acp::StopReason, Error> {
    let session = &open.session;
    session.shared().wait_compaction().await;
    if let Some(rest) = text.strip_prefix("/compact")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace))
    {
        let instructions = rest.trim();
        session
            .compact((!instructions.is_empty()).then_some(instructions))
            .await
            .map_err(super::internal)?;
        return Ok(acp::StopReason::EndTurn);
    }
    let (text, images) = match session.process_input(&text, images).await {
        Input::Command { slot, name, args } => {
            session
                .shared()
                .extensions
                .run_command(&slot, &name, &args)
                .await;
            return Ok(acp::StopReason::EndTurn);
        }
        Input::Handled => return Ok(acp::StopReason::EndTurn),
        Input::Prompt { text, images } => (text, images),
    };
    open.sink.begin_prompt();
    let run = match session.prompt(&text, images, None, None) {
        Ok(Some(run)) => run,
        Ok(None) => return Ok(acp::StopReason::EndTurn),
        Err(message) => {
            open.sink.end_prompt();
            return Err(Error::new(
                agent_client_protocol::ErrorCode::INVALID_REQUEST,
                message,
            ));
        }
    };
    if let Err(err) = run.spawn().await {
        return Err(super::internal(format!("the run failed: {err}")));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_become_text_and_images_stay_images() {
        let blocks: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "look at"},
            {"type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/b.rs", "text": "fn b() {}"}},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]))
        .unwrap();
        let (text, images) = content(&blocks);
        assert_eq!(
            text,
            "look at\n\n@/w/a.rs\n\nfile:///w/b.rs:\n```\nfn b() {}\n```"
        );
        assert_eq!(images.len(), 1);
    }
}
