//! The session file loader: any file opens or is refused with an error (never a panic); an
//! opened session's context, tree, entries and name can be read, and a message appended to it
//! is there when the file is opened again.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../runtime/src/content.rs"]
#[allow(dead_code, missing_docs)]
mod content;
#[path = "../../runtime/src/js.rs"]
#[allow(dead_code, missing_docs)]
mod js;
#[path = "../../runtime/src/time.rs"]
#[allow(dead_code, missing_docs)]
mod time;

// The engine's files name each other by their paths in the crate (`crate::agent::…`): the
// modules are re-exported at those paths here.
#[path = "../../runtime/src/agent/conversation/message.rs"]
#[allow(dead_code, missing_docs)]
mod message;
#[path = "../../runtime/src/agent/conversation/messages.rs"]
#[allow(dead_code, missing_docs)]
mod messages;
#[path = "../../runtime/src/agent/conversation/prompt_sections.rs"]
#[allow(dead_code, missing_docs)]
mod prompt_sections;
#[path = "../../runtime/src/agent/session/file/mod.rs"]
#[allow(dead_code, missing_docs)]
mod session_file;
mod agent {
    pub mod conversation {
        pub(crate) use crate::{message, messages, prompt_sections};
    }
    pub mod session {
        #[allow(unused_imports)]
        pub(crate) use crate::session_file as file;
    }
}

use message::AgentMessage;
use session_file::SessionFile;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("pith-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("session.jsonl");
    std::fs::write(&path, data).expect("the temp dir is writable");
    let Ok((mut session, _problems)) = SessionFile::open(&path) else {
        return;
    };
    let before = session.entries_since(None).map_or(0, |entries| entries.len());
    let _ = session.header();
    let _ = session.context();
    // The conversation as a session holds it reads as the one read whole.
    let (held, ids): (Vec<_>, Vec<_>) = session
        .held_context()
        .messages
        .into_iter()
        .map(|(id, held)| (held, id))
        .unzip();
    let read = messages::Messages::to_vec(&session_file::held::HeldMessages::new(
        &held, &ids, &session,
    ));
    let whole: Vec<AgentMessage> = session.context().messages.into_iter().map(|(_, m)| m).collect();
    assert_eq!(read, whole);
    let _ = session.tree();
    let _ = session.branch_entries();
    let _ = session.user_messages();
    let _ = session.name();
    if let Some(leaf) = session.leaf_id().map(str::to_string) {
        let _ = session.entries_since(Some(&leaf));
        // Moving the leaf back to where it is changes nothing.
        assert!(session.set_leaf(Some(&leaf)).is_ok());
    }
    session.append_message(&AgentMessage::user("appended", Vec::new()));
    if session.is_written() {
        let (reopened, _) = SessionFile::open(&path).expect("a file pith wrote opens again");
        let after = reopened.entries_since(None).map_or(0, |entries| entries.len());
        assert_eq!(after, before + 1, "the appended entry is kept");
    }
});
