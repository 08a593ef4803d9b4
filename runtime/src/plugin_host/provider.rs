//! Calling provider plugins: each request runs in its own task and fresh instance; its events
//! arrive in batches on a channel. Dropping the [`CompletionStream`] aborts the request: the
//! task, the instance and its HTTP response are dropped, which closes the connection.

use tokio::sync::mpsc;

use super::bindings::provider_world::exports::pith::plugin0_1_0::provider as wit;
use super::call::CallOptions;
use super::error::CallError;
use super::grants::UrlPrefix;
use super::host::PluginHost;
use super::manifest::Kind;
pub use super::meta::{ProviderMeta, model_from_wit, model_to_wit};
use super::plugin::Plugin;

pub use wit::{Request as ProviderRequest, StreamEvent};

/// The events of one request, in batches; the request is aborted when this is dropped.
pub struct CompletionStream {
    events: mpsc::Receiver<Result<Vec<StreamEvent>, CallError>>,
    task: tokio::task::JoinHandle<()>,
}

impl CompletionStream {
    /// The next batch; `None` when the provider has finished.
    pub async fn next(&mut self) -> Option<Result<Vec<StreamEvent>, CallError>> {
        self.events.recv().await
    }
}

impl Drop for CompletionStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PluginHost {
    /// The provider plugin that implements `api`: the last loaded one the user trusts
    /// (first-party, or granted `providers`), else the last loaded one. A third-party plugin
    /// takes over no wire format a trusted plugin serves, and serves none of the built-in
    /// catalog's: the plugin gets the key of every model of that format.
    pub fn provider_for_api(&self, api: &str) -> Option<std::sync::Arc<Plugin>> {
        let built_in = crate::agent::models::catalog::catalog_apis().contains(api);
        let plugins = self.plugins();
        let serving = || {
            plugins.iter().rev().filter(|p| {
                p.manifest.has_kind(Kind::Provider)
                    && p.meta
                        .provider
                        .as_ref()
                        .is_some_and(|m| m.apis.iter().any(|a| a == api))
            })
        };
        let trusted = |p: &&std::sync::Arc<Plugin>| p.is_first_party() || p.capabilities.providers;
        serving()
            .find(trusted)
            .or_else(|| serving().find(|_| !built_in))
            .cloned()
    }

    /// Starts a request with the provider plugin that implements the request model's api;
    /// `hooks` hear its HTTP requests and responses (a session's extensions); `splice` puts
    /// the cached conversation prefix into its body (see `history_splice`).
    pub fn complete(
        self: &std::sync::Arc<Self>,
        request: ProviderRequest,
        hooks: Option<std::sync::Arc<dyn super::provider_hooks::ProviderHooks>>,
        splice: Option<std::sync::Arc<super::history_splice::HistorySplice>>,
    ) -> Result<CompletionStream, CallError> {
        let api = request.model.api.clone();
        let plugin = self.provider_for_api(&api).ok_or_else(|| {
            CallError::NotFound(format!("No provider plugin implements the API \"{api}\""))
        })?;
        // The model's base URL was configured by the user (catalogue or models.json): granted.
        let extra_http: Vec<UrlPrefix> = UrlPrefix::parse(&request.model.base_url)
            .into_iter()
            .collect();
        // The conversation is the host's data: a provider holds it once as it was handed over
        // and again as the body it encodes, with room for its parser's and encoder's copies.
        let data_allowance_bytes = DATA_ALLOWANCE_FACTOR * request_bytes(&request);
        let (tx, events) = mpsc::channel(64);
        let host = self.clone();
        let task = tokio::spawn(async move {
            let failed = tx.clone();
            let result = async {
                let loaded = host.loaded(&plugin).await?;
                let pre = loaded.provider.clone().ok_or_else(|| {
                    CallError::NotFound(format!("{} is not a provider", plugin.manifest.id))
                })?;
                host.run_call(
                    &plugin,
                    CallOptions {
                        extra_http,
                        provider_hooks: hooks,
                        history_splice: splice,
                        data_allowance_bytes,
                        ..CallOptions::default()
                    },
                    Box::new(move |store| {
                        Box::pin(async move {
                            let instance = pre.instantiate_async(&mut *store).await?;
                            let provider = instance.pith_plugin0_1_0_provider();
                            let completion =
                                match provider.call_complete(&mut *store, &request).await? {
                                    Ok(completion) => completion,
                                    Err(message) => {
                                        let _ =
                                            tx.send(Ok(vec![StreamEvent::Error(message)])).await;
                                        return Ok(());
                                    }
                                };
                            loop {
                                let batch = provider
                                    .completion()
                                    .call_next(&mut *store, completion)
                                    .await?;
                                match batch {
                                    Some(batch) => {
                                        // Waiting for the host to take the batch (a slow
                                        // reader behind stdout) is host time: it must not
                                        // count against the provider's guest deadline.
                                        let _host_time = store.data().clock.enter_host();
                                        if tx.send(Ok(batch)).await.is_err() {
                                            break;
                                        }
                                    }
                                    None => break,
                                }
                            }
                            completion.resource_drop_async(&mut *store).await?;
                            Ok(())
                        })
                    }),
                )
                .await
            }
            .await;
            if let Err(err) = result {
                let _ = failed.send(Err(err)).await;
            }
        });
        Ok(CompletionStream { events, task })
    }
}

/// How many times a request's text a provider call may use on top of its plugin's memory
/// limit (a session of 50,000 turns hands over about 180 MB of conversation).
pub const DATA_ALLOWANCE_FACTOR: u64 = 8;

/// The bytes of text and data a request hands to its provider: the system prompt, every
/// message's texts, images, tool calls and signatures, and the tools' definitions.
pub fn request_bytes(request: &ProviderRequest) -> u64 {
    use super::bindings::imports::pith::plugin0_1_0::types::{AssistantBlock, Content};
    let content = |blocks: &[Content]| -> usize {
        blocks
            .iter()
            .map(|block| match block {
                Content::Text(text) => text.len(),
                Content::Image(image) => image.data.len() + image.mime_type.len(),
            })
            .sum()
    };
    let messages: usize = request
        .messages
        .iter()
        .map(|message| match message {
            wit::Message::User(blocks) => content(blocks),
            wit::Message::ToolResult(result) => {
                content(&result.content) + result.tool_call_id.len() + result.tool_name.len()
            }
            wit::Message::Assistant(answer) => answer
                .content
                .iter()
                .map(|block| match block {
                    AssistantBlock::Text(text) => {
                        text.text.len() + text.signature.as_ref().map_or(0, String::len)
                    }
                    AssistantBlock::Thinking(thinking) => {
                        thinking.thinking.len() + thinking.signature.as_ref().map_or(0, String::len)
                    }
                    AssistantBlock::ToolCall(call) => {
                        call.id.len()
                            + call.name.len()
                            + call.arguments.len()
                            + call.thought_signature.as_ref().map_or(0, String::len)
                    }
                })
                .sum(),
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + tool.parameters.len())
        .sum();
    (request.system_prompt.as_ref().map_or(0, String::len) + messages + tools) as u64
}
