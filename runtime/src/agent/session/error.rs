//! Why a session command was refused or failed: one typed error for every command of the
//! engine's seam. Its text is pi's where pi has one (a front-end sends it as it is: RPC in its
//! error response, ACP in its JSON-RPC error); a front-end that acts on the cause matches the
//! variant instead of the text.

use crate::agent::extensions::ui::DialogError;
use crate::agent::session::file::OpenError;
use crate::agent::tools::host_tools::HostToolError;
use crate::agent::tools::todos::TodoError;

/// A session command's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// `remove_queued` of an id no queued message has.
    #[error(
        "No queued message with clientMessageId \"{0}\": it was delivered, removed, or never queued with that id"
    )]
    NotQueued(String),
    /// `set_host_tools` with a tool set that is not valid.
    #[error(transparent)]
    InvalidHostTools(#[from] HostToolError),
    /// `set_model` of a model the registry does not have (or has no key for).
    #[error("Model not found: {provider}/{id}")]
    ModelNotFound {
        /// The provider asked for.
        provider: String,
        /// The model id asked for.
        id: String,
    },
    /// `set_session_name` with an empty name.
    #[error("Session name cannot be empty")]
    EmptySessionName,
    /// pi 0.16's `branch {entryIndex}` past the conversation.
    #[error("Invalid entry index for branching")]
    InvalidEntryIndex,
    /// No entry has this id.
    #[error("Entry not found: {0}")]
    EntryNotFound(String),
    /// `navigate_tree` during a run or a compaction.
    #[error("Cannot navigate the session tree while the agent is running (abort it first)")]
    NavigateWhileRunning,
    /// A run or a compaction started while the extensions were asked about a tree move.
    #[error("Cannot navigate the session tree: a run or a compaction started meanwhile")]
    NavigateRaced,
    /// The session was switched or moved while the extensions were asked about a tree move.
    #[error("The session changed meanwhile; navigate again")]
    SessionChangedMeanwhile,
    /// `switch_session` to a file that cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// `fork` at an entry that is not a user message.
    #[error("Invalid entry ID for forking")]
    InvalidForkEntry,
    /// `clone` of a session with no leaf.
    #[error("Cannot clone session: no current entry selected")]
    CloneNoLeaf,
    /// `clone` of a session with no message.
    #[error("Cannot clone session: it has no messages yet")]
    CloneEmpty,
    /// `set_active_tools` naming tools the session does not have.
    #[error(
        "Unknown tools: {} (the tools there are: {}; get_tools lists them)",
        .unknown.join(", "),
        .available.join(", ")
    )]
    UnknownTools {
        /// The names not found.
        unknown: Vec<String>,
        /// The tools there are.
        available: Vec<String>,
    },
    /// `list_sessions` / `delete_session` of a session kept in memory.
    #[error("This session is not saved (--no-session): there is no sessions directory")]
    NotSaved,
    /// `list_sessions` with a scope other than `cwd`, `all` (or `host`, which the RPC session
    /// host answers).
    #[error(
        "Unknown scope {0:?}: use \"cwd\" or \"all\" (the saved sessions), or \"host\" (the sessions this process holds)"
    )]
    UnknownScope(String),
    /// `list_sessions` with a page size out of range.
    #[error("limit must be 1 to {max}, got {got}")]
    BadLimit {
        /// The largest page.
        max: usize,
        /// The size asked for.
        got: u64,
    },
    /// `list_sessions` with a cursor it did not hand out.
    #[error("Invalid cursor {0:?}: pass the nextCursor of the previous page")]
    BadCursor(String),
    /// `delete_session` of a path where there is no file.
    #[error("No session file at {0}")]
    NoSessionFile(String),
    /// `delete_session` of a file outside the sessions directory.
    #[error("{0} is not in the sessions directory: pith deletes only its session files")]
    OutsideSessions(String),
    /// `delete_session` of the open session.
    #[error("Cannot delete the open session: switch_session or new_session first")]
    DeleteOpen,
    /// `delete_session` of a file with no session header.
    #[error("{0} is not a session file (no session header)")]
    NotASessionFile(String),
    /// `delete_session` refused by the file system.
    #[error("Cannot delete {path}: {reason}")]
    DeleteFailed {
        /// The file.
        path: String,
        /// The system's reason.
        reason: String,
    },
    /// The `bash` command could not run (the text names the sandbox's or the system's reason).
    #[error("{0}")]
    Bash(String),
    /// `set_todos` with phases that are not valid.
    #[error(transparent)]
    InvalidTodos(#[from] TodoError),
    /// `compact` without a model.
    #[error("No model selected")]
    NoModelSelected,
    /// `compact` with nothing outside the kept tail.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
    /// `compact` right after a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// An extension cancelled the compaction.
    #[error("Compaction cancelled")]
    CompactionCancelled,
    /// The summary request failed.
    #[error("Summarization failed: {0}")]
    SummarizationFailed(String),
    /// `get_argument_completions` for a command the session does not have.
    #[error("Unknown command: {0} (get_commands lists the commands)")]
    UnknownCommand(String),
    /// An extension's argument completions failed.
    #[error("{0}")]
    CompletionsFailed(String),
    /// A host's answer that reached no dialog.
    #[error(transparent)]
    Dialog(#[from] DialogError),
}
