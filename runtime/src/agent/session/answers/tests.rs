//! The answers' JSON, as text: pi's keys, in pi's order, with JavaScript's numbers.

use serde::Serialize;
use serde_json::Value;

use super::*;
use crate::agent::model::ThinkingLevel;

fn text(answer: impl Serialize) -> String {
    serde_json::to_string(&answer).expect("an answer serializes")
}

#[test]
fn answers_are_pi_json_in_pi_order() {
    assert_eq!(
        text(ForkOutcome {
            text: "hi".into(),
            cancelled: false
        }),
        r#"{"text":"hi","cancelled":false}"#
    );
    assert_eq!(
        text(TreeMove {
            cancelled: false,
            leaf_id: Some(None),
            editor_text: Some("edit".into())
        }),
        r#"{"cancelled":false,"leafId":null,"editorText":"edit"}"#
    );
    assert_eq!(
        text(TreeMove {
            cancelled: true,
            leaf_id: None,
            editor_text: None
        }),
        r#"{"cancelled":true}"#
    );
    assert_eq!(text(LastAssistantText { text: None }), "{}");
    assert_eq!(
        text(UserMessageList {
            messages: vec![UserMessageRef {
                entry_id: "a1".into(),
                text: "t".into(),
                entry_index: Some(2)
            }]
        }),
        r#"{"messages":[{"entryId":"a1","text":"t","entryIndex":2}]}"#
    );
    assert_eq!(
        text(ClearedQueues {
            steering: vec!["s".into()],
            follow_up: vec![]
        }),
        r#"{"steering":["s"],"followUp":[]}"#
    );
    assert_eq!(
        text(ThinkingLevels {
            levels: vec![ThinkingLevel::Off, ThinkingLevel::Xhigh]
        }),
        r#"{"levels":["off","xhigh"]}"#
    );
    assert_eq!(
        text(SessionPage {
            sessions: vec![],
            next_cursor: None
        }),
        r#"{"sessions":[]}"#
    );
    assert_eq!(
        text(Entries {
            entries: vec![],
            leaf_id: None
        }),
        r#"{"entries":[],"leafId":null}"#
    );
}

#[test]
fn stats_print_whole_numbers_as_javascript_does_with_the_file_first() {
    let stats = SessionStats {
        session_file: Some("/s.jsonl".into()),
        session_id: "id".into(),
        user_messages: 1,
        assistant_messages: 1,
        tool_calls: 0,
        tool_results: 0,
        total_messages: 2,
        tokens: TokenTotals {
            input: 1,
            output: 2,
            cache_read: 0,
            cache_write: 0,
            total: 3,
        },
        cost: 0.0,
        context_usage: ContextUsage {
            tokens: 3,
            context_window: 100,
            percent: 3.0,
        },
        extension_usage: Default::default(),
    };
    assert_eq!(
        text(stats),
        r#"{"sessionFile":"/s.jsonl","sessionId":"id","userMessages":1,"assistantMessages":1,"toolCalls":0,"toolResults":0,"totalMessages":2,"tokens":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"total":3},"cost":0,"contextUsage":{"tokens":3,"contextWindow":100,"percent":3}}"#
    );
}

#[test]
fn an_mcp_tool_adds_its_fields_after_the_common_ones() {
    let tool = |mcp| ToolInfo {
        name: "t".into(),
        description: "d".into(),
        parameters: serde_json::json!({}),
        kind: ToolKind::Mcp,
        plugin: None,
        active: true,
        mcp,
    };
    assert_eq!(
        text(tool(Some(McpToolInfo {
            server: Some("s".into()),
            exposure: "direct",
            server_tool: Some("raw".into()),
            state: Some("connected"),
            annotations: None,
        }))),
        r#"{"name":"t","description":"d","parameters":{},"kind":"mcp","plugin":null,"active":true,"server":"s","exposure":"direct","serverTool":"raw","state":"connected"}"#
    );
    assert_eq!(
        text(tool(None)),
        r#"{"name":"t","description":"d","parameters":{},"kind":"mcp","plugin":null,"active":true}"#
    );
}

#[test]
fn a_compaction_by_an_extension_has_no_estimate_or_usage() {
    assert_eq!(
        text(CompactionResult {
            summary: "s".into(),
            first_kept_entry_id: "e".into(),
            tokens_before: 10,
            estimated_tokens_after: None,
            usage: None,
            details: Value::Null,
        }),
        r#"{"summary":"s","firstKeptEntryId":"e","tokensBefore":10,"details":null}"#
    );
}
