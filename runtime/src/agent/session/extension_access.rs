//! What an extension may read and change of its session (the plugin host's `SessionAccess`,
//! behind version 0.2's `models`, `session-read` and `session-control` imports), through the
//! same commands every front-end uses.

use super::{Session, SessionContext, SessionError};
use crate::agent::extensions::typed;
use crate::model::{Model, ThinkingLevel};
use crate::plugin_host::bindings::extension_world_v2::pith::plugin0_2_0::{
    completion, entries, session_read,
};
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::plugin_host::bindings::provider_world::exports::pith::plugin0_1_0::provider as pwit;
use crate::plugin_host::imports::ui::BoxFuture;
use crate::plugin_host::resources::FlagValue;
use crate::plugin_host::session_context::{
    ContextFill, ModelRefusal, SessionAccess, SessionMove, ToolSummary,
};

impl SessionContext {
    fn with<R: Default>(&self, read: impl FnOnce(&Session) -> R) -> R {
        self.session()
            .map(|session| read(&session))
            .unwrap_or_default()
    }
}

impl SessionAccess for SessionContext {
    fn current_model(&self) -> Option<Model> {
        self.with(|s| s.model_and_thinking().0)
    }

    fn thinking_level(&self) -> ThinkingLevel {
        self.session()
            .map_or(ThinkingLevel::Off, |s| s.model_and_thinking().1)
    }

    fn find_model(&self, provider: &str, id: &str) -> Option<Model> {
        self.with(|s| s.shared.models().find(provider, id))
    }

    fn available_models(&self) -> Vec<Model> {
        self.with(|s| s.usable_models())
    }

    fn has_auth(&self, provider: &str) -> bool {
        self.with(|s| s.shared.models().has_key(provider))
    }

    fn session_id(&self) -> String {
        self.with(|s| s.shared.state().session_id.clone())
    }

    fn session_file(&self) -> Option<String> {
        self.with(|s| s.session_file())
    }

    fn cwd(&self) -> String {
        self.with(|s| s.cwd().display().to_string())
    }

    fn leaf_id(&self) -> Option<String> {
        self.with(|s| s.shared.state().store.leaf_id().map(str::to_string))
    }

    fn label(&self, entry_id: &str) -> Option<String> {
        self.with(|s| s.shared.state().store.label(entry_id))
    }

    fn all_entries(&self) -> Vec<entries::SessionEntry> {
        self.with(|s| {
            let state = s.shared.state();
            let lines = state.store.lines();
            state
                .store
                .all_entries()
                .iter()
                .map(|entry| typed::entry(&lines.body(entry)))
                .collect()
        })
    }

    fn branch(&self) -> Vec<entries::SessionEntry> {
        self.with(|s| {
            let state = s.shared.state();
            let lines = state.store.lines();
            state
                .store
                .path_to_leaf()
                .into_iter()
                .map(|entry| typed::entry(&lines.body(entry)))
                .collect()
        })
    }

    fn entry(&self, id: &str) -> Option<entries::SessionEntry> {
        self.with(|s| {
            let state = s.shared.state();
            state
                .store
                .entry(id)
                .map(|entry| typed::entry(&state.store.body(entry)))
        })
    }

    fn system_prompt(&self) -> String {
        self.with(|s| {
            let tools = s.shared.tools();
            crate::agent::extensions::session_hooks::system_prompt(&s.shared, &tools)
        })
    }

    fn has_pending_messages(&self) -> bool {
        self.with(|s| s.state().pending_message_count > 0)
    }

    fn is_project_trusted(&self) -> bool {
        self.with(|s| s.state().project.trusted)
    }

    fn tool_call_parent(&self, id: &str) -> Option<String> {
        self.with(|s| {
            s.shared
                .nested_parents
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .parent_of(id)
        })
    }

    fn mode(&self) -> session_read::RunMode {
        self.with(|s| s.shared.mode).into()
    }

    fn has_ui(&self) -> bool {
        self.with(|s| s.shared.mode.has_ui())
    }

    fn commands(&self) -> Vec<session_read::CommandInfo> {
        use super::answers::CommandSource;
        self.with(|s| {
            s.commands()
                .commands
                .into_iter()
                .map(|command| session_read::CommandInfo {
                    name: command.name,
                    description: command.description,
                    source: match command.source {
                        CommandSource::Extension => session_read::CommandSource::Extension,
                        CommandSource::Prompt => session_read::CommandSource::Prompt,
                        CommandSource::Skill => session_read::CommandSource::Skill,
                    },
                    path: command.source_info.path,
                })
                .collect()
        })
    }

    fn settings(&self) -> String {
        self.with(|s| {
            let sources = &s.shared.sources;
            crate::settings::Settings::load(
                &sources.global_settings,
                sources.project_dir.as_deref(),
            )
            .merged()
            .to_string()
        })
    }

    fn flag(&self, plugin: &str, name: &str) -> Option<FlagValue> {
        self.with(|s| {
            let slots = s.shared.extensions.slots();
            let own = slots
                .iter()
                .find(|slot| slot.plugin.manifest.id == plugin)?;
            s.shared
                .flags
                .value(&own.meta, slots.iter().map(|slot| &slot.meta), name)
        })
    }

    fn set_timer(&self, plugin: &str, id: &str, delay_ms: u64, repeat: bool) {
        if let Some(session) = self.session() {
            session.shared.extensions.set_timer(
                plugin,
                id,
                std::time::Duration::from_millis(delay_ms),
                repeat,
            );
        }
    }

    fn cancel_timer(&self, plugin: &str, id: &str) -> bool {
        self.with(|s| s.shared.extensions.cancel_timer(plugin, id))
    }

    fn watch(&self, plugin: &str, id: &str, path: &str) -> Result<(), String> {
        let Some(session) = self.session() else {
            return Err("the session has ended".into());
        };
        let cwd = session.cwd().to_path_buf();
        let full = crate::sandbox::paths::normalize(&cwd.join(path));
        let real = full
            .canonicalize()
            .map_err(|err| format!("cannot watch {path}: {err}"))?;
        let workspace = cwd.canonicalize().unwrap_or(cwd);
        let policy = session.shared.sandbox();
        let protected = policy.protected();
        if protected.iter().any(|p| real.starts_with(p)) {
            return Err(format!(
                "cannot watch {path}: the sandbox protects it (the agent directory or the deny \
                 list)"
            ));
        }
        // What the extension's own calls may read: the workspace (with its grant) and the
        // granted folders outside it that a call opens.
        let allowed = session
            .shared
            .extensions
            .slots()
            .iter()
            .find(|slot| slot.plugin.manifest.id == plugin)
            .is_some_and(|slot| {
                let capabilities = &slot.plugin.capabilities;
                let in_workspace = real.starts_with(&workspace)
                    && capabilities.workspace != crate::plugin_host::grants::WorkspaceAccess::None;
                in_workspace
                    || crate::plugin_host::sandbox::openable_dirs(&capabilities.dirs, &policy)
                        .iter()
                        .any(|(_, dir)| real.starts_with(dir))
            });
        if !allowed {
            return Err(format!(
                "cannot watch {path}: it is outside the session's workspace ({}) and the folders \
                 granted to the extension (`dirs`); an extension watches only what it may read",
                workspace.display()
            ));
        }
        session
            .shared
            .extensions
            .watch(plugin, id, &real, protected)
    }

    fn unwatch(&self, plugin: &str, id: &str) -> bool {
        self.with(|s| s.shared.extensions.unwatch(plugin, id))
    }

    fn context_fill(&self) -> Option<ContextFill> {
        self.with(|s| {
            s.model_and_thinking().0?;
            let usage = s.stats().context_usage;
            let known = usage.tokens > 0;
            Some(ContextFill {
                tokens: known.then_some(usage.tokens),
                context_window: usage.context_window,
                percent: known.then_some(usage.percent),
            })
        })
    }

    fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<(), String> {
        match self.session() {
            Some(session) => session
                .set_entry_label(entry_id, label)
                .map_err(|err| err.to_string()),
            None => Err("the session has ended".into()),
        }
    }

    fn set_model(&self, provider: &str, id: &str) -> Result<(), ModelRefusal> {
        let session = self.session().ok_or(ModelRefusal::Unknown)?;
        match session.set_model(provider, id) {
            Ok(_) => Ok(()),
            Err(SessionError::ModelNotFound { .. })
                if session.shared.models().find(provider, id).is_some() =>
            {
                Err(ModelRefusal::NoKey)
            }
            Err(_) => Err(ModelRefusal::Unknown),
        }
    }

    fn set_thinking_level(&self, level: ThinkingLevel) {
        if let Some(session) = self.session() {
            session.set_thinking_level(level);
        }
    }

    fn active_tools(&self) -> Vec<String> {
        self.with(|s| {
            s.tools()
                .tools
                .into_iter()
                .filter(|tool| tool.active)
                .map(|tool| tool.name)
                .collect()
        })
    }

    fn all_tools(&self) -> Vec<ToolSummary> {
        self.with(|s| {
            s.tools()
                .tools
                .into_iter()
                .map(|tool| ToolSummary {
                    name: tool.name,
                    description: tool.description,
                    active: tool.active,
                })
                .collect()
        })
    }

    fn set_active_tools(&self, names: Vec<String>) -> Result<(), Vec<String>> {
        let Some(session) = self.session() else {
            return Err(names);
        };
        match session.set_active_tools(names) {
            Ok(_) => Ok(()),
            Err(SessionError::UnknownTools { unknown, .. }) => Err(unknown),
            Err(_) => Err(Vec::new()),
        }
    }

    fn request(&self, plugin: &str, requested: SessionMove) {
        let Some(session) = self.session() else {
            return;
        };
        let plugin = plugin.to_string();
        // A task of its own: the move calls the extensions' hooks, this one's included, which
        // wait for its call to return.
        tokio::spawn(async move {
            let (what, failed) = match requested {
                // Its outcome, a failure too, is told by `compaction_end` (pi's `onError`).
                SessionMove::Compact(instructions) => {
                    let _ = session.compact_for_extension(instructions.as_deref()).await;
                    return;
                }
                SessionMove::NewSession => {
                    session.new_session(None).await;
                    ("new_session", None)
                }
                SessionMove::Fork(entry) => ("fork", session.fork(&entry).await.err()),
                SessionMove::NavigateTree(entry) => {
                    ("navigate_tree", session.navigate_tree(&entry).await.err())
                }
                SessionMove::SwitchSession(path) => {
                    let switched = match session.shared.events.switch_session(&path) {
                        Some(front_end) => front_end.await,
                        None => session.switch_from_extension(&path).await,
                    };
                    if let Err(problem) = switched {
                        session
                            .shared
                            .extensions
                            .error(&plugin, "switch_session", &problem);
                    }
                    return;
                }
                SessionMove::Reload => {
                    if let Err(problem) = session.reload_from_extension().await {
                        session.shared.extensions.error(&plugin, "reload", &problem);
                    }
                    return;
                }
                SessionMove::Shutdown => {
                    session.shared.events.extension_shutdown();
                    return;
                }
            };
            if let Some(error) = failed {
                session
                    .shared
                    .extensions
                    .error(&plugin, what, &error.to_string());
            }
        });
    }

    fn register_tool(&self, plugin: &str, spec: crate::plugin_host::tool::ToolSpec) {
        if let Some(session) = self.session() {
            session.shared.extensions.register_tool(plugin, spec);
        }
    }

    fn unregister_tool(&self, plugin: &str, name: &str) -> bool {
        self.with(|s| s.shared.extensions.unregister_tool(plugin, name))
    }

    fn register_provider(
        &self,
        plugin: &str,
        registration: crate::agent::models::ProviderRegistration,
    ) -> Result<(), String> {
        self.session()
            .map(|s| s.shared.register_provider(plugin, registration))
            .unwrap_or_else(|| Err(crate::plugin_host::session_context::NO_SESSION.into()))
    }

    fn unregister_provider(&self, plugin: &str, name: &str) {
        self.with(|s| s.shared.unregister_provider(plugin, name));
    }

    fn register_virtual_model(
        &self,
        plugin: &str,
        model: crate::model::Model,
    ) -> Result<(), String> {
        self.session()
            .map(|s| s.shared.register_virtual_model(plugin, model))
            .unwrap_or_else(|| Err(crate::plugin_host::session_context::NO_SESSION.into()))
    }

    fn unregister_virtual_model(&self, plugin: &str, provider: &str, id: &str) {
        self.with(|s| s.shared.unregister_virtual_model(plugin, provider, id));
    }

    fn subscribe(&self, plugin: &str, channel: &str, hear: bool) {
        if let Some(session) = self.session() {
            session.shared.extensions.subscribe(plugin, channel, hear);
        }
    }

    fn emit(&self, channel: &str, data: String) {
        if let Some(session) = self.session() {
            session.shared.extensions.emit_on_bus(channel, data);
        }
    }

    fn complete(
        &self,
        plugin: String,
        request: completion::CompletionRequest,
    ) -> BoxFuture<Result<completion::CompletionAnswer, completion::CompletionError>> {
        let shared = self.shared.upgrade();
        Box::pin(async move {
            let Some(shared) = shared else {
                return Err(completion::CompletionError::Failed(
                    "the session has ended".into(),
                ));
            };
            let models = shared.models();
            let mut model = models
                .find(&request.provider, &request.model)
                .ok_or(completion::CompletionError::UnknownModel)?;
            let mut routed_level = None;
            // A virtual model's completion goes where its router sends a `direct` request
            // (told no conversation: the completion's messages are not the session's).
            if model.is_virtual() {
                // The router is this extension itself, busy with the call that asks: its
                // instance cannot be entered again.
                if models.router(&model.provider, &model.id) == Some(plugin.as_str()) {
                    return Err(completion::CompletionError::Failed(format!(
                        "the virtual model {}/{} is routed by this extension, which is busy \
                         with this call: ask a physical model (models.find)",
                        model.provider, model.id
                    )));
                }
                let level = request
                    .thinking
                    .map_or(ThinkingLevel::Off, ThinkingLevel::from);
                let direct = crate::agent::extensions::hooks::RouteReason::Direct;
                let route =
                    crate::agent::run::routing::route(&shared, &model, level, &[], direct, None)
                        .await
                        .map_err(completion::CompletionError::Failed)?;
                model = route.model;
                routed_level = Some(route.thinking);
            }
            if !models.has_key(&model.provider) {
                return Err(completion::CompletionError::NoCredentials);
            }
            let wire = crate::agent::models::provider_env::wire_model(&model)
                .map_err(|err| completion::CompletionError::Failed(err.to_string()))?;
            let thinking = routed_level
                .or(request.thinking.map(ThinkingLevel::from))
                .unwrap_or(ThinkingLevel::Off)
                .clamp(&model);
            let asked = crate::plugin_host::provider::ProviderRequest {
                model: wire,
                system_prompt: request.system_prompt,
                messages: request
                    .messages
                    .into_iter()
                    .map(|message| match message {
                        completion::ChatMessage::User(content) => pwit::Message::User(content),
                        completion::ChatMessage::Assistant(text) => {
                            pwit::Message::Assistant(pwit::AssistantMessage {
                                content: vec![wit::AssistantBlock::Text(wit::SignedText {
                                    text,
                                    signature: None,
                                })],
                                api: model.api.clone(),
                                provider: model.provider.clone(),
                                model: model.id.clone(),
                                stop_reason: wit::StopReason::Stop,
                            })
                        }
                    })
                    .collect(),
                tools: Vec::new(),
                api_key: models.api_key(&model.provider),
                thinking: thinking.into(),
                thinking_budgets: None,
                max_tokens: request.max_tokens,
                temperature: None,
                session_id: None,
                cache_retention: crate::agent::run::request::cache_retention(),
            };
            let answer = crate::agent::models::ask::ask(&shared.host, &model, asked)
                .await
                .map_err(completion::CompletionError::Failed)?;
            shared.spent(&plugin, &answer.usage);
            Ok(completion::CompletionAnswer {
                text: answer.text,
                usage: typed::usage(&answer.usage),
                stop_reason: answer.stop_reason,
            })
        })
    }
}
