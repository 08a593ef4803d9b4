//! An extension that exercises every hook and import, for pith's tests.
//!
//! (Past 600 lines on purpose: every hook and command the tests drive is in this one table,
//! so a test's behaviour is found in one place.)
//!
//! Commands: `/ask <select|confirm|input|editor> [timeout-ms]` opens a dialog and notifies
//! `answer: …`; `/trap` panics; `/spin` loops forever; `/count` notifies how many `agent_end`
//! events it observed. Hooks: a prompt containing `TRAP` panics in `before_agent_start`,
//! `INJECT` adds a custom message; `handled:` inputs are handled, `upper:` ones upper-cased;
//! bash commands containing `BLOCKME` are blocked; `ls` results are patched; compaction with
//! the instructions `probe-cancel` is cancelled, `probe-summary` gets the probe's summary.
//! With the config `lifecycle` set, it shows each `session_start` (numbered in this instance)
//! and each `session_shutdown`, `model_select`, `user_bash` and `session_compact` it gets as its
//! `lifecycle` status. `/provider register <name> <base-url>` registers an
//! `openai-completions` provider with the model `probe-model` (key `$PROBE_PROVIDER_KEY`; the
//! base URL `-` gives none), and
//! `/provider unregister <name>` removes it; `/virtual register|unregister <provider> <id>`
//! does the same for a virtual model, which it routes to `faux/faux-model`. Asked about a project's trust, it answers its
//! config `trust` (`yes`, `no`, `yes-remember`; else undecided). A user's shell command
//! `probe-result …` gets the probe's outcome without running; `probe-wrap <cmd>` runs wrapped.
//! With the config `agent-events` set, it reports the typed agent events (`typed_events`).

use pith_sdk::extension::*;

mod typed_events;

struct Probe {
    agent_ends: u32,
    /// Text deltas heard in the current run (`agent-events`).
    deltas: u32,
    /// `resources_discover` events heard: at start-up, on reload.
    discoveries: (u32, u32),
    /// `session_start`s this instance got.
    starts: u32,
}

/// An enum case's name as pi spells it (`ModelSelectSource::Set` → `set`).
fn case(value: impl std::fmt::Debug) -> String {
    let shown = format!("{value:?}");
    shown.rsplit("::").next().unwrap_or_default().to_lowercase()
}

/// Shows `text` as the `lifecycle` status when the config asks for it.
fn lifecycle(text: &str) {
    if pith_sdk::host::config("lifecycle").ok().flatten().is_some() {
        ui::set_status("lifecycle", Some(text));
    }
}

fn answer(text: String) {
    ui::notify(&format!("answer: {text}"), None);
}

impl Extension for Probe {
    fn new() -> Self {
        Probe {
            agent_ends: 0,
            deltas: 0,
            discoveries: (0, 0),
            starts: 0,
        }
    }

    fn describe(&self) -> ExtensionInfo {
        let command = |name: &str, description: &str| CommandSpec {
            name: name.into(),
            description: description.into(),
        };
        ExtensionInfo {
            name: "ext-probe".into(),
            events: [
                "session_start",
                "input",
                "before_agent_start",
                "tool_call",
                "tool_result",
                "session_before_compact",
                "agent_end",
                "turn_end",
                "message_update",
                "tool_execution_end",
                "session_shutdown",
                "model_select",
                "user_bash",
                "session_compact",
                "project_trust",
                "resources_discover",
                // pi's, not fired by pith: loads with a warning.
                "provider_stream_event",
            ]
            .map(String::from)
            .to_vec(),
            commands: vec![
                command("ask", "Open a dialog"),
                command("trap", "Panic"),
                command("spin", "Loop forever"),
                command("count", "Report observed agent_end events"),
                command("virtual", "Register or remove a virtual model at run time"),
                command("discoveries", "Report the resources_discover events heard"),
                command("note", "Add a custom message and a custom entry"),
                command("say", "Send a user message"),
                command("name", "Name the session"),
                command("title", "Set the window title"),
                command(
                    "session",
                    "Read and steer the session (version 0.2's imports)",
                ),
                command("ask-model", "Ask the session's model, through the host"),
                command("entries", "Describe the session's entries, typed"),
                command(
                    "add-tool",
                    "Register a tool now (dyn_echo, or finish which ends the run)",
                ),
                command("listen", "Hear a bus channel"),
                command("move", "Request a move: compact, new or fork <entry>"),
                command("emit", "Send on a bus channel: /emit <channel> <json>"),
                command(
                    "front",
                    "Report the mode, the flags, the commands and a setting",
                ),
                command("provider", "register <name> <base-url> | unregister <name>"),
                command(
                    "wake",
                    "Set a wake-up: timer <id> <ms> [repeat], cancel <id>, watch <id> <path>, unwatch <id>",
                ),
            ],
            flags: vec![
                FlagSpec::boolean("probe-plan", "Start the probe in plan mode"),
                FlagSpec::text("probe-preset", "The probe's preset"),
            ],
            rules: vec![Rule {
                name: "probe-rule".into(),
                description: "The probe's streamed rule".into(),
                globs: Vec::new(),
                trigger: "PROBE-TRIGGER".into(),
                content: "Never say the probe's trigger word.".into(),
            }],
            tools: vec![ToolSpec::new(
                "probe_echo",
                "Echo the text back, with the session's message count",
                serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            )],
            virtual_models: Vec::new(),
            providers: Vec::new(),
        }
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        report_parent(&event);
        match event {
            Event::Timer(id) => {
                ui::notify(&format!("timer: {id}"), None);
                Ok(EventResult::Continue)
            }
            Event::FileChange(change) => {
                let names: Vec<&str> = change
                    .paths
                    .iter()
                    .filter_map(|p| p.rsplit('/').next())
                    .collect();
                ui::notify(&format!("file-change: {} {names:?}", change.id), None);
                Ok(EventResult::Continue)
            }
            Event::SessionStart(start) => {
                self.starts += 1;
                lifecycle(&format!("session_start #{}", self.starts));
                if pith_sdk::host::config("lifecycle").ok().flatten().is_some() {
                    ui::set_status("start-reason", Some(&case(start.reason)));
                }
                ui::set_status("probe", Some("started"));
                if pith_sdk::host::config("start-dialog")
                    .ok()
                    .flatten()
                    .is_some()
                {
                    let name = ui::input("Probe: your name?", Some("name"), None);
                    answer(format!("{name:?}"));
                }
                Ok(EventResult::Continue)
            }
            Event::Input(input) => {
                if input.text.starts_with("handled:") {
                    ui::notify("input handled", None);
                    return Ok(EventResult::Handled);
                }
                if let Some(rest) = input.text.strip_prefix("upper:") {
                    return Ok(EventResult::TransformInput(TransformedInput {
                        text: rest.to_uppercase(),
                        images: None,
                    }));
                }
                Ok(EventResult::Continue)
            }
            Event::BeforeAgentStart(start) => {
                if start.prompt.contains("TRAP") {
                    panic!("probe trapped on purpose");
                }
                if start.prompt.contains("INJECT") {
                    return Ok(EventResult::AgentStart(AgentStartChanges {
                        message: Some(CustomMessage {
                            custom_type: "probe-note".into(),
                            content: vec![Content::Text("injected by the probe".into())],
                            display: true,
                            details: None,
                        }),
                        system_prompt: Some("You are the probe's system prompt.".into()),
                    }));
                }
                Ok(EventResult::Continue)
            }
            Event::ToolCall(call) if call.tool_name == "bash" && call.input.contains("BLOCKME") => {
                Ok(EventResult::Block(Some("probe blocked".into())))
            }
            Event::ToolResult(result) if result.tool_name == "ls" => {
                Ok(EventResult::PatchToolResult(ToolResultPatch {
                    content: Some(vec![Content::Text("patched by probe".into())]),
                    details: None,
                }))
            }
            Event::SessionBeforeCompact(compact) => match compact.custom_instructions.as_deref() {
                Some("probe-cancel") => Ok(EventResult::Cancel),
                Some("probe-summary") => {
                    let preparation = &compact.preparation;
                    Ok(EventResult::Compaction(CompactionSummary {
                        summary: "probe summary".into(),
                        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
                        tokens_before: preparation.tokens_before,
                        details: Some("{\"by\":\"probe\"}".into()),
                        usage: Some(SummaryUsage {
                            provider: "faux".into(),
                            model: "faux-model".into(),
                            tokens: pith_sdk::types::Usage {
                                input: 10,
                                output: 5,
                                cache_read: 0,
                                cache_write: 0,
                            },
                        }),
                    }))
                }
                _ => Ok(EventResult::Continue),
            },
            // Shown as pi's JSON, as an extension built for 0.1 gets them (`observe`).
            Event::SessionShutdown(shutdown) => {
                let mut json = serde_json::json!({
                    "type": "session_shutdown",
                    "reason": case(shutdown.reason),
                });
                if let Some(target) = shutdown.target_session_file {
                    json["targetSessionFile"] = target.into();
                }
                lifecycle(&format!("session_shutdown {json}"));
                Ok(EventResult::Continue)
            }
            Event::ProjectTrust(asked) => {
                // The config `trust`: yes, no or yes-remember (else undecided).
                ui::notify(&format!("probe asked to trust {}", asked.cwd), None);
                let answer = pith_sdk::host::config("trust")
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                let trusted = match answer.as_str() {
                    "yes" | "yes-remember" => TrustAnswer::Yes,
                    "no" => TrustAnswer::No,
                    _ => TrustAnswer::Undecided,
                };
                let remember = answer.ends_with("-remember");
                Ok(EventResult::Trust(TrustDecision { trusted, remember }))
            }
            Event::ModelSelect(select) => {
                let model =
                    |m: &models::ModelInfo| serde_json::json!({"provider": m.provider, "id": m.id});
                let json = serde_json::json!({
                    "type": "model_select",
                    "model": model(&select.model),
                    "previousModel": select.previous_model.as_ref().map(model),
                    "source": case(select.source),
                });
                lifecycle(&format!("model_select {json}"));
                Ok(EventResult::Continue)
            }
            Event::UserBash(bash) => {
                let json = serde_json::json!({
                    "type": "user_bash",
                    "command": bash.command,
                    "excludeFromContext": bash.exclude_from_context,
                    "cwd": bash.cwd,
                });
                lifecycle(&format!("user_bash {json}"));
                // `probe-result …` is answered without running; `probe-wrap <cmd>` runs wrapped.
                if bash.command.starts_with("probe-result") {
                    return Ok(EventResult::BashResult(UserBashResult {
                        output: "answered by the probe\n".into(),
                        exit_code: Some(3),
                        cancelled: false,
                        truncated: false,
                    }));
                }
                match bash.command.strip_prefix("probe-wrap ") {
                    Some(inner) => Ok(EventResult::RunInstead(format!("echo wrapped; {inner}"))),
                    None => Ok(EventResult::Continue),
                }
            }
            Event::SessionCompact(compact) => {
                let json = serde_json::json!({
                    "type": "session_compact",
                    "compactionEntry": {"type": "compaction", "id": compact.entry_id, "summary": compact.summary},
                    "fromExtension": compact.from_extension,
                    "reason": case(compact.reason),
                    "willRetry": compact.will_retry,
                });
                lifecycle(&format!("session_compact {json}"));
                Ok(EventResult::Continue)
            }
            Event::ResourcesDiscover(discover) => {
                match discover.reason {
                    DiscoverReason::Startup => self.discoveries.0 += 1,
                    DiscoverReason::Reload => self.discoveries.1 += 1,
                }
                Ok(EventResult::Continue)
            }
            // Its virtual models (`/virtual register`) go to the faux model.
            Event::ModelRoute(request) => Ok(EventResult::Route(ModelRoute::to(
                "faux",
                "faux-model",
                request.thinking_level,
            ))),
            Event::Bus((channel, data)) => {
                ui::notify(&format!("bus: {channel} {data}"), None);
                Ok(EventResult::Continue)
            }
            Event::Agent(event) => {
                typed_events::report(&event, &mut self.deltas);
                if !matches!(event, AgentEvent::AgentEnd(_)) {
                    return Ok(EventResult::Continue);
                }
                self.agent_ends += 1;
                // Heard inside the run: a follow-up sent now continues it (pi's).
                if self.agent_ends == 1
                    && pith_sdk::host::config("end-follow-up")
                        .ok()
                        .flatten()
                        .is_some()
                {
                    ui::notify("end heard", None);
                    session::send_user_message(
                        &[Content::Text("one more".into())],
                        Some(session::Delivery::FollowUp),
                    );
                }
                Ok(EventResult::Continue)
            }
            _ => Ok(EventResult::Continue),
        }
    }

    fn execute_tool_outcome(
        &mut self,
        name: &str,
        call_id: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolOutcome, ToolError> {
        let text = arguments["text"].as_str().unwrap_or("").to_string();
        let outcome = |text: String, terminate| ToolOutcome {
            tool_result: ToolResult::text(text),
            terminate,
        };
        match name {
            "dyn_echo" => Ok(outcome(format!("dyn: {text}"), false)),
            "finish" => Ok(outcome("finished".into(), true)),
            _ => self
                .execute_tool(name, call_id, arguments)
                .map(|tool_result| ToolOutcome {
                    tool_result,
                    terminate: false,
                }),
        }
    }

    fn execute_tool(
        &mut self,
        name: &str,
        _call_id: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolResult, ToolError> {
        if name != "probe_echo" {
            return Err(ToolError::new(format!("Unknown tool: {name}")));
        }
        let messages: serde_json::Value =
            serde_json::from_str(&session::messages()).unwrap_or_default();
        let count = messages.as_array().map_or(0, Vec::len);
        let text = arguments["text"].as_str().unwrap_or("");
        Ok(ToolResult::text(format!("echo: {text} ({count} messages)")))
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        match name {
            "ask" => {
                let mut words = args.split_whitespace();
                let method = words.next().unwrap_or("");
                let timeout: Option<u32> = words.next().and_then(|t| t.parse().ok());
                match method {
                    "select" => answer(format!(
                        "{:?}",
                        ui::select("Pick one", &["red".into(), "green".into()], timeout)
                    )),
                    "confirm" => answer(format!(
                        "{}",
                        ui::confirm("Sure?", "Really do it?", timeout)
                    )),
                    "input" => answer(format!(
                        "{:?}",
                        ui::input("Name?", Some("type here"), timeout)
                    )),
                    "editor" => answer(format!("{:?}", ui::editor("Edit", Some("draft")))),
                    other => return Err(format!("no dialog {other}")),
                }
                Ok(())
            }
            "trap" => panic!("probe command trapped on purpose"),
            "spin" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "note" => {
                let message = CustomMessage {
                    custom_type: "probe-note".into(),
                    content: vec![Content::Text(args.into())],
                    display: true,
                    details: Some("{\"from\":\"note\"}".into()),
                };
                session::send_message(&message, None, false);
                session::append_entry("probe-entry", Some(&format!("{{\"text\":{:?}}}", args)));
                Ok(())
            }
            "say" => {
                session::send_user_message(&[Content::Text(args.into())], None);
                Ok(())
            }
            "name" => {
                session::set_session_name(args);
                ui::notify(
                    &format!(
                        "named {:?}, idle {}",
                        session::session_name(),
                        session::is_idle()
                    ),
                    None,
                );
                Ok(())
            }
            "title" => {
                ui::set_title(args);
                ui::notify("title set", None);
                Ok(())
            }
            "session" => {
                // Reads, then changes, then reads again; one notify with what it saw.
                let leaf = session_read::leaf_id().unwrap_or_default();
                let labelled = session_control::set_label(&leaf, Some("probe-label"));
                let model = models::current().map(|m| format!("{}/{}", m.provider, m.id));
                let found = models::find("faux", "faux-model").is_some();
                let set = session_control::set_model("faux", "no-such-model");
                let tools = session_control::set_active_tools(&["read".into(), "nope".into()]);
                let narrowed = session_control::set_active_tools(&["read".into()]);
                let usage = session_read::context_usage().map(|u| u.context_window);
                ui::notify(
                    &format!(
                        "session: id {} file {} cwd {} leaf {} label {:?} {:?} model {:?} found {} auth {} set {:?} tools {:?} {:?} active {:?} all {} window {:?} thinking {:?}",
                        !session_read::session_id().is_empty(),
                        session_read::session_file().is_some(),
                        !session_read::cwd().is_empty(),
                        !leaf.is_empty(),
                        labelled,
                        session_read::label(&leaf),
                        model,
                        found,
                        models::has_configured_auth("faux"),
                        set,
                        tools,
                        narrowed,
                        session_control::active_tools(),
                        session_control::all_tools().len() > 1,
                        usage,
                        models::current_thinking_level(),
                    ),
                    None,
                );
                ui::notify(
                    &format!(
                        "session more: prompt-names-pith {} pending {} trusted {}",
                        session_read::system_prompt().contains("pith"),
                        session_read::has_pending_messages(),
                        session_read::is_project_trusted(),
                    ),
                    None,
                );
                Ok(())
            }
            "ask-model" => {
                let model = models::current().ok_or("no model")?;
                let request = completion::CompletionRequest {
                    provider: model.provider,
                    model: model.id,
                    system_prompt: Some("Answer briefly.".into()),
                    messages: vec![completion::ChatMessage::User(vec![Content::Text(
                        args.into(),
                    )])],
                    max_tokens: Some(100),
                    thinking: None,
                };
                match completion::complete(&request) {
                    Ok(answer) => ui::notify(
                        &format!(
                            "model said: {} ({:?}, {} output tokens)",
                            answer.text, answer.stop_reason, answer.usage.output
                        ),
                        None,
                    ),
                    Err(error) => ui::notify(&format!("model error: {error:?}"), None),
                }
                Ok(())
            }
            "entries" => {
                use pith_sdk::extension::entries::{AgentMessage, EntryBody};
                let kind = |body: &EntryBody| match body {
                    EntryBody::Message(AgentMessage::System(_)) => "system",
                    EntryBody::Message(AgentMessage::User(_)) => "user",
                    EntryBody::Message(AgentMessage::Assistant(_)) => "assistant",
                    EntryBody::Message(_) => "message",
                    EntryBody::ThinkingLevelChange(_) => "thinking",
                    EntryBody::ModelChange(_) => "model",
                    EntryBody::Label(_) => "label",
                    EntryBody::Custom(_) => "custom",
                    _ => "other",
                };
                let branch = session_read::branch();
                let kinds: Vec<&str> = branch.iter().map(|e| kind(&e.body)).collect();
                let answer = branch.iter().rev().find_map(|e| match &e.body {
                    EntryBody::Message(AgentMessage::Assistant(a)) => {
                        a.content.iter().find_map(|block| match block {
                            pith_sdk::types::AssistantBlock::Text(text) => Some(text.text.clone()),
                            _ => None,
                        })
                    }
                    _ => None,
                });
                let first = branch.first().map(|e| e.id.clone()).unwrap_or_default();
                let same = session_read::entry(&first).is_some_and(|e| e.parent_id.is_none());
                ui::notify(
                    &format!(
                        "entries: all {} branch {:?} answer {:?} first-is-root {}",
                        session_read::all_entries().len(),
                        kinds,
                        answer,
                        same
                    ),
                    None,
                );
                Ok(())
            }
            "add-tool" => {
                let spec = ToolSpec::new(
                    args.trim(),
                    "A tool the probe registered while running",
                    serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
                );
                session_control::register_tool(&spec)?;
                ui::notify(&format!("registered {}", args.trim()), None);
                Ok(())
            }
            "move" => {
                let mut words = args.split_whitespace();
                match (words.next(), words.next()) {
                    (Some("compact"), _) => session_control::compact(Some("probe-summary")),
                    (Some("new"), _) => session_control::new_session(),
                    (Some("fork"), Some(entry)) => session_control::fork(entry),
                    (Some("switch"), Some(path)) => session_control::switch_session(path),
                    (Some("reload"), _) => session_control::reload(),
                    (Some("shutdown"), _) => session_control::shutdown(),
                    _ => return Err(format!("no move {args:?}")),
                }
                Ok(())
            }
            "listen" => {
                events_bus::subscribe(args.trim());
                Ok(())
            }
            "emit" => {
                let (channel, data) = args.split_once(' ').unwrap_or((args, "null"));
                events_bus::emit(channel, data);
                Ok(())
            }
            "wake" => {
                let words: Vec<&str> = args.split_whitespace().collect();
                match words.as_slice() {
                    ["timer", id, ms, rest @ ..] => wake_ups::set_timer(
                        id,
                        ms.parse().map_err(|_| format!("not a delay: {ms}"))?,
                        rest.first() == Some(&"repeat"),
                    ),
                    ["cancel", id] => answer(format!("cancelled {}", wake_ups::cancel_timer(id))),
                    ["watch", id, path] => answer(format!("watch {:?}", wake_ups::watch(id, path))),
                    ["unwatch", id] => answer(format!("unwatched {}", wake_ups::unwatch(id))),
                    _ => return Err(format!("no wake-up {args:?}")),
                }
                Ok(())
            }
            "front" => {
                let commands: Vec<String> = session_read::commands()
                    .into_iter()
                    .map(|c| format!("{}:{:?}", c.name, c.source))
                    .collect();
                let settings: serde_json::Value =
                    serde_json::from_str(&session_read::settings()).unwrap_or_default();
                answer(format!(
                    "mode={:?} ui={} plan={:?} preset={:?} commands={} probeSetting={}",
                    session_read::mode(),
                    session_read::has_ui(),
                    pith_sdk::extension::flag("probe-plan"),
                    pith_sdk::extension::flag_text("probe-preset"),
                    commands.len(),
                    settings["probeSetting"]
                ));
                Ok(())
            }
            "provider" => {
                match args.split_whitespace().collect::<Vec<_>>().as_slice() {
                    ["register", name, base_url] => {
                        let model =
                            ProviderModel::new("probe-model", "Probe model").limits(32_000, 1_000);
                        let mut registration =
                            ProviderRegistration::new(name, "openai-completions", base_url)
                                .api_key("$PROBE_PROVIDER_KEY")
                                .model(model);
                        if *base_url == "-" {
                            registration.base_url = None;
                        }
                        answer(format!("{:?}", models::register_provider(&registration)));
                    }
                    ["unregister", name] => models::unregister_provider(name),
                    _ => return Err(format!("no provider change {args:?}")),
                }
                Ok(())
            }
            "virtual" => {
                match args.split_whitespace().collect::<Vec<_>>().as_slice() {
                    ["register", provider, id] => {
                        let spec = VirtualModelSpec::new(provider, id, "Probe virtual");
                        answer(format!("{:?}", models::register_virtual_model(&spec)));
                    }
                    ["unregister", provider, id] => models::unregister_virtual_model(provider, id),
                    _ => return Err(format!("no virtual model change {args:?}")),
                }
                Ok(())
            }
            "discoveries" => {
                let (startup, reload) = self.discoveries;
                ui::notify(
                    &format!("discoveries: startup={startup} reload={reload}"),
                    None,
                );
                Ok(())
            }
            "count" => {
                ui::notify(&format!("agent_end seen {}", self.agent_ends), None);
                Ok(())
            }
            other => Err(format!("Unknown command: {other}")),
        }
    }
}

/// With the config `tool-parents` set, notifies the call behind each `tool_call` and
/// `tool_result` (pi's `parentToolCallId`).
fn report_parent(event: &Event) {
    if pith_sdk::host::config("tool-parents")
        .ok()
        .flatten()
        .is_none()
    {
        return;
    }
    let (hook, id, parent) = match event {
        Event::ToolCall(call) => ("tool_call", &call.tool_call_id, call.parent_tool_call_id()),
        Event::ToolResult(result) => (
            "tool_result",
            &result.tool_call_id,
            result.parent_tool_call_id(),
        ),
        _ => return,
    };
    ui::notify(&format!("{hook} {id} parent={parent:?}"), None);
}

pith_sdk::export_extension!(Probe);
