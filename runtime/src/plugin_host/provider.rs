//! Calling provider plugins: each request runs in its own task and fresh instance; its events
//! arrive in batches on a channel. Dropping the [`CompletionStream`] aborts the request: the
//! task, the instance and its HTTP response are dropped, which closes the connection.

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::PluginHost;
use super::bindings::provider_world::exports::pith::plugin0_1_0::provider as wit;
use super::call::CallOptions;
use super::error::CallError;
use super::grants::UrlPrefix;
use super::manifest::Kind;
use super::plugin::Plugin;
use crate::model::{Model, ModelCost};

pub use wit::{Request as ProviderRequest, StreamEvent};

/// What a provider plugin serves (from its `describe()`, cached).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderMeta {
    /// The wire formats it implements.
    pub apis: Vec<String>,
    /// Its built-in models.
    pub models: Vec<Model>,
    /// Provider name → env vars holding its API key, in order.
    pub key_env_vars: Vec<(String, Vec<String>)>,
}

impl ProviderMeta {
    /// Converts a plugin's `describe()`.
    pub fn from_wit(info: wit::ProviderInfo) -> ProviderMeta {
        ProviderMeta {
            apis: info.apis,
            models: info.models.into_iter().map(model_from_wit).collect(),
            key_env_vars: info.key_env_vars,
        }
    }
}

/// A WIT model as pi's model JSON.
pub fn model_from_wit(model: wit::Model) -> Model {
    Model {
        id: model.id,
        name: model.name,
        api: model.api,
        provider: model.provider,
        base_url: model.base_url,
        reasoning: model.reasoning,
        input: model
            .input
            .iter()
            .map(|k| match k {
                wit::InputKind::Text => "text".to_string(),
                wit::InputKind::Image => "image".to_string(),
            })
            .collect(),
        cost: ModelCost {
            input: model.cost.input,
            output: model.cost.output,
            cache_read: model.cost.cache_read,
            cache_write: model.cost.cache_write,
            tiers: Vec::new(),
        },
        context_window: model.context_window.into(),
        max_tokens: model.max_tokens.into(),
        headers: (!model.headers.is_empty()).then(|| {
            model
                .headers
                .into_iter()
                .map(|h| (h.name, serde_json::Value::String(h.value)))
                .collect()
        }),
        compat: model.compat.and_then(|c| serde_json::from_str(&c).ok()),
        extra: Default::default(),
    }
}

/// pi's model JSON as the WIT model a provider receives.
pub fn model_to_wit(model: &Model) -> wit::Model {
    use super::bindings::imports::pith::plugin0_1_0::types::Header;
    wit::Model {
        id: model.id.clone(),
        name: model.name.clone(),
        api: model.api.clone(),
        provider: model.provider.clone(),
        base_url: model.base_url.clone(),
        reasoning: model.reasoning,
        input: model
            .input
            .iter()
            .filter_map(|k| match k.as_str() {
                "text" => Some(wit::InputKind::Text),
                "image" => Some(wit::InputKind::Image),
                _ => None,
            })
            .collect(),
        cost: wit::ModelCost {
            input: model.cost.input,
            output: model.cost.output,
            cache_read: model.cost.cache_read,
            cache_write: model.cost.cache_write,
        },
        context_window: model.context_window.min(u32::MAX as u64) as u32,
        max_tokens: model.max_tokens.min(u32::MAX as u64) as u32,
        headers: model
            .headers
            .iter()
            .flatten()
            .map(|(name, value)| Header {
                name: name.clone(),
                value: value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string),
            })
            .collect(),
        compat: model.compat.as_ref().map(|c| c.to_string()),
    }
}

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
    /// The provider plugin that implements `api` (the last loaded one wins).
    pub fn provider_for_api(&self, api: &str) -> Option<std::sync::Arc<Plugin>> {
        self.plugins()
            .iter()
            .rev()
            .find(|p| {
                p.manifest.has_kind(Kind::Provider)
                    && p.meta
                        .provider
                        .as_ref()
                        .is_some_and(|m| m.apis.iter().any(|a| a == api))
            })
            .cloned()
    }

    /// Starts a request with the provider plugin that implements the request model's api.
    pub fn complete(
        self: &std::sync::Arc<Self>,
        request: ProviderRequest,
    ) -> Result<CompletionStream, CallError> {
        let api = request.model.api.clone();
        let plugin = self.provider_for_api(&api).ok_or_else(|| {
            CallError::NotFound(format!("No provider plugin implements the API \"{api}\""))
        })?;
        // The model's base URL was configured by the user (catalogue or models.json): granted.
        let extra_http: Vec<UrlPrefix> = UrlPrefix::parse(&request.model.base_url)
            .into_iter()
            .collect();
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
