//! The `pith` binary.

use std::process::ExitCode;

use pith::agent_dir::{AgentDir, cache_dir};
use pith::cli::{Args, Command, USAGE};
use pith::commands::plugin::{Next, PluginCommand};
use pith::plugin_host::{HostOptions, PluginHost};
use pith::settings::Settings;

fn main() -> ExitCode {
    large_allocations_return_to_the_system();
    faux_script_from_file();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PITH_LOG")
                // The ACP crate logs every error response it sends as a warning: those are
                // answers to the client, not problems of pith.
                // The MCP SDK logs a server's failures as errors: pith reports them itself
                // (`/mcp`, the startup notice, mcp.log).
                .unwrap_or_else(|_| "warn,agent_client_protocol=error,rmcp=off".into()),
        )
        .init();
    // A word that is not UTF-8 is a usage error, not a panic (`std::env::args` would panic).
    let words: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|word| {
            word.into_string().map_err(|bad| {
                format!(
                    "the argument {:?} is not valid UTF-8: pith takes UTF-8 arguments",
                    bad.to_string_lossy()
                )
            })
        })
        .collect();
    let args = match words.map_err(pith::cli::UsageError).and_then(Args::parse) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("pith: {err}\n\nRun `pith --help` for the options.");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("pith: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    // On the heap: the whole command's state machine would otherwise sit on the main stack.
    let code = runtime.block_on(Box::pin(run(args)));
    // Tasks still running (a provider stream, a child process) are dropped, not awaited.
    runtime.shutdown_background();
    // No MCP server outlives pith.
    pith::mcp::process::stop_all();
    code
}

/// `PITH_FAUX_SCRIPT` may name a script file instead of holding the JSON: the scripted `faux`
/// provider then gets the file's contents. Runs first, before any other thread exists.
fn faux_script_from_file() {
    let Some(value) = std::env::var_os("PITH_FAUX_SCRIPT") else {
        return;
    };
    let text = value.to_string_lossy();
    if text.trim_start().starts_with(['[', '{']) {
        return;
    }
    let path = std::path::Path::new(&value);
    match std::fs::read_to_string(path) {
        // SAFETY: called at the start of `main`, before the runtime or any other thread
        // starts, so nothing reads the environment concurrently.
        Ok(script) => unsafe { std::env::set_var("PITH_FAUX_SCRIPT", script) },
        Err(err) => eprintln!(
            "pith: PITH_FAUX_SCRIPT is neither JSON nor a readable file ({}: {err})",
            path.display()
        ),
    }
}

async fn run(mut args: Args) -> ExitCode {
    match &args.command {
        // Without extension flags to list, nothing to load.
        Some(Command::Help) if args.no_extensions => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        // Nothing to do: no prompt, no mode, nothing piped. Never a silent success.
        Some(Command::Print {
            words,
            chosen: false,
            ..
        }) if words.is_empty() && std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
        None => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
        Some(Command::Version) => {
            println!("pith {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some(Command::Export { session, output }) => {
            return pith::commands::export::run(session, output.as_deref());
        }
        Some(Command::Docs { topic }) => {
            return match pith::docs::show(topic.as_deref()) {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(problem) => {
                    eprintln!("pith docs: {problem}");
                    ExitCode::from(2)
                }
            };
        }
        Some(Command::Plugin(command)) => {
            // The commands that need no plugin host; `build` goes on as `check`.
            let agent_dir = AgentDir::resolve(args.agent_dir.as_deref());
            match pith::commands::plugin::prepare(command, agent_dir.root()) {
                Ok(Next::Check(checked)) => {
                    args.extensions.push(checked.clone());
                    args.command = Some(Command::Plugin(PluginCommand::Check { path: checked }));
                }
                Ok(Next::Trust(project)) => {
                    let agent_dir = AgentDir::resolve(args.agent_dir.as_deref());
                    let project = project.canonicalize().unwrap_or(project);
                    let remembered = pith::trust::TrustRecord::load(agent_dir.root())
                        .and_then(|mut record| record.set(agent_dir.root(), &project, true));
                    if let Err(problem) = remembered {
                        eprintln!(
                            "pith: the new project is not remembered as trusted ({problem}): \
                             `pith trust` in it, or pass -e ."
                        );
                    }
                    return ExitCode::SUCCESS;
                }
                Ok(Next::Host) => {}
                Ok(Next::Done) => return ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("pith: {err}");
                    return ExitCode::FAILURE;
                }
            }
        }
        _ => {}
    }
    let Ok(workspace) = std::env::current_dir() else {
        eprintln!("pith: the current directory is not accessible");
        return ExitCode::FAILURE;
    };
    // A plugin directory that does not exist is a typo, not an empty directory.
    if let Some(missing) = args
        .plugins_dirs
        .iter()
        .find(|dir| !workspace.join(dir).is_dir())
    {
        eprintln!(
            "pith: --plugins-dir {}: no such directory (create it, or fix the path)",
            missing.display()
        );
        return ExitCode::FAILURE;
    }
    // An extension that is not there is a typo: stop, as pi does, rather than run without it.
    if let Some(missing) = args
        .extensions
        .iter()
        .find(|path| !workspace.join(path).exists())
    {
        eprintln!(
            "pith: -e {}: no such file or directory (give a plugin's directory, manifest or component)",
            missing.display()
        );
        return ExitCode::FAILURE;
    }
    let agent_dir = AgentDir::resolve(args.agent_dir.as_deref());
    // The project's own plugins, settings and resources run only in a trusted project
    // (`--approve`), as pi 1.5 loads project resources: cloning a repository and starting
    // pith in it must not run that repository's code.
    let record = match pith::trust::TrustRecord::load(agent_dir.root()) {
        Ok(record) => record,
        // `pith trust` would write over the other decisions in it.
        Err(problem) if matches!(args.command, Some(Command::Trust { .. })) => {
            eprintln!("pith: {problem}: fix or delete it first");
            return ExitCode::FAILURE;
        }
        Err(problem) => {
            eprintln!("pith: {problem} (no project is trusted by it: fix or delete it)");
            pith::trust::TrustRecord::default()
        }
    };
    if let Some(Command::Trust { path, trusted }) = &args.command {
        let project = path
            .as_ref()
            .map_or(workspace.clone(), |p| workspace.join(p));
        let project = project.canonicalize().unwrap_or(project);
        let mut record = record;
        return match record.set(agent_dir.root(), &project, *trusted) {
            Ok(()) => {
                println!(
                    "pith: {} is {}: its own .pith/ plugins and settings and .pi/ resources {}",
                    project.display(),
                    if *trusted { "trusted" } else { "not trusted" },
                    if *trusted { "load" } else { "do not load" }
                );
                ExitCode::SUCCESS
            }
            Err(problem) => {
                eprintln!("pith: {problem}");
                ExitCode::FAILURE
            }
        };
    }
    // The run's decision: --approve / --no-approve, else the remembered one, else
    // `defaultProjectTrust` (untrusted unless it says "always").
    let canonical = workspace.canonicalize().unwrap_or(workspace.clone());
    let agent_settings = Settings::load(&agent_dir.settings_file(), None);
    let mut decided = args.approve.or(record.decision(&canonical));
    if decided.is_none() && pith::commands::project_trust::has_own_configuration(&workspace) {
        decided = ask_extensions_about_trust(&args, &agent_dir, &agent_settings, &workspace).await;
    }
    args.approve = Some(decided.unwrap_or_else(|| pith::trust::default_trust(&agent_settings)));
    let project_trusted = args.project_trusted();
    // In a trusted plugin project (`pith plugin new` trusts the project it makes), `pith tool`
    // and `pith plugin call` try the project's plugin.
    let trying = matches!(
        args.command,
        Some(Command::Tool { .. } | Command::Plugin(PluginCommand::Call { .. }))
    );
    if trying && args.extensions.is_empty() && workspace.join("pith.toml").is_file() {
        if project_trusted {
            eprintln!("pith: loading the plugin project here (pith.toml)");
            args.extensions.push(workspace.clone());
        } else {
            eprintln!(
                "pith: this directory holds a plugin project (pith.toml) that is not trusted: \
                 pass -e . to load it (or `pith trust`)"
            );
        }
    }
    let skipped = pith::resources::project_files(&workspace);
    if !project_trusted && !skipped.is_empty() {
        eprintln!(
            "pith: the project's own {} are not loaded: pass --approve (-a) to trust this project",
            skipped.join(", ")
        );
    }
    let settings = Settings::load(
        &agent_dir.settings_file(),
        project_trusted.then_some(workspace.as_path()),
    );
    for problem in &settings.problems {
        eprintln!("pith: settings: {problem}");
    }
    // pi's `extensions` setting: plugins to load as with `-e` (not with --no-extensions).
    if !args.no_extensions {
        let (paths, problems) = settings.resource_paths("extensions");
        for problem in problems {
            eprintln!("pith: {problem}");
        }
        args.extensions.extend(paths);
    }
    let sandbox = match pith::sandbox::SandboxPolicy::from_settings(
        args.sandbox.as_deref(),
        &settings,
        &workspace,
        agent_dir.root(),
    ) {
        Ok(policy) => policy,
        Err(message) => {
            eprintln!("pith: {message}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(Command::Mcp(words)) = &args.command {
        let place = pith::commands::mcp::Place {
            agent_dir: agent_dir.root(),
            cwd: &workspace,
            trusted: project_trusted,
            policy: std::sync::Arc::new(sandbox),
        };
        return pith::commands::mcp::run(words, &place).await;
    }
    pith::sandbox::announce(&sandbox);
    let options = HostOptions {
        plugin_dirs: HostOptions::standard_dirs(
            &agent_dir.plugins_dir(),
            &workspace,
            project_trusted,
            &args.plugins_dirs,
        ),
        workspace: workspace.clone(),
        cache_dir: Some(cache_dir()),
        settings: settings.clone(),
        embedded: true,
        plugin_files: args.extensions.clone(),
        no_extensions: args.no_extensions,
        sandbox: std::sync::Arc::new(sandbox),
    };
    // Serving hosts is not held up by compiling new third-party plugins; the one-shot commands
    // need every plugin at once, and so do the extensions' flags given on the command line.
    let defer = matches!(args.command, Some(Command::Rpc | Command::Acp))
        && args.extension_flags.is_empty();
    let (host, errors) = match PluginHost::load_deferring(options, defer).await {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("pith: cannot start the plugin host: {err}");
            return ExitCode::FAILURE;
        }
    };
    // The extensions' flags (pi's `registerFlag`), now that the extensions said which they take.
    let flags = pith::commands::extension_flags::apply_flags(&mut args, &host);
    if let Some(Command::Help) = args.command {
        if let Err(problem) = flags {
            eprintln!("pith: {problem}");
        }
        print!(
            "{USAGE}{}",
            pith::commands::extension_flags::flags_help(&host)
        );
        return ExitCode::SUCCESS;
    }
    if let Err(problem) = flags {
        eprintln!("pith: {problem}");
        return ExitCode::from(2);
    }
    let checking = matches!(
        args.command,
        Some(Command::Plugin(PluginCommand::Check { .. }))
    );
    if !checking {
        for error in &errors {
            eprintln!("pith: plugin refused: {error}");
        }
    }
    match args.command {
        Some(Command::Plugin(PluginCommand::Check { ref path })) => {
            pith::commands::plugin::check::report(&host, &errors, path).await
        }
        Some(Command::Plugin(PluginCommand::Call {
            ref target,
            ref input,
            ref answers,
        })) => match target.strip_prefix('/') {
            None => pith::commands::tool::run(&host, target, input).await,
            Some(_) => {
                let line = format!("{target} {input}");
                pith::commands::plugin::call::command(
                    host,
                    &args,
                    &settings,
                    workspace,
                    &agent_dir,
                    line.trim_end(),
                    answers.clone(),
                )
                .await
            }
        },
        Some(Command::Plugins { json }) => pith::commands::plugins::print(&host, json),
        Some(Command::ListModels { ref search }) => {
            let (models, problems) = pith::agent::models::ModelRegistry::load(
                &host,
                &agent_dir.models_file(),
                &agent_dir.auth_file(),
            );
            for problem in problems {
                eprintln!("pith: warning: {problem}");
            }
            pith::commands::list_models::print(&models, search.as_deref())
        }
        Some(Command::Tool {
            ref name,
            ref arguments,
        }) => pith::commands::tool::run(&host, name, arguments).await,
        Some(Command::Rpc) => {
            pith::commands::startup::serve(host, &args, &settings, workspace, &agent_dir).await
        }
        Some(Command::Acp) => pith::acp::serve(host, &args, &settings, workspace, &agent_dir).await,
        Some(Command::Print {
            output, ref words, ..
        }) => pith::print::run(host, &args, &settings, workspace, &agent_dir, output, words).await,
        Some(
            Command::Help
            | Command::Version
            | Command::Trust { .. }
            | Command::Export { .. }
            | Command::Docs { .. }
            | Command::Mcp(_)
            | Command::Plugin(_),
        )
        | None => ExitCode::SUCCESS,
    }
}

/// pi's `project_trust`: the user's extensions and those named with `-e` decide on a project
/// nothing decided yet; a decision they ask to remember is written to the record.
async fn ask_extensions_about_trust(
    args: &pith::cli::Args,
    agent_dir: &AgentDir,
    agent_settings: &Settings,
    workspace: &std::path::Path,
) -> Option<bool> {
    let mut plugin_files = args.extensions.clone();
    if !args.no_extensions {
        plugin_files.extend(agent_settings.resource_paths("extensions").0);
    }
    let sandbox = match pith::sandbox::SandboxPolicy::from_settings(
        args.sandbox.as_deref(),
        agent_settings,
        workspace,
        agent_dir.root(),
    ) {
        Ok(sandbox) => sandbox,
        Err(message) => {
            eprintln!("pith: the extensions are not asked about the project's trust: {message}");
            return None;
        }
    };
    let options = HostOptions {
        plugin_dirs: HostOptions::standard_dirs(
            &agent_dir.plugins_dir(),
            workspace,
            false,
            &args.plugins_dirs,
        ),
        workspace: workspace.to_path_buf(),
        cache_dir: Some(cache_dir()),
        settings: agent_settings.clone(),
        embedded: false,
        plugin_files,
        no_extensions: args.no_extensions,
        sandbox: std::sync::Arc::new(sandbox),
    };
    let mode = pith::commands::startup::run_mode(args);
    let verdict = pith::commands::project_trust::ask_extensions(options, mode).await?;
    if verdict.remember {
        let project = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        let remembered = pith::trust::TrustRecord::load(agent_dir.root())
            .and_then(|mut record| record.set(agent_dir.root(), &project, verdict.trusted));
        if let Err(problem) = remembered {
            eprintln!(
                "pith: {}'s trust decision is not remembered: {problem}",
                verdict.by
            );
        }
    }
    Some(verdict.trusted)
}

/// Makes glibc give large blocks (a long session's request pieces and prefix segments) back to
/// the system when they are freed: its default raises the threshold for doing so after each
/// such block, and a long-lived process then keeps their pages in its heap.
fn large_allocations_return_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets the allocator's threshold, before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}
