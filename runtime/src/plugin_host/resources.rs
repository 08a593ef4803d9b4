//! What extension, skill and prompt-template plugins declare (read once from `describe()`,
//! `skills()` and `templates()` and cached with the rest of the metadata), and the calls that
//! load a skill's instructions or expand a template.

use super::bindings::extension_world_v2::pith::plugin0_2_0::cli_flags as wit_flags;
use super::call::CallOptions;
use super::call::fresh_call;
use super::error::CallError;
use super::host::PluginHost;
pub use super::meta::{
    CommandMeta, ExtensionMeta, FlagKind, FlagMeta, FlagValue, RuleMeta, SkillMeta, TemplateMeta,
};
use super::plugin::ExtensionPre;
use super::plugin::{Loaded, Plugin, PluginMeta};
use super::tool::ToolSpec;

/// Fills the extension, skill and template parts of `meta` from the plugin's exports.
pub(crate) async fn describe_resources(
    host: &PluginHost,
    plugin: &Plugin,
    loaded: &Loaded,
    meta: &mut PluginMeta,
) -> Result<(), CallError> {
    let invalid = |reason: String| CallError::Load {
        plugin: plugin.manifest.id.clone(),
        reason,
    };
    if let Some(pre) = loaded.extension.clone() {
        let info = match pre {
            ExtensionPre::V2(pre) => {
                host.run_call(
                    plugin,
                    CallOptions::default(),
                    fresh_call!(pre, |instance, store| instance
                        .pith_plugin0_2_0_extension()
                        .call_describe(&mut *store)
                        .await),
                )
                .await?
            }
            ExtensionPre::V1(pre) => super::extension_v1::info(
                host.run_call(
                    plugin,
                    CallOptions::default(),
                    fresh_call!(pre, |instance, store| instance
                        .pith_plugin0_1_0_extension()
                        .call_describe(&mut *store)
                        .await),
                )
                .await?,
            ),
        };
        // An event pith does not know (a typo, or one of a newer pi) is never delivered; the
        // extension loads, and the name is reported (`pith plugin check` lists it too).
        let unknown_events: Vec<String> = info
            .events
            .iter()
            .filter(|e| !is_extension_event(e))
            .cloned()
            .collect();
        for unknown in &unknown_events {
            tracing::warn!(
                "{}: subscribes to the unknown event \"{unknown}\", which is never delivered (a typo?); the events are \"*\", {}",
                plugin.manifest.id,
                EXTENSION_EVENTS.join(", ")
            );
        }
        meta.extension = Some(ExtensionMeta {
            name: info.name,
            events: info.events,
            unknown_events,
            commands: info
                .commands
                .into_iter()
                .map(|c| CommandMeta {
                    name: c.name,
                    description: c.description,
                })
                .collect(),
            tools: info
                .tools
                .into_iter()
                .map(ToolSpec::from_wit)
                .collect::<Result<_, _>>()
                .map_err(invalid)?,
            rules: info
                .rules
                .into_iter()
                .map(|r| RuleMeta {
                    name: r.name,
                    description: r.description,
                    globs: r.globs,
                    trigger: r.trigger,
                    content: r.content,
                })
                .collect(),
            flags: info
                .flags
                .into_iter()
                .map(flag_meta)
                .collect::<Result<_, _>>()
                .map_err(invalid)?,
            virtual_models: info
                .virtual_models
                .into_iter()
                .map(super::imports::models::virtual_model)
                .collect::<Result<_, _>>()
                .map_err(invalid)?,
            providers: info
                .providers
                .into_iter()
                .map(super::imports::models::registration)
                .collect::<Result<_, _>>()
                .map_err(invalid)?,
        });
    }
    if let Some(pre) = loaded.skill.clone() {
        let skills = host
            .run_call(
                plugin,
                CallOptions::default(),
                fresh_call!(pre, |instance, store| instance
                    .pith_plugin0_1_0_skill()
                    .call_skills(&mut *store)
                    .await),
            )
            .await?;
        meta.skills = skills
            .into_iter()
            .map(|s| SkillMeta {
                name: s.name,
                description: s.description,
                disable_model_invocation: s.disable_model_invocation,
            })
            .collect();
    }
    if let Some(pre) = loaded.prompt_template.clone() {
        let templates = host
            .run_call(
                plugin,
                CallOptions::default(),
                fresh_call!(pre, |instance, store| instance
                    .pith_plugin0_1_0_prompt_template()
                    .call_templates(&mut *store)
                    .await),
            )
            .await?;
        meta.templates = templates
            .into_iter()
            .map(|t| TemplateMeta {
                name: t.name,
                description: t.description,
            })
            .collect();
    }
    Ok(())
}

impl PluginHost {
    /// The instructions of the skill `name` of a skill pack; the pack's own refusal is `Err`'s
    /// text as well.
    pub async fn load_skill(&self, plugin: &Plugin, name: &str) -> Result<String, String> {
        let loaded = self.loaded(plugin).await.map_err(|e| e.to_string())?;
        let pre = loaded
            .skill
            .clone()
            .ok_or_else(|| format!("{} is not a skill pack", plugin.manifest.id))?;
        let name = name.to_string();
        self.run_call(
            plugin,
            CallOptions::default(),
            fresh_call!(pre, |instance, store| instance
                .pith_plugin0_1_0_skill()
                .call_load(&mut *store, &name)
                .await),
        )
        .await
        .map_err(|e| e.to_string())?
    }

    /// Expands the template `name` of a template pack with `args`.
    pub async fn expand_template(
        &self,
        plugin: &Plugin,
        name: &str,
        args: Vec<String>,
    ) -> Result<String, String> {
        let loaded = self.loaded(plugin).await.map_err(|e| e.to_string())?;
        let pre = loaded
            .prompt_template
            .clone()
            .ok_or_else(|| format!("{} is not a prompt-template pack", plugin.manifest.id))?;
        let name = name.to_string();
        self.run_call(
            plugin,
            CallOptions::default(),
            fresh_call!(pre, |instance, store| instance
                .pith_plugin0_1_0_prompt_template()
                .call_expand(&mut *store, &name, &args)
                .await),
        )
        .await
        .map_err(|e| e.to_string())?
    }
}

/// The events an extension may subscribe to (besides `"*"`): pith's hooks, the session events
/// it observes, and pi's extension events pith does not fire (accepted so that an extension
/// written for pi loads).
pub const EXTENSION_EVENTS: &[&str] = &[
    // Hooks.
    "session_start",
    "session_before_switch",
    "session_before_fork",
    "session_before_tree",
    "session_before_compact",
    "input",
    "before_agent_start",
    "context",
    "tool_call",
    "tool_result",
    "resources_discover",
    "before_provider_request",
    "after_provider_response",
    "project_trust",
    // Observed session events.
    "agent_start",
    "agent_end",
    "agent_settled",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "queue_update",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "thinking_level_changed",
    "session_info_changed",
    "auto_retry_start",
    "auto_retry_end",
    "compaction_start",
    "compaction_end",
    "auto_compaction_start",
    "auto_compaction_end",
    "ttsr_triggered",
    "todo_reminder",
    "todo_auto_clear",
    "entry_appended",
    "summarization_retry_scheduled",
    "summarization_retry_attempt_start",
    "summarization_retry_finished",
    "plugins_changed",
    "session_switch",
    "session_fork",
    "session_tree",
    // pi's lifecycle events, typed.
    "session_compact",
    "session_shutdown",
    "model_select",
    "user_bash",
];

/// True for `"*"` and the names in [`EXTENSION_EVENTS`].
pub fn is_extension_event(name: &str) -> bool {
    name == "*" || EXTENSION_EVENTS.contains(&name)
}

/// A flag as the extension declared it, checked: a name pith's command line can carry, and a
/// default of the flag's kind (pi's `Invalid default for flag` error).
fn flag_meta(spec: wit_flags::FlagSpec) -> Result<FlagMeta, String> {
    let name = spec.name;
    if name.is_empty()
        || name.starts_with('-')
        || name.contains(|c: char| c == '=' || c.is_whitespace())
    {
        return Err(format!(
            "the flag {name:?} cannot be given on the command line: name it without dashes, \
             spaces or '=' (for example \"plan\" for --plan)"
        ));
    }
    let kind = match spec.kind {
        wit_flags::FlagKind::Boolean => FlagKind::Boolean,
        wit_flags::FlagKind::Text => FlagKind::Text,
    };
    let default = spec.default.map(|value| match value {
        wit_flags::FlagValue::Boolean(on) => FlagValue::Boolean(on),
        wit_flags::FlagValue::Text(text) => FlagValue::Text(text),
    });
    let mismatch = match (&kind, &default) {
        (FlagKind::Boolean, Some(FlagValue::Text(_))) => Some(("boolean", "string")),
        (FlagKind::Text, Some(FlagValue::Boolean(_))) => Some(("string", "boolean")),
        _ => None,
    };
    if let Some((expected, got)) = mismatch {
        return Err(format!(
            "Invalid default for flag \"{name}\": expected {expected}, got {got}"
        ));
    }
    Ok(FlagMeta {
        name,
        description: spec.description,
        kind,
        default,
    })
}
