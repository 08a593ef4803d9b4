//! A model asked once, outside a session's run, with the whole answer collected: compaction's
//! summary and an extension's completion.

use crate::agent::conversation::message::Usage;
use crate::agent::model::Model;
use crate::plugin_host::PluginHost;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types::StopReason;
use crate::plugin_host::provider::{ProviderRequest, StreamEvent};

/// A model's whole answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its text.
    pub text: String,
    /// Its tokens and their cost.
    pub usage: Usage,
    /// Why it stopped (`stop` when the stream ended without saying).
    pub stop_reason: StopReason,
    /// True when the provider said it was done (not a stream that just ended).
    pub finished: bool,
}

/// Sends `request` to `model`'s provider plugin and collects the answer; `Err` is the
/// provider's message.
pub async fn ask(
    host: &std::sync::Arc<PluginHost>,
    model: &Model,
    request: ProviderRequest,
) -> Result<Answer, String> {
    let mut stream = host
        .complete(request, None, None)
        .map_err(|err| err.to_string())?;
    let mut answer = Answer {
        text: String::new(),
        usage: Usage::default(),
        stop_reason: StopReason::Stop,
        finished: false,
    };
    while let Some(batch) = stream.next().await {
        for event in batch.map_err(|err| err.to_string())? {
            match event {
                StreamEvent::TextEnd(end) => answer.text.push_str(&end.text),
                StreamEvent::Usage(reported) => {
                    answer.usage = crate::agent::run::stream::usage_with_cost(&reported, model)
                }
                StreamEvent::Error(message) => return Err(message),
                StreamEvent::Done(reason) => {
                    answer.stop_reason = reason;
                    answer.finished = true;
                    return Ok(answer);
                }
                _ => {}
            }
        }
    }
    Ok(answer)
}
