//! A live extension: one instance per session, kept between calls so the extension keeps its
//! state. Each call runs under the plugin's limits; after a trap the instance is dropped and
//! the next call starts a fresh one.

use std::sync::Arc;

use wasmtime::Store;

use super::bindings::completions_world::ExtensionCompletions;
use super::bindings::completions_world::exports::pith::plugin0_1_0::completions::Completion;
use super::bindings::extension_world::ExtensionPluginCore as CoreV1;
use super::bindings::extension_world_v2::ExtensionPluginCore as CoreV2;
use super::bindings::extension_world_v2::exports::pith::plugin0_2_0::extension::{
    Event, EventResult, ToolOutcome,
};
use super::bindings::imports::pith::plugin0_1_0::types::ToolError;
use super::call::CallOptions;
use super::error::CallError;
use super::host::PluginHost;
use super::imports::ui::ExtensionContext;
use super::plugin::ExtensionPre;
use super::plugin::Plugin;
use super::sandbox::StoreState;

/// A started instance's exports: the core, and the completions when it has them.
#[derive(Clone)]
struct Exports {
    core: Core,
    completions: Option<Arc<ExtensionCompletions>>,
}

/// The core exports, by the version of the world the extension was built for.
#[derive(Clone)]
enum Core {
    V1(Arc<CoreV1>),
    V2(Arc<CoreV2>),
}

/// An extension's instance and its store.
pub struct ExtensionInstance {
    plugin: Arc<Plugin>,
    context: Arc<dyn ExtensionContext>,
    live: Option<(Store<StoreState>, Exports)>,
}

impl ExtensionInstance {
    /// An instance of `plugin` talking to `context`; instantiated on its first call.
    pub fn new(plugin: Arc<Plugin>, context: Arc<dyn ExtensionContext>) -> ExtensionInstance {
        ExtensionInstance {
            plugin,
            context,
            live: None,
        }
    }

    /// The plugin it runs.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Handles an event; the outer error is the sandbox's, the inner one the extension's.
    pub async fn on_event(
        &mut self,
        host: &PluginHost,
        event: Event,
    ) -> Result<Result<EventResult, String>, CallError> {
        self.hear(host, event, None).await
    }

    /// [`ExtensionInstance::on_event`] for an event that has pi's JSON beside its typed form
    /// (an agent event): an extension of version 0.1 gets that JSON, as it did before.
    pub async fn hear(
        &mut self,
        host: &PluginHost,
        event: Event,
        pi_json: Option<Arc<str>>,
    ) -> Result<Result<EventResult, String>, CallError> {
        self.call(host, move |store, bindings| {
            Box::pin(async move {
                match bindings.core {
                    Core::V2(core) => {
                        core.pith_plugin0_2_0_extension()
                            .call_on_event(&mut *store, &event)
                            .await
                    }
                    Core::V1(core) => {
                        let answer = core
                            .pith_plugin0_1_0_extension()
                            .call_on_event(&mut *store, &super::extension_v1::event(event, pi_json))
                            .await?;
                        Ok(answer.map(super::extension_v1::result))
                    }
                }
            })
        })
        .await
    }

    /// Runs one of the extension's commands.
    pub async fn run_command(
        &mut self,
        host: &PluginHost,
        name: &str,
        args: &str,
    ) -> Result<Result<(), String>, CallError> {
        let (name, args) = (name.to_string(), args.to_string());
        self.call(host, move |store, bindings| {
            Box::pin(async move {
                match bindings.core {
                    Core::V2(core) => {
                        core.pith_plugin0_2_0_extension()
                            .call_run_command(&mut *store, &name, &args)
                            .await
                    }
                    Core::V1(core) => {
                        core.pith_plugin0_1_0_extension()
                            .call_run_command(&mut *store, &name, &args)
                            .await
                    }
                }
            })
        })
        .await
    }

    /// Runs one of the extension's tools with JSON arguments.
    pub async fn execute_tool(
        &mut self,
        host: &PluginHost,
        name: &str,
        call_id: &str,
        arguments: &str,
    ) -> Result<Result<ToolOutcome, ToolError>, CallError> {
        let (name, call_id, arguments) =
            (name.to_string(), call_id.to_string(), arguments.to_string());
        self.call(host, move |store, bindings| {
            Box::pin(async move {
                match bindings.core {
                    Core::V2(core) => {
                        core.pith_plugin0_2_0_extension()
                            .call_execute_tool(&mut *store, &name, &call_id, &arguments)
                            .await
                    }
                    Core::V1(core) => {
                        let result = core
                            .pith_plugin0_1_0_extension()
                            .call_execute_tool(&mut *store, &name, &call_id, &arguments)
                            .await?;
                        Ok(result.map(|tool_result| ToolOutcome {
                            tool_result,
                            terminate: false,
                        }))
                    }
                }
            })
        })
        .await
    }

    /// The completions of a command's argument; none when the extension was built without
    /// the `completions` export.
    pub async fn complete_argument(
        &mut self,
        host: &PluginHost,
        command: &str,
        prefix: &str,
    ) -> Result<Vec<Completion>, CallError> {
        let (command, prefix) = (command.to_string(), prefix.to_string());
        self.call(host, move |store, bindings| {
            Box::pin(async move {
                match &bindings.completions {
                    Some(completions) => {
                        completions
                            .pith_plugin0_1_0_completions()
                            .call_complete_argument(&mut *store, &command, &prefix)
                            .await
                    }
                    None => Ok(Vec::new()),
                }
            })
        })
        .await
    }

    async fn call<R: Send + 'static>(
        &mut self,
        host: &PluginHost,
        body: impl for<'s> FnOnce(
            &'s mut Store<StoreState>,
            Exports,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = wasmtime::Result<R>> + Send + 's>,
        > + Send
        + 'static,
    ) -> Result<R, CallError> {
        let plugin = self.plugin.clone();
        let (mut store, bindings) = match self.live.take() {
            Some(live) => live,
            None => instantiate(host, plugin.clone(), self.context.clone()).await?,
        };
        let handle = bindings.clone();
        let outcome = host
            .drive(
                &mut store,
                &plugin,
                None,
                Box::new(move |store| body(store, handle)),
            )
            .await;
        if outcome.is_ok() {
            self.live = Some((store, bindings));
        }
        outcome
    }
}

/// A fresh instance of `plugin` whose imports reach `context`.
async fn instantiate(
    host: &PluginHost,
    plugin: Arc<Plugin>,
    context: Arc<dyn ExtensionContext>,
) -> Result<(Store<StoreState>, Exports), CallError> {
    let loaded = host.loaded(&plugin).await?;
    let pre = loaded.extension.clone().ok_or_else(|| CallError::Load {
        plugin: plugin.manifest.id.clone(),
        reason: "it is not an extension".into(),
    })?;
    let options = CallOptions {
        sandbox: context.sandbox(),
        ..CallOptions::default()
    };
    let mut store = host.new_store(&plugin, options)?;
    store.data_mut().extension = Some(context);
    let exports = host
        .drive(
            &mut store,
            &plugin,
            None,
            Box::new(move |store| {
                Box::pin(async move {
                    let (instance, core) = match pre {
                        ExtensionPre::V2(pre) => {
                            let instance =
                                pre.instance_pre().instantiate_async(&mut *store).await?;
                            let core = CoreV2::new(&mut *store, &instance)?;
                            (instance, Core::V2(Arc::new(core)))
                        }
                        ExtensionPre::V1(pre) => {
                            let instance =
                                pre.instance_pre().instantiate_async(&mut *store).await?;
                            let core = CoreV1::new(&mut *store, &instance)?;
                            (instance, Core::V1(Arc::new(core)))
                        }
                    };
                    // Built before `completions` existed: it has none.
                    let completions = ExtensionCompletions::new(&mut *store, &instance).ok();
                    Ok(Exports {
                        core,
                        completions: completions.map(Arc::new),
                    })
                })
            }),
        )
        .await?;
    Ok((store, exports))
}
