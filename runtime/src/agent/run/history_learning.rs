//! Learning a long conversation's provider prefix in steps. A request whose conversation has
//! no cached prefix (a session just opened, or one whose prefix was invalidated) would hand
//! the provider plugin the whole conversation at once: every message read back from the
//! session file, converted, and encoded in one guest memory, all held together. Instead, the
//! request is preceded by learning steps of [`LEARNING_STEP`] messages each: each hands the
//! provider the cached prefix's marker and the next step, its body is spliced into the cache
//! and not sent (see `plugin_host::history_splice`), and what it read is dropped before the
//! next. The request itself then hands over the last step only.
//!
//! [`LEARNING_STEP`]: crate::agent::run::history_cache::LEARNING_STEP

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::agent::conversation::messages::Messages;
use crate::agent::models::errors::WireError;
use crate::agent::run::request::{Built, History};
use crate::agent::session::shared::Shared;

/// A learning step's request, built from the conversation and the cache (`None`: no step).
pub type Step<'a> =
    dyn Fn(&dyn Messages, History<'_>) -> Result<Option<Built>, WireError> + Sync + 'a;

/// Takes the learning steps `step` builds until none is left, the provider of hash
/// `provider` encoding each; stops at the first step that teaches nothing (a provider error
/// before its body, a refused splice) or when `cancel` fires.
pub async fn learn(
    shared: &Arc<Shared>,
    provider: &str,
    cancel: &CancellationToken,
    step: &Step<'_>,
) {
    let mut stepped = false;
    'steps: loop {
        let built = {
            let state = shared.state();
            let held = state.messages();
            step(
                &held,
                History {
                    cache: &shared.history_cache,
                    generation: state.messages_generation(),
                    provider,
                    session: state.session_file_path(),
                },
            )
        };
        let Ok(Some((request, Some(splice)))) = built else {
            break;
        };
        let Ok(mut stream) = shared.host.complete(request, None, Some(splice.clone())) else {
            break;
        };
        stepped = true;
        // The provider hears that its body was not sent, and ends.
        loop {
            tokio::select! {
                next = stream.next() => if next.is_none() { break },
                _ = cancel.cancelled() => break 'steps,
            }
        }
        let learned = splice
            .learned
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        if !learned {
            break;
        }
    }
    if stepped {
        crate::memory::return_freed();
    }
}
