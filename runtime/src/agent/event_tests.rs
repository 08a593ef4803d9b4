//! Tests of the session events' names and serialization.

use super::*;
use crate::plugin_host::resources::is_extension_event;

#[test]
fn every_observable_event_can_be_subscribed_to() {
    let message = AgentMessage::user("x", Vec::new());
    let events = [
        SessionEvent::AgentStart,
        SessionEvent::AgentEnd {
            messages: Vec::new(),
            will_retry: false,
        },
        SessionEvent::TurnStart,
        SessionEvent::TurnEnd {
            message: message.clone(),
            tool_results: Vec::new(),
        },
        SessionEvent::MessageStart {
            message: message.clone(),
            client_message_id: None,
        },
        SessionEvent::MessageEnd { message },
        SessionEvent::QueueUpdate {
            steering: Vec::new(),
            follow_up: Vec::new(),
            client_message_ids: None,
        },
        SessionEvent::ThinkingLevelChanged {
            level: "off".into(),
        },
        SessionEvent::SessionInfoChanged { name: "n".into() },
        SessionEvent::AgentSettled { aborted: false },
        SessionEvent::CompactionStart {
            reason: "manual".into(),
        },
        SessionEvent::AutoCompactionStart {
            reason: "threshold".into(),
        },
        SessionEvent::TodoAutoClear,
        SessionEvent::SummarizationRetryFinished,
        SessionEvent::EntryAppended {
            entry: serde_json::json!({"type": "custom"}),
        },
        SessionEvent::PluginsChanged {
            added: Vec::new(),
            updated: Vec::new(),
            removed: Vec::new(),
        },
        SessionEvent::SessionSwitch {
            reason: "new".into(),
            previous_session_file: None,
        },
        SessionEvent::SessionFork {
            previous_session_file: None,
        },
        SessionEvent::TtsrTriggered { rules: Vec::new() },
    ];
    for event in events {
        assert!(event.observable());
        assert!(is_extension_event(event.kind()), "{}", event.kind());
    }
    assert!(is_extension_event("message_update"));
    assert!(!is_extension_event("tool_cal"));
}
