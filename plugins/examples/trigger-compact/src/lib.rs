//! A port of pi's `examples/extensions/trigger-compact.ts`: compacts the session when its
//! context grows past 100,000 tokens (checked at each `turn_end`: the previous turn's context
//! was at most the threshold and this one's is above it), and on `/trigger-compact
//! [instructions]`. Each compaction notifies `Compaction started`, then `Compaction completed`
//! or `Compaction failed: <message>` (type `error`).
//!
//! Differences from pi: pi's `ctx.compact({onComplete, onError})` calls back the extension;
//! pith's `session-control.compact` is a request that runs once the call has returned and
//! reports no outcome to the requester. The port hears `compaction_end` (observed, pi's JSON)
//! instead and reports the first manual compaction that ends after its request: with a
//! `result` it completed, otherwise it failed with `errorMessage` (without its
//! `Compaction failed: ` prefix, as pi's `error.message`), or `Compaction cancelled` when it
//! was aborted. A request that pith refuses before the compaction starts (no model, an empty
//! session, the leaf already a compaction) emits no `compaction_end` (pith reports it as an
//! `extension_error`), so then no `Compaction failed` notify follows. Observed events reach the
//! extension after the front-end has them, so the `turn_end` hook's `Compaction started` comes
//! after the `turn_end` frame (pi sends it before).

use pith_sdk::extension::*;

/// pi's `COMPACT_THRESHOLD_TOKENS`.
const COMPACT_THRESHOLD_TOKENS: u64 = 100_000;

/// The prefix pi (and pith) put before a failed compaction's error in `compaction_end`.
const FAILED_PREFIX: &str = "Compaction failed: ";

struct TriggerCompact {
    /// The context's tokens at the last `turn_end` they were known (pi's `previousTokens`).
    previous_tokens: Option<u64>,
    /// True from a compaction request until the `compaction_end` that answers it.
    awaiting: bool,
}

impl TriggerCompact {
    /// pi's `triggerCompaction`.
    fn trigger_compaction(&mut self, custom_instructions: Option<&str>) {
        if session_read::has_ui() {
            ui::notify("Compaction started", Some(ui::NotifyKind::Info));
        }
        session_control::compact(custom_instructions);
        self.awaiting = true;
    }

    /// pi's `turn_end` handler.
    fn on_turn_end(&mut self) {
        let Some(current_tokens) = session_read::context_usage().and_then(|usage| usage.tokens)
        else {
            return;
        };
        let crossed_threshold = self
            .previous_tokens
            .is_some_and(|previous| previous <= COMPACT_THRESHOLD_TOKENS);
        self.previous_tokens = Some(current_tokens);
        if !crossed_threshold || current_tokens <= COMPACT_THRESHOLD_TOKENS {
            return;
        }
        self.trigger_compaction(None);
    }

    /// pi's `onComplete` / `onError`, from a `compaction_end` event's JSON.
    fn on_compaction_end(&mut self, json: &str) {
        let end: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
        if !self.awaiting || end["reason"] != "manual" {
            return;
        }
        self.awaiting = false;
        if !session_read::has_ui() {
            return;
        }
        if end.get("result").is_some_and(|result| !result.is_null()) {
            ui::notify("Compaction completed", Some(ui::NotifyKind::Info));
            return;
        }
        let message = match end["errorMessage"].as_str() {
            Some(error) => error.strip_prefix(FAILED_PREFIX).unwrap_or(error),
            None => "Compaction cancelled",
        };
        ui::notify(
            &format!("Compaction failed: {message}"),
            Some(ui::NotifyKind::Error),
        );
    }
}

impl Extension for TriggerCompact {
    fn new() -> Self {
        TriggerCompact {
            previous_tokens: None,
            awaiting: false,
        }
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("trigger-compact")
            .on(&["turn_end", "compaction_end"])
            .command("trigger-compact", "Trigger compaction immediately")
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::Agent(AgentEvent::TurnEnd(_)) => self.on_turn_end(),
            Event::Observe((name, json)) if name == "compaction_end" => {
                self.on_compaction_end(&json)
            }
            _ => {}
        }
        Ok(EventResult::Continue)
    }

    fn run_command(&mut self, name: &str, args: &str) -> Result<(), String> {
        if name != "trigger-compact" {
            return Err(format!("Unknown command: {name}"));
        }
        // JavaScript's `trim` also removes the byte-order mark, which Rust's does not.
        let instructions = args.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        self.trigger_compaction((!instructions.is_empty()).then_some(instructions));
        Ok(())
    }
}

pith_sdk::export_extension!(TriggerCompact);
