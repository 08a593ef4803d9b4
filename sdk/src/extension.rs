//! Extensions: implement [`Extension`] and export it with
//! [`export_extension!`](crate::export_extension). One instance lives for the session.

pub use crate::bindings::extension_world::exports::pith::plugin0_1_0::completions::Completion;
pub use crate::bindings::extension_world::exports::pith::plugin0_2_0::extension::{
    AgentStartChanges, BeforeAgentStartEvent, BeforeCompactEvent, BeforeSwitchEvent, CommandSpec,
    CompactionPreparation, CompactionReason, CompactionSummary, DiscoverReason,
    DiscoveredResources, Event, EventResult, ExtensionInfo, FailedRequest, FileChangeEvent,
    InputEvent, InputSource, ModelRoute, ModelSelectEvent, ModelSelectSource, ProjectTrustEvent,
    ProviderRequestEvent, ProviderResponseEvent, ResourcesDiscoverEvent, RouteReason, RouteRequest,
    RoutedModel, Rule, RunStart, SessionCompactEvent, SessionShutdownEvent, SessionStartEvent,
    SessionStartReason, ShutdownReason, SummaryUsage, SwitchReason, ToolCallEvent, ToolOutcome,
    ToolResultEvent, ToolResultPatch, TransformedInput, TrustAnswer, TrustDecision, UserBashEvent,
    UserBashResult,
};
pub use crate::bindings::extension_world::pith::plugin0_1_0::{session, ui};
pub use crate::bindings::extension_world::pith::plugin0_2_0::agent_events::AgentEvent;
pub use crate::bindings::extension_world::pith::plugin0_2_0::cli_flags::{
    FlagKind, FlagSpec, FlagValue,
};
pub use crate::bindings::extension_world::pith::plugin0_2_0::models::VirtualModelSpec;
pub use crate::bindings::extension_world::pith::plugin0_2_0::{
    agent_events, cli_flags, completion, entries, events_bus, models, session_control,
    session_read, wake_ups,
};
pub use crate::bindings::imports::pith::plugin0_1_0::types::{
    Content, CustomMessage, Image, ThinkingLevel, ToolError, ToolResult, ToolSpec,
};

impl ExtensionInfo {
    /// An extension named `name` that hears no event and registers nothing yet: add with
    /// [`ExtensionInfo::on`], [`ExtensionInfo::command`], [`ExtensionInfo::tool`] and
    /// [`ExtensionInfo::rule`].
    pub fn new(name: &str) -> ExtensionInfo {
        ExtensionInfo {
            name: name.into(),
            events: Vec::new(),
            commands: Vec::new(),
            tools: Vec::new(),
            rules: Vec::new(),
            flags: Vec::new(),
            virtual_models: Vec::new(),
            providers: Vec::new(),
        }
    }

    /// Also hears these events (pi's names: `tool_call`, `session_start`, …).
    pub fn on(mut self, events: &[&str]) -> ExtensionInfo {
        self.events.extend(events.iter().map(|e| e.to_string()));
        self
    }

    /// Also registers the command `/name`.
    pub fn command(mut self, name: &str, description: &str) -> ExtensionInfo {
        self.commands.push(CommandSpec {
            name: name.into(),
            description: description.into(),
        });
        self
    }

    /// Also registers a tool (run by [`Extension::execute_tool`]).
    pub fn tool(mut self, spec: ToolSpec) -> ExtensionInfo {
        self.tools.push(spec);
        self
    }

    /// Also contributes a streamed rule.
    pub fn rule(mut self, rule: Rule) -> ExtensionInfo {
        self.rules.push(rule);
        self
    }

    /// Also registers a command-line flag (pi's `registerFlag`): `pith --name` for a
    /// [`FlagSpec::boolean`], `pith --name value` for a [`FlagSpec::text`]. Read it with
    /// [`flag`].
    pub fn flag(mut self, flag: FlagSpec) -> ExtensionInfo {
        self.flags.push(flag);
        self
    }

    /// Also registers a virtual model (pi's `registerVirtualModel`): its requests come to
    /// [`Extension::on_event`] as [`Event::ModelRoute`], answered with
    /// [`EventResult::Route`] (see [`ModelRoute::to`]).
    pub fn virtual_model(mut self, model: VirtualModelSpec) -> ExtensionInfo {
        self.virtual_models.push(model);
        self
    }

    /// Also registers a provider from start-up on (pi's `registerProvider` in the factory; see
    /// [`ProviderRegistration::new`]). After start-up, [`models::register_provider`] does it.
    pub fn provider(mut self, provider: ProviderRegistration) -> ExtensionInfo {
        self.providers.push(provider);
        self
    }
}

pub use models::{ModelCost, ProviderModel, ProviderRegistration};

impl ProviderRegistration {
    /// The provider `name` serving its models over `api` at `base_url` (`api` is a provider
    /// plugin's wire format, or the extension's own when it also exports a provider).
    pub fn new(name: &str, api: &str, base_url: &str) -> ProviderRegistration {
        ProviderRegistration {
            name: name.into(),
            base_url: Some(base_url.into()),
            api_key: None,
            api: Some(api.into()),
            headers: Vec::new(),
            models: Vec::new(),
        }
    }

    /// Its key: a literal, `$NAME` (an environment variable) or `!command` (its output).
    pub fn api_key(mut self, key: &str) -> ProviderRegistration {
        self.api_key = Some(key.into());
        self
    }

    /// Also sends the header `name: value` with every request.
    pub fn header(mut self, name: &str, value: &str) -> ProviderRegistration {
        self.headers
            .push(crate::bindings::imports::pith::plugin0_1_0::types::Header {
                name: name.into(),
                value: value.into(),
            });
        self
    }

    /// Also lists `model`.
    pub fn model(mut self, model: ProviderModel) -> ProviderRegistration {
        self.models.push(model);
        self
    }
}

impl ProviderModel {
    /// The model `id`, shown as `name`: text only, not reasoning, free, pi's default limits.
    pub fn new(id: &str, name: &str) -> ProviderModel {
        ProviderModel {
            id: id.into(),
            name: Some(name.into()),
            api: None,
            base_url: None,
            reasoning: false,
            images: false,
            cost: None,
            context_window: None,
            max_tokens: None,
            headers: Vec::new(),
            compat: None,
        }
    }

    /// A reasoning model that takes images (or not).
    pub fn abilities(mut self, reasoning: bool, images: bool) -> ProviderModel {
        self.reasoning = reasoning;
        self.images = images;
        self
    }

    /// Its context window and output limit in tokens.
    pub fn limits(mut self, context_window: u64, max_tokens: u64) -> ProviderModel {
        self.context_window = Some(context_window);
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Its prices in dollars per million tokens: input, output, cache reads, cache writes.
    pub fn cost(
        mut self,
        input: f64,
        output: f64,
        cache_read: f64,
        cache_write: f64,
    ) -> ProviderModel {
        self.cost = Some(ModelCost {
            input,
            output,
            cache_read,
            cache_write,
        });
        self
    }
}

impl VirtualModelSpec {
    /// `provider/id`, shown as `name`: pi's defaults (only the `off` thinking level, limits
    /// unknown, images offered).
    pub fn new(provider: &str, id: &str, name: &str) -> VirtualModelSpec {
        VirtualModelSpec {
            provider: provider.into(),
            id: id.into(),
            name: name.into(),
            thinking_levels: vec![ThinkingLevel::Off],
            context_window: None,
            max_tokens: None,
            images: true,
        }
    }

    /// The thinking levels offered for selection.
    pub fn thinking_levels(mut self, levels: &[ThinkingLevel]) -> VirtualModelSpec {
        self.thinking_levels = levels.to_vec();
        self
    }

    /// The context window and output limit shown before the first answer.
    pub fn limits(mut self, context_window: u64, max_tokens: u64) -> VirtualModelSpec {
        self.context_window = Some(context_window);
        self.max_tokens = Some(max_tokens);
        self
    }
}

impl ModelRoute {
    /// The request goes to `provider/id` at `thinking_level`, keeping the router state.
    pub fn to(provider: &str, id: &str, thinking_level: ThinkingLevel) -> ModelRoute {
        ModelRoute {
            provider: provider.into(),
            id: id.into(),
            thinking_level,
            state: None,
        }
    }

    /// …and stores `state` (JSON) as the router state on the session branch.
    pub fn with_state(mut self, state: &str) -> ModelRoute {
        self.state = Some(state.into());
        self
    }
}

impl FlagSpec {
    /// A switch, `--name`: false unless given.
    pub fn boolean(name: &str, description: &str) -> FlagSpec {
        FlagSpec {
            name: name.into(),
            description: Some(description.into()),
            kind: FlagKind::Boolean,
            default: Some(FlagValue::Boolean(false)),
        }
    }

    /// A flag with a value, `--name value`: none unless given.
    pub fn text(name: &str, description: &str) -> FlagSpec {
        FlagSpec {
            name: name.into(),
            description: Some(description.into()),
            kind: FlagKind::Text,
            default: None,
        }
    }

    /// The same flag with a default value.
    pub fn default(mut self, value: FlagValue) -> FlagSpec {
        self.default = Some(value);
        self
    }
}

/// The value of this extension's flag `name` (pi's `getFlag`): the command line's, else its
/// default; `None` for a flag the extension did not register.
pub fn flag(name: &str) -> Option<FlagValue> {
    cli_flags::value(name)
}

/// True when this extension's switch flag `name` is on (`pith --name`).
pub fn flag_on(name: &str) -> bool {
    matches!(flag(name), Some(FlagValue::Boolean(true)))
}

/// The text of this extension's flag `name` (`pith --name value`), if it has one.
pub fn flag_text(name: &str) -> Option<String> {
    match flag(name) {
        Some(FlagValue::Text(text)) => Some(text),
        _ => None,
    }
}

impl EventResult {
    /// Blocks the tool call; the model sees `reason`.
    pub fn block(reason: impl Into<String>) -> EventResult {
        EventResult::Block(Some(reason.into()))
    }
}

impl ToolCallEvent {
    /// The call's arguments (an empty object when they are not JSON).
    pub fn arguments(&self) -> serde_json::Value {
        serde_json::from_str(&self.input).unwrap_or_else(|_| serde_json::json!({}))
    }

    /// One string argument, if the call has it.
    pub fn argument(&self, key: &str) -> Option<String> {
        self.arguments()
            .get(key)
            .and_then(|value| value.as_str())
            .map(str::to_string)
    }

    /// The call that made this one, when another tool made it (pi's `parentToolCallId`: a
    /// `codemode` script's calls); `None` for the model's own calls.
    pub fn parent_tool_call_id(&self) -> Option<String> {
        session_read::tool_call_parent(&self.tool_call_id)
    }
}

impl ToolResultEvent {
    /// The call that made this one, when another tool made it (pi's `parentToolCallId`).
    pub fn parent_tool_call_id(&self) -> Option<String> {
        session_read::tool_call_parent(&self.tool_call_id)
    }
}

/// An extension. The host creates one with [`Extension::new`] per session and calls it for
/// the events it subscribed to.
pub trait Extension: Sized + 'static {
    /// Creates the extension's state.
    fn new() -> Self;

    /// Its name, subscribed events, commands, tools and rules.
    fn describe(&self) -> ExtensionInfo;

    /// Handles an event; goes on unchanged by default.
    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        let _ = event;
        Ok(EventResult::Continue)
    }

    /// Runs a registered command with the text after its name.
    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        let _ = args;
        Err(format!("Unknown command: {name}"))
    }

    /// The completions of a registered command's argument from what has been typed after its
    /// name (`get_argument_completions`); none by default.
    fn complete_argument(&mut self, command: &str, prefix: &str) -> Vec<Completion> {
        let _ = (command, prefix);
        Vec::new()
    }

    /// Runs a registered tool.
    fn execute_tool(
        &mut self,
        name: &str,
        call_id: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolResult, ToolError> {
        let _ = (call_id, arguments);
        Err(ToolError::new(format!("Unknown tool: {name}")))
    }

    /// Runs a registered tool and says whether the run ends after its batch (pi's
    /// `terminate`); by default [`Extension::execute_tool`]'s result, the run going on.
    fn execute_tool_outcome(
        &mut self,
        name: &str,
        call_id: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolOutcome, ToolError> {
        self.execute_tool(name, call_id, arguments)
            .map(|tool_result| ToolOutcome {
                tool_result,
                terminate: false,
            })
    }
}

/// Runs `f` on the extension instance, creating it on first use; used by the export macro.
#[doc(hidden)]
pub fn __with_instance<T: Extension, R>(
    cell: &'static std::thread::LocalKey<std::cell::RefCell<Option<T>>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    cell.with(|slot| {
        let mut slot = slot.borrow_mut();
        f(slot.get_or_insert_with(T::new))
    })
}

/// Exports `T: Extension` as this component's `extension` and `completions` interfaces.
#[macro_export]
macro_rules! export_extension {
    ($extension:ty) => {
        ::std::thread_local! {
            static __PITH_EXTENSION: ::std::cell::RefCell<::std::option::Option<$extension>> =
                const { ::std::cell::RefCell::new(None) };
        }

        #[doc(hidden)]
        pub struct __PithExtension;

        impl $crate::bindings::extension_world::exports::pith::plugin0_2_0::extension::Guest
            for __PithExtension
        {
            fn describe() -> $crate::extension::ExtensionInfo {
                $crate::extension::__with_instance(&__PITH_EXTENSION, |ext| {
                    <$extension as $crate::extension::Extension>::describe(ext)
                })
            }

            fn on_event(
                event: $crate::extension::Event,
            ) -> ::std::result::Result<$crate::extension::EventResult, ::std::string::String> {
                $crate::extension::__with_instance(&__PITH_EXTENSION, |ext| {
                    <$extension as $crate::extension::Extension>::on_event(ext, event)
                })
            }

            fn run_command(
                name: ::std::string::String,
                args: ::std::string::String,
            ) -> ::std::result::Result<(), ::std::string::String> {
                $crate::extension::__with_instance(&__PITH_EXTENSION, |ext| {
                    <$extension as $crate::extension::Extension>::run_command(ext, &name, &args)
                })
            }

            fn execute_tool(
                name: ::std::string::String,
                call_id: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<$crate::extension::ToolOutcome, $crate::extension::ToolError>
            {
                let arguments = match $crate::serde_json::from_str(&arguments) {
                    Ok(value) => value,
                    Err(err) => {
                        return Err($crate::extension::ToolError::new(::std::format!(
                            "Invalid arguments JSON: {err}"
                        )));
                    }
                };
                $crate::extension::__with_instance(&__PITH_EXTENSION, |ext| {
                    <$extension as $crate::extension::Extension>::execute_tool_outcome(
                        ext, &name, &call_id, arguments,
                    )
                })
            }
        }

        impl $crate::bindings::extension_world::exports::pith::plugin0_1_0::completions::Guest
            for __PithExtension
        {
            fn complete_argument(
                command: ::std::string::String,
                prefix: ::std::string::String,
            ) -> ::std::vec::Vec<$crate::extension::Completion> {
                $crate::extension::__with_instance(&__PITH_EXTENSION, |ext| {
                    <$extension as $crate::extension::Extension>::complete_argument(
                        ext, &command, &prefix,
                    )
                })
            }
        }

        $crate::bindings::extension_world::__export_extension_world!(__PithExtension);
    };
}
