//! pi's `utils.ts`: the bash allowlist, the plan's steps and the `[DONE:n]` markers, with pi's
//! regular expressions unchanged (see [`crate::regex`]). Lengths are JavaScript's (UTF-16 code
//! units).

use crate::regex::Regex;
use pith_sdk::js::trim as js_trim;
use std::sync::LazyLock;

/// Destructive commands blocked in plan mode.
const DESTRUCTIVE_PATTERNS: &[(&str, &str)] = &[
    (r"\brm\b", "i"),
    (r"\brmdir\b", "i"),
    (r"\bmv\b", "i"),
    (r"\bcp\b", "i"),
    (r"\bmkdir\b", "i"),
    (r"\btouch\b", "i"),
    (r"\bchmod\b", "i"),
    (r"\bchown\b", "i"),
    (r"\bchgrp\b", "i"),
    (r"\bln\b", "i"),
    (r"\btee\b", "i"),
    (r"\btruncate\b", "i"),
    (r"\bdd\b", "i"),
    (r"\bshred\b", "i"),
    (r"(^|[^<])>(?!>)", ""),
    (r">>", ""),
    (r"\bnpm\s+(install|uninstall|update|ci|link|publish)", "i"),
    (r"\byarn\s+(add|remove|install|publish)", "i"),
    (r"\bpnpm\s+(add|remove|install|publish)", "i"),
    (r"\bpip\s+(install|uninstall)", "i"),
    (r"\bapt(-get)?\s+(install|remove|purge|update|upgrade)", "i"),
    (r"\bbrew\s+(install|uninstall|upgrade)", "i"),
    (
        r"\bgit\s+(add|commit|push|pull|merge|rebase|reset|checkout|branch\s+-[dD]|stash|cherry-pick|revert|tag|init|clone)",
        "i",
    ),
    (r"\bsudo\b", "i"),
    (r"\bsu\b", "i"),
    (r"\bkill\b", "i"),
    (r"\bpkill\b", "i"),
    (r"\bkillall\b", "i"),
    (r"\breboot\b", "i"),
    (r"\bshutdown\b", "i"),
    (r"\bsystemctl\s+(start|stop|restart|enable|disable)", "i"),
    (r"\bservice\s+\S+\s+(start|stop|restart)", "i"),
    (r"\b(vim?|nano|emacs|code|subl)\b", "i"),
];

/// Safe read-only commands allowed in plan mode.
const SAFE_PATTERNS: &[(&str, &str)] = &[
    (r"^\s*cat\b", ""),
    (r"^\s*head\b", ""),
    (r"^\s*tail\b", ""),
    (r"^\s*less\b", ""),
    (r"^\s*more\b", ""),
    (r"^\s*grep\b", ""),
    (r"^\s*find\b", ""),
    (r"^\s*ls\b", ""),
    (r"^\s*pwd\b", ""),
    (r"^\s*echo\b", ""),
    (r"^\s*printf\b", ""),
    (r"^\s*wc\b", ""),
    (r"^\s*sort\b", ""),
    (r"^\s*uniq\b", ""),
    (r"^\s*diff\b", ""),
    (r"^\s*file\b", ""),
    (r"^\s*stat\b", ""),
    (r"^\s*du\b", ""),
    (r"^\s*df\b", ""),
    (r"^\s*tree\b", ""),
    (r"^\s*which\b", ""),
    (r"^\s*whereis\b", ""),
    (r"^\s*type\b", ""),
    (r"^\s*env\b", ""),
    (r"^\s*printenv\b", ""),
    (r"^\s*uname\b", ""),
    (r"^\s*whoami\b", ""),
    (r"^\s*id\b", ""),
    (r"^\s*date\b", ""),
    (r"^\s*cal\b", ""),
    (r"^\s*uptime\b", ""),
    (r"^\s*ps\b", ""),
    (r"^\s*top\b", ""),
    (r"^\s*htop\b", ""),
    (r"^\s*free\b", ""),
    (
        r"^\s*git\s+(status|log|diff|show|branch|remote|config\s+--get)",
        "i",
    ),
    (r"^\s*git\s+ls-", "i"),
    (r"^\s*npm\s+(list|ls|view|info|search|outdated|audit)", "i"),
    (r"^\s*yarn\s+(list|info|why|audit)", "i"),
    (r"^\s*node\s+--version", "i"),
    (r"^\s*python\s+--version", "i"),
    (r"^\s*curl\s", "i"),
    (r"^\s*wget\s+-O\s*-", "i"),
    (r"^\s*jq\b", ""),
    (r"^\s*sed\s+-n", "i"),
    (r"^\s*awk\b", ""),
    (r"^\s*rg\b", ""),
    (r"^\s*fd\b", ""),
    (r"^\s*bat\b", ""),
    (r"^\s*eza\b", ""),
];

fn compile(patterns: &[(&str, &str)]) -> Vec<Regex> {
    patterns
        .iter()
        .map(|(source, flags)| Regex::new(source, flags))
        .collect()
}

static DESTRUCTIVE: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(DESTRUCTIVE_PATTERNS));
static SAFE: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(SAFE_PATTERNS));

/// pi's `isSafeCommand`: allowlisted and not destructive.
pub fn is_safe_command(command: &str) -> bool {
    let destructive = DESTRUCTIVE.iter().any(|p| p.is_match(command));
    let safe = SAFE.iter().any(|p| p.is_match(command));
    !destructive && safe
}

/// One step of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct TodoItem {
    pub step: u64,
    pub text: String,
    pub completed: bool,
}

/// JavaScript's `length`: UTF-16 code units.
pub fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// pi's `cleanStepText`: no markdown emphasis or code, no leading verb (and `the`), one space
/// between words, the first letter upper-cased.
pub fn clean_step_text(text: &str) -> String {
    static BOLD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\*{1,2}([^*]+)\*{1,2}", "g"));
    static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`]+)`", "g"));
    static VERB: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(Use|Run|Execute|Create|Write|Read|Check|Verify|Update|Modify|Add|Remove|Delete|Install)\s+(the\s+)?",
            "i",
        )
    });
    static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+", "g"));

    let cleaned = BOLD.replace(text, true, |m| m.group(1).to_string());
    let cleaned = CODE.replace(&cleaned, true, |m| m.group(1).to_string());
    let cleaned = VERB.replace(&cleaned, false, |_| String::new());
    let cleaned = SPACES.replace(&cleaned, true, |_| " ".to_string());
    let cleaned = js_trim(&cleaned);

    // `charAt(0).toUpperCase()`: a character outside the BMP is half a surrogate pair to
    // JavaScript, which it leaves alone.
    let mut chars = cleaned.chars();
    match chars.next() {
        Some(first) if (first as u32) <= 0xFFFF => {
            let mut out: String = first.to_uppercase().collect();
            out.push_str(chars.as_str());
            out
        }
        _ => cleaned.to_string(),
    }
}

/// pi's `extractTodoItems`: the numbered steps under the last `Plan:` header.
pub fn extract_todo_items(message: &str) -> Vec<TodoItem> {
    static HEADER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\*{0,2}Plan:\*{0,2}\s*\n", "gi"));
    static NUMBERED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(\d+)[.)]\s+(.+)$", "gm"));
    static TRAILING_STARS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\*{1,2}$", ""));

    let mut items = Vec::new();
    let message: Vec<char> = message.chars().collect();
    let Some(last_header) = HEADER.captures_all(&message).pop() else {
        return items;
    };
    let plan_section = &message[last_header.end..];
    for found in NUMBERED.captures_all(plan_section) {
        let text = TRAILING_STARS.replace(js_trim(found.group(2)), false, |_| String::new());
        let text = js_trim(&text);
        if js_len(text) > 5 && !text.starts_with('/') && !text.starts_with('-') {
            let cleaned = clean_step_text(text);
            if js_len(&cleaned) > 3 {
                items.push(TodoItem {
                    step: items.len() as u64 + 1,
                    text: cleaned,
                    completed: false,
                });
            }
        }
    }
    items
}

/// pi's `extractDoneSteps`: the step numbers marked done (`[DONE:1]`, `Done: 2`, `Step 3 is
/// complete`), each once, in order. A number too large for a step is left out.
pub fn extract_done_steps(message: &str) -> Vec<u64> {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        vec![
            Regex::new(r"\[DONE\s*:?\s*(\d+)\]", "gi"),
            Regex::new(r"\bDone\s*:\s*(\d+)\b", "gi"),
            Regex::new(
                r"\bStep\s*(\d+)\s+(?:is\s+)?(?:done|complete|completed|finished)\b",
                "gi",
            ),
        ]
    });
    let message: Vec<char> = message.chars().collect();
    let mut steps: Vec<u64> = Vec::new();
    for pattern in PATTERNS.iter() {
        for found in pattern.captures_all(&message) {
            if let Ok(step) = found.group(1).parse::<u64>()
                && !steps.contains(&step)
            {
                steps.push(step);
            }
        }
    }
    steps
}

/// pi's `markCompletedSteps`: marks the steps `text` says are done; how many it marked.
pub fn mark_completed_steps(text: &str, items: &mut [TodoItem]) -> usize {
    let mut marked = 0;
    for step in extract_done_steps(text) {
        if let Some(item) = items.iter_mut().find(|t| t.step == step && !t.completed) {
            item.completed = true;
            marked += 1;
        }
    }
    marked
}

/// pi's `allStepsComplete`: the whole plan said to be done ("All steps complete").
pub fn all_steps_complete(message: &str) -> bool {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        vec![
            Regex::new(
                r"(?:all|every)\s+steps?\s+(?:are|is\s+)?(?:done|complete|completed|finished)",
                "i",
            ),
            Regex::new(
                r"\b(?:the\s+)?plan\s+(?:is\s+)?(?:complete|completed|done)\b",
                "i",
            ),
        ]
    });
    PATTERNS.iter().any(|p| p.is_match(message))
}
