//! The session's configuration from the command line and the settings, as every front-end
//! starts it (RPC, print, ACP, `pith plugin call`, a session in another folder): the model and
//! thinking level, the tools, the skills and templates, the protocol profile, and the session
//! file to open and where new ones are saved.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::conversation::system_prompt::PromptOptions;
use crate::agent::model::ThinkingLevel;
use crate::agent::models::ModelRegistry;
use crate::agent::session::SessionConfig;
use crate::agent::session::file::SessionFile;
use crate::agent::session::queue::QueueMode;
use crate::agent::tools::ToolSelection;
use crate::agent_dir::AgentDir;
use crate::cli::Args;
use crate::resources::{ResourceDirs, Resources};
use crate::rpc::profile::Protocol;
use crate::settings::Settings;

/// Text given on the command line, or the contents of the file it names.
fn text_or_file(value: &str) -> String {
    let path = Path::new(value);
    if path.is_file() {
        std::fs::read_to_string(path).unwrap_or_else(|_| value.to_string())
    } else {
        value.to_string()
    }
}

/// The session's configuration from the arguments and settings; `Err` is a message for stderr.
pub fn session_config(
    args: &Args,
    settings: &Settings,
    models: &mut ModelRegistry,
    cwd: PathBuf,
    agent_dir: &AgentDir,
) -> Result<SessionConfig, String> {
    let setting_str = |key: &str| {
        settings
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut thinking = args.thinking.as_deref().and_then(|level| {
        let parsed = ThinkingLevel::parse(level);
        if parsed.is_none() {
            eprintln!("pith: warning: unknown thinking level {level:?}, ignored");
        }
        parsed
    });
    if let (Some(provider), None) = (&args.provider, &args.model) {
        return Err(format!(
            "--provider requires --model (for example: --provider {provider} --model <pattern>)"
        ));
    }
    let (session, sessions_dir) = session_for(args, agent_dir, &cwd, settings)?;
    let policies = crate::agent::session::policies::Policies::from_settings(settings);
    let project_dir = args.project_trusted().then(|| cwd.clone());
    let scope_patterns: Vec<String> = args.models.clone().unwrap_or_else(|| {
        settings
            .get("enabledModels")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    });
    let scoped_models = models.resolve_scope(&scope_patterns);
    let model = match &args.model {
        Some(pattern) => {
            let (model, level) = models
                .resolve(pattern, args.provider.as_deref())
                .ok_or_else(|| format!("Model {pattern:?} not found. `get_available_models` lists the models pith knows."))?;
            thinking = level.or(thinking);
            Some(model)
        }
        None => {
            let default = match (setting_str("defaultProvider"), setting_str("defaultModel")) {
                (Some(provider), Some(id)) => models.find_available(&provider, &id),
                _ => None,
            };
            // With a scope: the saved default if it is in scope, else the first scoped model.
            let in_scope = |m: &crate::agent::model::Model| {
                scoped_models.is_empty()
                    || scoped_models.iter().any(|(s, _)| s.is(&m.provider, &m.id))
            };
            default.filter(|m| in_scope(m)).or_else(|| {
                scoped_models
                    .iter()
                    .find(|(m, _)| models.has_key(&m.provider))
                    .map(|(m, level)| {
                        if thinking.is_none() {
                            thinking = *level;
                        }
                        m.clone()
                    })
                    .or_else(|| models.default_model())
            })
        }
    };
    if let Some(key) = &args.api_key {
        let Some(model) = &model else {
            return Err("--api-key needs a model (give --model)".into());
        };
        models
            .runtime_keys
            .insert(model.provider.clone(), key.clone());
    }
    // A level the flags did not name: the model's `modelThinkingLevels` entry, else
    // `defaultThinkingLevel`.
    let thinking = thinking.or_else(|| match &model {
        Some(model) => policies.thinking.for_model(model),
        None => policies.thinking.default,
    });
    let tools = ToolSelection {
        only: if args.no_tools {
            Some(Vec::new())
        } else {
            args.tools.clone()
        },
        add: args.tools_add.clone(),
        remove: args.tools_remove.clone(),
        no_builtins: args.no_builtin_tools,
        exclude: args.exclude_tools.clone(),
        defaults: None,
    };
    let tools = match settings.get("defaultTools") {
        Some(Value::Array(entries)) => tools.with_default_tools(
            &entries
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect::<Vec<_>>(),
        ),
        _ => tools,
    };
    let enabled = |section: &str| {
        settings
            .get(section)
            .and_then(|s| s.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(true)
    };
    // pi's `skills` and `prompts` settings: more paths, as `--skill` and `--prompt-template`
    // give them (not with `--no-skills` / `--no-prompt-templates`, which leave only the flags').
    let listed = |key: &str, off: bool| -> Vec<std::path::PathBuf> {
        if off {
            return Vec::new();
        }
        let (paths, problems) = settings.resource_paths(key);
        for problem in problems {
            eprintln!("pith: {problem}");
        }
        paths
    };
    let resources = Resources {
        dirs: ResourceDirs {
            cwd: cwd.clone(),
            agent_dir: agent_dir.root().to_path_buf(),
            extra_skills: [args.skills.clone(), listed("skills", args.no_skills)].concat(),
            extra_templates: [
                args.prompt_templates.clone(),
                listed("prompts", args.no_prompt_templates),
            ]
            .concat(),
            discovered_skills: Vec::new(),
            discovered_templates: Vec::new(),
            no_skills: args.no_skills,
            no_templates: args.no_prompt_templates,
            project_trusted: args.project_trusted(),
            no_skill_commands: settings.get("enableSkillCommands").and_then(Value::as_bool)
                == Some(false),
        },
        ..Resources::default()
    };
    let cwd_for_mcp = cwd.clone();
    let todo_clear_delay =
        std::time::Duration::from_millis(settings.number("todos", "clearDelayMs").unwrap_or(2000));
    Ok(SessionConfig {
        todo_clear_delay,
        resources,
        cwd,
        model,
        thinking,
        tools,
        prompt: PromptOptions {
            custom: args.system_prompt.as_deref().map(text_or_file),
            append: args
                .append_system_prompt
                .iter()
                .map(|a| text_or_file(a))
                .collect(),
            context_files: !args.no_context_files,
        },
        steering_mode: setting_str("steeringMode")
            .map_or(QueueMode::OneAtATime, |m| QueueMode::parse(&m)),
        follow_up_mode: setting_str("followUpMode")
            .map_or(QueueMode::OneAtATime, |m| QueueMode::parse(&m)),
        auto_compaction: enabled("compaction"),
        auto_retry: enabled("retry"),
        scoped_models,
        compaction: policies.compaction,
        compaction_overrides: policies.compaction_overrides.clone(),
        tool_output: policies.tool_output,
        max_answer_bytes: policies.max_answer_bytes,
        request_settings: policies.request.clone(),
        thinking_defaults: policies.thinking.clone(),
        tool_timeouts: policies.tool_timeouts,
        sources: crate::agent::session::ReloadSources {
            global_settings: agent_dir.settings_file(),
            project_dir,
            models_file: agent_dir.models_file(),
            auth_file: agent_dir.auth_file(),
        },
        model_explicit: args.model.is_some(),
        session,
        name: args.name.clone(),
        session_id: args.session_id.clone(),
        behaviour: protocol(args, settings)?.behaviour(),
        sessions_dir,
        retry: policies.retry,
        sandbox: None,
        flags: args.flags.clone(),
        mode: run_mode(args),
        mcp: crate::mcp::McpSetup::from_files(
            agent_dir.root(),
            &cwd_for_mcp,
            args.project_trusted(),
            // pi's MCP is a built-in extension, which `--no-extensions` turns off too.
            args.no_mcp || args.no_extensions,
        ),
    })
}

/// How the arguments serve the session, as extensions see it (pi's `ctx.mode`).
pub fn run_mode(args: &Args) -> crate::agent::session::RunMode {
    use crate::agent::session::RunMode;
    match &args.command {
        Some(crate::cli::Command::Acp) => RunMode::Acp,
        Some(crate::cli::Command::Print {
            output: crate::print::output::Output::Json,
            ..
        }) => RunMode::Json,
        Some(crate::cli::Command::Print { .. } | crate::cli::Command::Plugin(_)) => RunMode::Print,
        _ => RunMode::Rpc,
    }
}

/// The protocol profile: `--pi-protocol`, else `$PITH_PI_PROTOCOL`, else `rpc.protocol` in
/// settings, else pi 1.5's.
pub fn protocol(args: &Args, settings: &Settings) -> Result<Protocol, String> {
    let chosen = args
        .pi_protocol
        .clone()
        .or_else(|| {
            std::env::var("PITH_PI_PROTOCOL")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .or_else(|| {
            settings
                .get("rpc")
                .and_then(|rpc| rpc.get("protocol"))
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    chosen.map_or(Ok(Protocol::default()), |version| Protocol::parse(&version))
}

/// pi's environment variable for the session directory, read when `--session-dir` is absent.
pub const PI_SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// Where the sessions of `cwd` are saved: `--session-dir`, else `$PI_CODING_AGENT_SESSION_DIR`
/// (as pi reads it), else the `sessionDir` setting, else the agent directory's folder for
/// `cwd`; `None` with `--no-session`. A relative one is taken from `cwd`, as pi takes it.
pub fn sessions_dir(
    args: &Args,
    agent_dir: &AgentDir,
    cwd: &Path,
    settings: &Settings,
) -> Option<PathBuf> {
    if args.no_session {
        return None;
    }
    let from_env = || {
        std::env::var_os(PI_SESSION_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(|dir| crate::agent_dir::expand_tilde(Path::new(&dir)))
    };
    let from_settings = || {
        settings
            .get("sessionDir")
            .and_then(Value::as_str)
            .filter(|dir| !dir.is_empty())
            .map(|dir| crate::agent_dir::expand_tilde(Path::new(dir)))
    };
    Some(
        match args
            .session_dir
            .clone()
            .or_else(from_env)
            .or_else(from_settings)
        {
            Some(dir) => cwd.join(dir),
            None => SessionFile::dir_for(&agent_dir.sessions_dir(), cwd),
        },
    )
}

/// The session to start with and where new sessions go, from `--no-session`, `--session-dir`,
/// `--session` and `--continue`.
fn session_for(
    args: &Args,
    agent_dir: &AgentDir,
    cwd: &Path,
    settings: &Settings,
) -> Result<(Option<SessionFile>, Option<PathBuf>), String> {
    if args.fork.is_some() && (args.session.is_some() || args.continue_session || args.no_session) {
        return Err(
            "--fork cannot be combined with --session, --continue, --resume, or --no-session"
                .into(),
        );
    }
    let Some(dir) = sessions_dir(args, agent_dir, cwd, settings) else {
        return Ok((None, None));
    };
    let open = |path: &Path| -> Result<SessionFile, String> {
        let (file, problems) = SessionFile::open(path).map_err(|err| err.to_string())?;
        for problem in problems {
            eprintln!("pith: {problem}");
        }
        Ok(file)
    };
    if let Some(wanted) = &args.fork {
        // pi's `--fork`: the session by path or (partial) id, here or in any folder's sessions,
        // copied into a new session of this folder; the original stays as it is.
        let path = find_session(wanted, cwd, &dir, agent_dir)?;
        let source = open(&path)?;
        let id = args
            .session_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let target = SessionFile::default_path(&dir, &id);
        let forked = source.branch(source.leaf_id(), Some(target), &id, cwd);
        return Ok((Some(forked), Some(dir)));
    }
    if let Some(wanted) = &args.session {
        let looks_like_path =
            wanted.contains('/') || wanted.contains('\\') || wanted.ends_with(".jsonl");
        if looks_like_path {
            let path = cwd.join(wanted);
            if path.exists() {
                return Ok((Some(open(&path)?), Some(dir)));
            }
            // A new session that will be written at that path.
            let id = uuid::Uuid::now_v7().to_string();
            return Ok((
                Some(SessionFile::create(Some(path), &id, cwd, None)),
                Some(dir),
            ));
        }
        let found = session_by_id(&dir, wanted);
        return match found {
            Some(path) => Ok((Some(open(&path)?), Some(dir))),
            None => Err(format!(
                "No session matching {wanted:?} in {}",
                dir.display()
            )),
        };
    }
    if args.continue_session
        && let Some(path) = crate::agent::session::file::latest_in(&dir)
    {
        return Ok((Some(open(&path)?), Some(dir)));
    }
    Ok((None, Some(dir)))
}

/// The session file in `folder` whose id (`<time>_<id>.jsonl`) starts with `wanted`.
fn session_by_id(folder: &Path, wanted: &str) -> Option<PathBuf> {
    std::fs::read_dir(folder)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.split_once('_')
                    .is_some_and(|(_, id)| id.starts_with(wanted))
            })
        })
}

/// A session file by path (relative to `cwd`) or by (partial) id: in `dir` first, then in every
/// folder's sessions of the agent directory.
fn find_session(
    wanted: &str,
    cwd: &Path,
    dir: &Path,
    agent_dir: &AgentDir,
) -> Result<PathBuf, String> {
    let looks_like_path =
        wanted.contains('/') || wanted.contains('\\') || wanted.ends_with(".jsonl");
    if looks_like_path {
        let path = cwd.join(wanted);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!("No session file at {}", path.display()))
        };
    }
    session_by_id(dir, wanted)
        .or_else(|| {
            std::fs::read_dir(agent_dir.sessions_dir())
                .ok()
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .find_map(|folder| session_by_id(&folder, wanted))
        })
        .ok_or_else(|| {
            format!(
                "No session matching {wanted:?} in {} or any folder's sessions",
                dir.display()
            )
        })
}
