//! The one way a prompt enters a session, for every front-end (RPC, ACP, print): wait for the
//! plugins still compiling and for a compaction in progress, run the text through `/mcp`,
//! extension commands, the `input` hook and expansion ([`Session::process_input`]), then prompt
//! or queue it. What became of it is a typed [`Disposition`]; a refusal is a typed
//! [`PromptError`] whose text is pi's.

pub use crate::agent::session::PromptError;
pub use crate::agent::session::input::CommandCall;
use crate::agent::session::input::Input;
use crate::agent::session::{PendingRun, Session, StreamingBehavior};
use crate::content::Content;

/// A prompt as a front-end received it.
#[derive(Debug, Clone, Default)]
pub struct Submission {
    /// The text, as typed (`/command args`, `/skill:name`, a template, or a message).
    pub text: String,
    /// Its images.
    pub images: Vec<Content>,
    /// While a run streams: queue it as a steering or follow-up message (`None` refuses it).
    pub behavior: Option<StreamingBehavior>,
    /// The host's id for the message (echoed in `queue_update` and `message_start`).
    pub client_id: Option<String>,
}

impl Submission {
    /// A plain prompt of `text`.
    pub fn text(text: impl Into<String>) -> Submission {
        Submission {
            text: text.into(),
            ..Submission::default()
        }
    }
}

/// What became of a submission (pi 1.5's `disposition`, with what the front-end runs next).
pub enum Disposition {
    /// It names an extension command, for the front-end to run ([`CommandCall`]).
    Command(CommandCall),
    /// An extension's `input` hook (or `/mcp`) handled it; nothing more happens.
    Handled,
    /// It starts a run, for the front-end to start once its answer is out.
    Started(PendingRun),
    /// It waits behind the running one (steering or follow-up).
    Queued,
}

impl Disposition {
    /// pi 1.5's word for it: `started`, `queued` or `handled` (a command is handled).
    pub fn as_str(&self) -> &'static str {
        match self {
            Disposition::Command(_) | Disposition::Handled => "handled",
            Disposition::Started(_) => "started",
            Disposition::Queued => "queued",
        }
    }
}

impl Session {
    /// Submits a prompt: the steps every front-end takes, in pi's order.
    pub async fn submit(&self, submission: Submission) -> Result<Disposition, PromptError> {
        let shared = self.shared();
        shared.host.deferred_settled().await;
        // A prompt sent while a compaction runs (after a run's `agent_end`) waits for it.
        shared.wait_compaction().await;
        let (text, images) = match self
            .process_input(&submission.text, submission.images)
            .await
        {
            Input::Command(call) => return Ok(Disposition::Command(call)),
            Input::Handled => return Ok(Disposition::Handled),
            Input::Prompt { text, images } => (text, images),
        };
        match self.prompt(&text, images, submission.behavior, submission.client_id)? {
            Some(run) => Ok(Disposition::Started(run)),
            None => Ok(Disposition::Queued),
        }
    }
}
