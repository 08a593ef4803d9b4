//! Calling provider plugins: each request runs in its own task and fresh instance; its events
//! arrive in batches on a channel. Dropping the [`CompletionStream`] aborts the request: the
//! task, the instance and its HTTP response are dropped, which closes the connection.

use tokio::sync::mpsc;

use super::PluginHost;
use super::bindings::provider_world::exports::pith::plugin0_1_0::provider as wit;
use super::call::CallOptions;
use super::error::CallError;
use super::grants::UrlPrefix;
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
    /// `hooks` hear its HTTP requests and responses (a session's extensions).
    pub fn complete(
        self: &std::sync::Arc<Self>,
        request: ProviderRequest,
        hooks: Option<std::sync::Arc<dyn super::provider_hooks::ProviderHooks>>,
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
                        provider_hooks: hooks,
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
