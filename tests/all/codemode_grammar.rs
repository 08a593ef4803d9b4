//! codemode's grammar for capable models, as pi 1.5.2 sends it: with
//! `compat.supportsOpenAIGrammarTools`, `codemode` is declared as an OpenAI *custom* tool with
//! pi's Lark grammar (chat completions and Responses API), the model writes the script raw, the
//! raw input becomes the tool's `{"code": …}` arguments as it streams, and the call is replayed
//! as a custom call on the next request.

use serde_json::{Value, json};

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};

/// pi's `CODEMODE_SOURCE_GRAMMAR`, as its bundle has it.
const PIS_GRAMMAR: &str = "\nstart: options_source | plain_source\noptions_source: OPTIONS_LINE NEWLINE SOURCE\nplain_source: SOURCE\n\nOPTIONS_LINE: /[ \\t]*\\/\\/ @options:[^\\r\\n]*/\nNEWLINE: /\\r?\\n/\nSOURCE: /[\\s\\S]+/\n";

/// The script the model writes raw: quotes, a backslash and line breaks that a JSON string
/// would have to escape.
const SCRIPT: &str =
    "// @options: {\"timeout_ms\": 5000}\nconst s = \"a\\\\b\";\nreturn s.length * 10 + 2;";

/// Runs one prompt against a model of `api` that takes grammar tools, the first answer being
/// `first` (raw SSE frames), and returns the bodies the server received and pith's frames.
async fn run(api: &str, first: Vec<Value>) -> (Vec<Value>, Pith) {
    let server = FakeLlm::start(json!([{"raw_sse": first}, {"text": "Done."}])).await;
    let models = json!({"providers": {"gpt": {
        "baseUrl": format!("{}/v1", server.url), "api": api, "apiKey": "fake-key",
        "models": [{"id": "g", "compat": {"supportsOpenAIGrammarTools": true}}]}}});
    let options = Options {
        args: vec![
            "--model".into(),
            "gpt/g".into(),
            "--tools".into(),
            "+codemode".into(),
            "--no-session".into(),
        ],
        agent_files: vec![("models.json".into(), models.to_string())],
        ..Options::default()
    };
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "Compute"}))
        .await;
    pith.until_agent_end().await;
    let bodies = server
        .requests()
        .iter()
        .map(|r| r["body"].clone())
        .collect();
    (bodies, pith)
}

/// The script ran from the raw input, whose JSON arguments streamed as pi's deltas.
fn assert_the_script_ran(pith: &Pith) {
    let end = pith
        .frames
        .iter()
        .find(|f| f["type"] == "tool_execution_end" && f["toolName"] == "codemode")
        .unwrap_or_else(|| panic!("no codemode result: {:#?}", pith.frames));
    assert_eq!(end["isError"], false, "{end}");
    let text: String = end["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert!(text.starts_with("Script completed"), "{text}");
    assert!(text.ends_with("Output:\n32"), "{text}");
    let call = pith
        .frames
        .iter()
        .find(|f| f["type"] == "message_end" && f["message"]["role"] == "assistant")
        .map(|f| f["message"]["content"][0].clone())
        .unwrap();
    assert_eq!(call["arguments"], json!({"code": SCRIPT}), "{call}");
    let deltas: String = pith
        .frames
        .iter()
        .filter(|f| f["assistantMessageEvent"]["type"] == "toolcall_delta")
        .filter_map(|f| f["assistantMessageEvent"]["delta"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&deltas).unwrap(),
        json!({"code": SCRIPT})
    );
}

/// Chat completions: a custom tool with a grammar; the call's `custom.input` streams raw; the
/// replay is a `custom` tool call.
#[tokio::test(flavor = "multi_thread")]
async fn chat_completions_offer_pis_grammar_and_read_the_raw_script() {
    let (head, tail) = SCRIPT.split_at(40);
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let (bodies, pith) = run(
        "openai-completions",
        vec![
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_g", "type": "custom", "custom": {"name": "codemode", "input": ""}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "custom": {"input": head}}]}),
                Value::Null,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "custom": {"input": tail}}]}),
                Value::Null,
            ),
            chunk(json!({}), json!("tool_calls")),
            json!("[DONE]"),
        ],
    )
    .await;
    let tools = bodies[0]["tools"].as_array().unwrap();
    let codemode = tools
        .iter()
        .find(|t| t["type"] == "custom")
        .expect("codemode as a custom tool");
    assert_eq!(codemode["custom"]["name"], "codemode");
    assert_eq!(
        codemode["custom"]["format"],
        json!({"type": "grammar", "grammar": {"syntax": "lark", "definition": PIS_GRAMMAR}})
    );
    assert!(codemode["custom"]["description"].is_string());
    assert!(
        tools.iter().any(|t| t["function"]["name"] == "read"),
        "{tools:?}"
    );
    assert_the_script_ran(&pith);
    let messages = bodies[1]["messages"].as_array().unwrap();
    let replayed = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        replayed["tool_calls"],
        json!([{"id": "call_g", "type": "custom", "custom": {"name": "codemode", "input": SCRIPT}}])
    );
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_g")
    );
}

/// The Responses API: a custom tool with a grammar; a `custom_tool_call` item whose input
/// streams raw; the replay is a `custom_tool_call` and a `custom_tool_call_output`.
#[tokio::test(flavor = "multi_thread")]
async fn the_responses_api_offers_pis_grammar_and_reads_the_raw_script() {
    let (head, tail) = SCRIPT.split_at(25);
    let item = |input: &str| json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_g", "name": "codemode", "input": input});
    let (bodies, pith) = run(
        "openai-responses",
        vec![
            json!({"type": "response.created", "response": {"id": "resp_1"}}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item("")}),
            json!({"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": head}),
            json!({"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": tail}),
            json!({"type": "response.custom_tool_call_input.done", "output_index": 0, "input": SCRIPT}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item(SCRIPT)}),
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
                "usage": {"input_tokens": 10, "output_tokens": 5}}}),
        ],
    )
    .await;
    let tools = bodies[0]["tools"].as_array().unwrap();
    let codemode = tools.iter().find(|t| t["name"] == "codemode").unwrap();
    assert_eq!(codemode["type"], "custom");
    assert_eq!(
        codemode["format"],
        json!({"type": "grammar", "syntax": "lark", "definition": PIS_GRAMMAR})
    );
    assert!(
        tools
            .iter()
            .any(|t| t["type"] == "function" && t["name"] == "read")
    );
    assert_the_script_ran(&pith);
    let input = bodies[1]["input"].as_array().unwrap();
    assert!(
        input.contains(
            &json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_g",
            "name": "codemode", "input": SCRIPT})
        ),
        "{input:?}"
    );
    let output = input
        .iter()
        .find(|i| i["call_id"] == "call_g" && i["type"] != "custom_tool_call")
        .unwrap();
    assert_eq!(output["type"], "custom_tool_call_output");
}
