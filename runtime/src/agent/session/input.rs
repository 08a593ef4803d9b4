//! What happens to a prompt's text before it reaches the model, in pi's order: an extension
//! command (`/name args`) runs instead; the `input` hook may transform or handle it; then
//! `/skill:name` and `/template` expand. Also `get_commands`' listing.

use std::sync::Arc;

use crate::agent::extensions::Slot;
use crate::agent::extensions::hooks::{Event, EventResult, InputEvent, InputSource};
use crate::agent::session::answers::{
    CommandInfo, CommandList, CommandSource, Completions, SourceInfo,
};
use crate::agent::session::{Session, SessionError};
use crate::content::Content;
use crate::plugin_host::bindings::imports::pith::plugin0_1_0::types as wit;
use crate::resources::{Location, skills, templates};

/// What to do with an input.
pub enum Input {
    /// Run this extension command (after the response is out).
    Command(CommandCall),
    /// An extension handled it; nothing more happens.
    Handled,
    /// Send this to the model.
    Prompt {
        /// The expanded text.
        text: String,
        /// The images.
        images: Vec<Content>,
    },
}

/// An extension command a submission named.
pub struct CommandCall {
    slot: Arc<Slot>,
    name: String,
    args: String,
}

impl CommandCall {
    /// Runs it (a run it starts goes on by itself).
    pub async fn run(self, session: &Session) {
        session
            .shared()
            .extensions
            .run_command(&self.slot, &self.name, &self.args)
            .await;
    }

    /// Runs it and waits until a run it started has ended.
    pub async fn run_to_end(self, session: &Session) {
        self.run(session).await;
        session.wait_idle().await;
    }
}

impl Session {
    /// `/mcp` (the servers' state, once their first attempts have ended) and
    /// `/mcp reconnect [server]`, answered as notices as pi answers them outside its terminal.
    async fn mcp_command(&self, args: &str) {
        let shared = self.shared();
        let words: Vec<&str> = args.split_whitespace().collect();
        match words.as_slice() {
            [] => {
                shared.mcp().wait_settled().await;
                shared.notify(&shared.mcp().status_text(), "info");
            }
            ["reconnect"] | ["reconnect", _] => {
                match shared.mcp().reconnect(words.get(1).copied()).await {
                    Ok(text) => shared.notify(&text, "info"),
                    Err(text) => shared.notify(&text, "error"),
                }
            }
            _ => shared.notify("Usage: /mcp, /mcp reconnect [server]", "warning"),
        }
    }

    /// Runs a prompt's text through `/mcp`, extension commands, the `input` hook and expansion.
    pub async fn process_input(&self, text: &str, images: Vec<Content>) -> Input {
        let extensions = &self.shared().extensions;
        if let Some(rest) = text.strip_prefix('/') {
            let (name, args) = rest.split_once(' ').unwrap_or((rest, ""));
            if name == "mcp" && self.shared().mcp().enabled {
                self.mcp_command(args.trim()).await;
                return Input::Handled;
            }
            if let Some(slot) = extensions.command(name) {
                return Input::Command(CommandCall {
                    slot,
                    name: name.to_string(),
                    args: args.to_string(),
                });
            }
        }
        let (mut text, mut images) = (text.to_string(), images);
        if extensions.wants("input") {
            let event = InputEvent {
                text: text.clone(),
                images: images.iter().filter_map(wit_image).collect(),
                source: InputSource::Rpc,
            };
            for (_, result) in extensions.hook("input", Event::Input(event)).await.results {
                match result {
                    EventResult::Handled => return Input::Handled,
                    EventResult::TransformInput(changed) => {
                        text = changed.text;
                        if let Some(new_images) = changed.images {
                            images = new_images
                                .into_iter()
                                .map(|i| Content::from(wit::Content::Image(i)))
                                .collect();
                        }
                    }
                    _ => {}
                }
            }
        }
        Input::Prompt {
            text: self.expand(&text).await,
            images,
        }
    }

    /// Expands `/skill:name args` and `/template args` (a failure is reported as
    /// `extension_error` and the text goes as typed).
    pub async fn expand(&self, text: &str) -> String {
        let shared = self.shared();
        let resources = shared.resources();
        let commands: &[skills::Skill] = if resources.dirs.no_skill_commands {
            &[]
        } else {
            &resources.skills
        };
        let text = match skills::expand(text, commands, &shared.host).await {
            Ok(Some(expanded)) => expanded,
            Ok(None) => text.to_string(),
            Err(err) => {
                shared
                    .extensions
                    .error(&err.path, "skill_expansion", &err.error);
                text.to_string()
            }
        };
        match templates::expand(&text, &resources.templates, &shared.host).await {
            Ok(Some(expanded)) => expanded,
            Ok(None) => text,
            Err(err) => {
                shared.extensions.error(
                    &format!("template:{}", text.split(' ').next().unwrap_or("")),
                    "template_expansion",
                    &err,
                );
                text
            }
        }
    }

    /// `get_commands`: extension commands, then templates, then skills.
    pub fn commands(&self) -> CommandList {
        let shared = self.shared();
        let resources = shared.resources();
        let mut commands = Vec::new();
        if shared.mcp().enabled {
            commands.push(CommandInfo {
                name: "mcp".into(),
                description: "Show the MCP servers and their state; /mcp reconnect <server> connects one again".into(),
                source: CommandSource::Extension,
                source_info: SourceInfo {
                    path: "builtin:mcp".into(),
                    source: "builtin",
                    scope: "temporary",
                    origin: "top-level",
                },
                location: None,
                path: None,
            });
        }
        for slot in shared.extensions.slots().iter() {
            for command in &slot.meta.commands {
                commands.push(CommandInfo {
                    name: command.name.clone(),
                    description: command.description.clone(),
                    source: CommandSource::Extension,
                    source_info: source_info(&slot.plugin.path, "plugin", Location::Path),
                    location: None,
                    path: Some(slot.plugin.path.clone()),
                });
            }
        }
        for template in &resources.templates {
            commands.push(CommandInfo {
                name: template.name.clone(),
                description: template.description.clone(),
                source: CommandSource::Prompt,
                source_info: source_info(&template.path, "local", template.location),
                location: Some(template.location.as_str()),
                path: Some(template.path.clone()),
            });
        }
        for skill in resources
            .skills
            .iter()
            .filter(|_| !resources.dirs.no_skill_commands)
        {
            let path = skill.path.display().to_string();
            let source = if skill.plugin.is_some() {
                "plugin"
            } else {
                "local"
            };
            commands.push(CommandInfo {
                name: format!("skill:{}", skill.name),
                description: skill.description.clone(),
                source: CommandSource::Skill,
                source_info: source_info(&path, source, skill.location),
                location: Some(skill.location.as_str()),
                path: Some(path),
            });
        }
        CommandList { commands }
    }

    /// `get_argument_completions`: for an extension's command, what the extension offers (none
    /// when it was built without completions); for a prompt template or a skill, file paths
    /// from the working directory for the last word. An unknown command is an error.
    pub async fn argument_completions(
        &self,
        command: &str,
        prefix: &str,
    ) -> Result<Completions, SessionError> {
        let shared = self.shared();
        let name = command.strip_prefix('/').unwrap_or(command);
        let completions = if let Some(slot) = shared.extensions.command(name) {
            shared
                .extensions
                .complete_argument(&slot, name, prefix)
                .await
                .map_err(SessionError::CompletionsFailed)?
        } else {
            let resources = shared.resources();
            let known = resources.templates.iter().any(|t| t.name == name)
                || name.strip_prefix("skill:").is_some_and(|skill| {
                    !resources.dirs.no_skill_commands
                        && resources.skills.iter().any(|s| s.name == skill)
                });
            if !known {
                return Err(SessionError::UnknownCommand(name.to_string()));
            }
            // A directory listing: off the async workers (a slow mount must not stall them).
            let (cwd, prefix) = (shared.cwd.clone(), prefix.to_string());
            tokio::task::spawn_blocking(move || {
                crate::agent::session::path_completion::complete(&cwd, &prefix)
            })
            .await
            .unwrap_or_default()
        };
        Ok(Completions { completions })
    }
}

fn source_info(path: &str, source: &'static str, location: Location) -> SourceInfo {
    let scope = match location {
        Location::User => "user",
        Location::Project => "project",
        Location::Path => "temporary",
    };
    SourceInfo {
        path: path.to_string(),
        source,
        scope,
        origin: "top-level",
    }
}

fn wit_image(content: &Content) -> Option<wit::Image> {
    match content {
        Content::Image { data, mime_type } => Some(wit::Image {
            data: data.clone(),
            mime_type: mime_type.clone(),
        }),
        Content::Text { .. } => None,
    }
}
