//! Dialogs as ACP requests to the client. A `confirm` (an extension's, or the sandbox asking to
//! let a tool call beyond its mode) becomes `session/request_permission` with an allow and a
//! reject option; a `select` becomes a form (`elicitation/create`) when the client offers forms,
//! else a permission request with one option per choice; `input` and `editor` need a form and
//! are cancelled (the extension sees a cancelled dialog) when the client has none.
//!
//! A dialog about a tool call the client knows (the sandbox's, or an extension's `tool_call` hook
//! while one call is open) names that call; any other is shown as a tool
//! call of its own (announced before the request, closed after it), so that every client can
//! show it.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;

use super::sink::AcpSink;
use super::tools;
use crate::agent::session::front_end::WeakSession;
use crate::plugin_host::imports::ui::{UiAnswer, UiRequest};

const ALLOW: &str = "allow";
const REJECT: &str = "reject";
/// The form field a select, input or editor dialog's answer comes in.
const FIELD: &str = "value";

impl AcpSink {
    /// Asks the client the dialog `id` and answers it in the engine.
    pub(super) async fn ask_permission(
        self: Arc<Self>,
        session: WeakSession,
        client: ConnectionTo<Client>,
        id: String,
        request: UiRequest,
        tool_call: Option<String>,
    ) {
        ask(self, session, client, id, request, tool_call).await
    }
}

/// Asks the client the dialog `id` and answers it in the engine.
async fn ask(
    sink: Arc<AcpSink>,
    session: WeakSession,
    client: ConnectionTo<Client>,
    id: String,
    request: UiRequest,
    tool_call: Option<String>,
) {
    // The sandbox names the call it asks about; an extension's `tool_call` hook does not, but
    // while a single call is open it is the one asked about.
    let about = tool_call
        .or_else(|| sink.only_open_call())
        .and_then(|call| sink.open_call(&call).map(|open| (call, open)));
    let (title, text) = heading(&request);
    let (call_id, fields) = match &about {
        Some((call, (name, args))) => {
            // The call as the client shows it (its diffs kept), with what the dialog asks.
            let mut content = tools::proposed(name, args, sink.cwd());
            content.push(acp::ToolCallContent::Content(acp::Content::new(
                acp::ContentBlock::from(match &text {
                    Some(text) => format!("{title}\n\n{text}"),
                    None => title.clone(),
                }),
            )));
            let fields = tools::describe(name, args, sink.cwd()).content(content);
            (call.clone(), fields)
        }
        None => {
            let call = format!("dialog-{id}");
            let mut announced = acp::ToolCall::new(call.clone(), title.clone())
                .kind(acp::ToolKind::Other)
                .status(acp::ToolCallStatus::Pending);
            if let Some(text) = text.clone() {
                announced = announced.content(vec![acp::ToolCallContent::Content(
                    acp::Content::new(acp::ContentBlock::from(text)),
                )]);
            }
            sink.send(acp::SessionUpdate::ToolCall(announced));
            (call, acp::ToolCallUpdateFields::new())
        }
    };
    let asked = Asked {
        sink: &sink,
        client: &client,
        id: &id,
        call_id: &call_id,
    };
    // Timed out (or cancelled) before it could be asked: nothing waits for an answer.
    let still_open = session.upgrade().is_some_and(|s| s.dialog_open(&id));
    let answer = match &request {
        _ if !still_open => UiAnswer::Cancelled,
        UiRequest::Confirm { .. } => {
            let options = vec![
                acp::PermissionOption::new(ALLOW, "Allow", acp::PermissionOptionKind::AllowOnce),
                acp::PermissionOption::new(REJECT, "Reject", acp::PermissionOptionKind::RejectOnce),
            ];
            match asked.permission(fields, options).await {
                Some(choice) => UiAnswer::Confirmed(choice == ALLOW),
                None => UiAnswer::Cancelled,
            }
        }
        UiRequest::Select { title, options, .. } if sink.features().forms => {
            let field = acp::StringPropertySchema::new()
                .title(title.clone())
                .enum_values(options.clone());
            asked.form(title, field).await
        }
        UiRequest::Select { options, .. } => {
            let choices = options
                .iter()
                .enumerate()
                .map(|(index, option)| {
                    acp::PermissionOption::new(
                        index.to_string(),
                        option.clone(),
                        acp::PermissionOptionKind::AllowOnce,
                    )
                })
                .collect();
            asked
                .permission(fields, choices)
                .await
                .and_then(|choice| choice.parse::<usize>().ok())
                .and_then(|index| options.get(index))
                .map_or(UiAnswer::Cancelled, |choice| {
                    UiAnswer::Value(choice.clone())
                })
        }
        UiRequest::Input {
            title, placeholder, ..
        } if sink.features().forms => {
            let field = acp::StringPropertySchema::new()
                .title(title.clone())
                .description(placeholder.clone());
            asked.form(title, field).await
        }
        UiRequest::Editor { title, prefill } if sink.features().forms => {
            let mut field = acp::StringPropertySchema::new().title(title.clone());
            field.default = prefill.clone();
            asked.form(title, field).await
        }
        other => {
            tracing::debug!(?other, "acp: the client takes no forms; dialog cancelled");
            UiAnswer::Cancelled
        }
    };
    if about.is_none() {
        let status = match answer {
            UiAnswer::Cancelled | UiAnswer::Confirmed(false) => acp::ToolCallStatus::Failed,
            _ => acp::ToolCallStatus::Completed,
        };
        sink.send(acp::SessionUpdate::ToolCallUpdate(
            acp::ToolCallUpdate::new(call_id, acp::ToolCallUpdateFields::new().status(status)),
        ));
    }
    if let Some(session) = session.upgrade()
        && let Err(err) = session.answer_dialog(&id, answer)
    {
        // Timed out meanwhile (and withdrawn): nothing waits for the answer.
        tracing::debug!(%err, "acp: dialog answered late");
    }
}

/// A dialog's title and text.
fn heading(request: &UiRequest) -> (String, Option<String>) {
    match request {
        UiRequest::Confirm { title, message, .. } => (title.clone(), Some(message.clone())),
        UiRequest::Select { title, .. }
        | UiRequest::Input { title, .. }
        | UiRequest::Editor { title, .. } => (title.clone(), None),
        _ => (String::new(), None),
    }
}

/// One dialog being put to the client.
struct Asked<'a> {
    sink: &'a Arc<AcpSink>,
    client: &'a ConnectionTo<Client>,
    id: &'a str,
    call_id: &'a str,
}

impl Asked<'_> {
    /// `session/request_permission`; the chosen option's id, `None` when cancelled or failed.
    async fn permission(
        &self,
        fields: acp::ToolCallUpdateFields,
        options: Vec<acp::PermissionOption>,
    ) -> Option<String> {
        let request = acp::RequestPermissionRequest::new(
            self.sink.session_id().clone(),
            acp::ToolCallUpdate::new(self.call_id.to_string(), fields),
            options,
        );
        let sent = self.client.send_request(request);
        let withdrawn = self.sink.dialog_opened(self.id, sent.cancellation_handle());
        let answered = tokio::select! {
            answered = sent.block_task() => answered,
            _ = withdrawn => return None,
        };
        self.sink.dialog_closed(self.id);
        match answered {
            Ok(response) => match response.outcome {
                acp::RequestPermissionOutcome::Selected(selected) => {
                    Some(selected.option_id.0.to_string())
                }
                _ => None,
            },
            Err(err) => {
                tracing::debug!(%err, "acp: permission request failed");
                None
            }
        }
    }

    /// `elicitation/create` with one string field; its value, else cancelled.
    async fn form(&self, message: &str, field: acp::StringPropertySchema) -> UiAnswer {
        let schema = acp::ElicitationSchema::new().property(FIELD, field, true);
        let scope = acp::ElicitationSessionScope::new(self.sink.session_id().clone())
            .tool_call_id(acp::ToolCallId::new(self.call_id.to_string()));
        let mode = acp::ElicitationFormMode::new(acp::ElicitationScope::Session(scope), schema);
        let request = acp::CreateElicitationRequest::new(acp::ElicitationMode::Form(mode), message);
        let sent = self.client.send_request(request);
        let withdrawn = self.sink.dialog_opened(self.id, sent.cancellation_handle());
        let answered = tokio::select! {
            answered = sent.block_task() => answered,
            _ = withdrawn => return UiAnswer::Cancelled,
        };
        self.sink.dialog_closed(self.id);
        match answered {
            Ok(response) => match response.action {
                acp::ElicitationAction::Accept(accepted) => {
                    let content: BTreeMap<String, acp::ElicitationContentValue> =
                        accepted.content.unwrap_or_default();
                    match content.get(FIELD) {
                        Some(acp::ElicitationContentValue::String(text)) => {
                            UiAnswer::Value(text.clone())
                        }
                        _ => UiAnswer::Cancelled,
                    }
                }
                _ => UiAnswer::Cancelled,
            },
            Err(err) => {
                tracing::debug!(%err, "acp: form request failed");
                UiAnswer::Cancelled
            }
        }
    }
}
