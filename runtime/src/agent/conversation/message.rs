//! The conversation's messages in pi's JSON shapes and key order (pi-behaviour §7).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::Content;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A message of the conversation (pi's `AgentMessage`), tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum AgentMessage {
    /// pi 1.5's record of the system prompt and the tool set the model is shown.
    System(SystemMessage),
    /// A user turn.
    User(UserMessage),
    /// A model's answer.
    Assistant(AssistantMessage),
    /// The result of a tool call.
    ToolResult(ToolResultMessage),
    /// A command the user ran with the `bash` RPC command.
    BashExecution(BashExecutionMessage),
    /// A message added by an extension.
    Custom(CustomMessage),
    /// The summary that replaces compacted history.
    CompactionSummary(CompactionSummaryMessage),
    /// The summary of a branch the conversation came back from.
    BranchSummary(BranchSummaryMessage),
}

/// pi 1.5's `system` message: `{"role":"system","content":"","sections",…,"timestamp",
/// "toolsAdded"?,"toolsRemoved"?}`. The first of a session carries the whole prompt and tool
/// set; a later one the tools added and removed since. It is a record for hosts: the model gets
/// the prompt as the request's system prompt, not as a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Always empty: the prompt is in `sections`.
    #[serde(default)]
    pub content: String,
    /// The prompt's sections: all of them in the first, the changed ones (`null` for one
    /// removed) in a later one.
    #[serde(default, skip_serializing_if = "Sections::is_empty")]
    pub sections: Sections,
    /// When it was recorded.
    pub timestamp: i64,
    /// The tools added since the previous system message (all of them in the first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_added: Vec<ToolDescription>,
    /// The tools removed since the previous system message (a changed tool is removed and
    /// added again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_removed: Vec<ToolReference>,
}

/// A tool named in `toolsRemoved`: pi's `{"name"}` (a bare name, as pith wrote before, is
/// read too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ToolReferenceForm")]
pub struct ToolReference {
    /// The tool's name.
    pub name: String,
}

/// The forms a `toolsRemoved` entry takes in files.
#[derive(Deserialize)]
#[serde(untagged)]
enum ToolReferenceForm {
    Object { name: String },
    Name(String),
}

impl From<ToolReferenceForm> for ToolReference {
    fn from(form: ToolReferenceForm) -> ToolReference {
        match form {
            ToolReferenceForm::Object { name } | ToolReferenceForm::Name(name) => {
                ToolReference { name }
            }
        }
    }
}

pub use crate::agent::conversation::prompt_sections::Sections;

/// A tool as the `system` message lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDescription {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters' JSON schema.
    pub parameters: Value,
    /// How providers that can constrain sampling should hold the arguments to the schema.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub constrained_sampling: Value,
}

impl ToolDescription {
    /// pi's `constrainedSampling`: the JSON schema, preferred when the provider can.
    pub fn prefer_schema() -> Value {
        serde_json::json!({"type": "json_schema", "strict": "prefer"})
    }
}

/// A user message: `{"role":"user","content":[…],"timestamp"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// Text and images.
    pub content: UserContent,
    /// When it was sent.
    pub timestamp: i64,
}

/// User content: pi writes blocks, older files may hold a plain string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// Content blocks.
    Blocks(Vec<Content>),
    /// A plain string.
    Text(String),
}

impl UserContent {
    /// The content as blocks.
    pub fn blocks(&self) -> Vec<Content> {
        match self {
            UserContent::Blocks(blocks) => blocks.clone(),
            UserContent::Text(text) => vec![Content::text(text.clone())],
        }
    }

    /// The text blocks concatenated (no separator, as pi does for fork messages).
    pub fn text(&self) -> String {
        match self {
            UserContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    Content::Text { text } => Some(text.as_str()),
                    Content::Image { .. } => None,
                })
                .collect(),
            UserContent::Text(text) => text.clone(),
        }
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// Its blocks.
    pub content: Vec<AssistantBlock>,
    /// The wire format.
    pub api: String,
    /// The provider.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Token counts and cost.
    pub usage: Usage,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// When it started.
    pub timestamp: i64,
    /// The provider's response id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The provider's own stop reason (`end_turn`, `tool_use`, `tool_calls`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// How long the answer took, from the request to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level it was asked with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
}

impl AssistantMessage {
    /// An empty answer from `model`, as a stream starts.
    pub fn empty(api: &str, provider: &str, model: &str) -> AssistantMessage {
        AssistantMessage {
            content: Vec::new(),
            api: api.to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            timestamp: now_ms(),
            response_id: None,
            error_message: None,
            raw_stop_reason: None,
            duration_ms: None,
            thinking_level: None,
        }
    }

    /// The text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// A block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum AssistantBlock {
    /// Visible text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
        /// The provider's signature.
        #[serde(
            rename = "textSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        signature: Option<String>,
    },
    /// Reasoning.
    #[serde(rename = "thinking")]
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature.
        #[serde(
            rename = "thinkingSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        signature: Option<String>,
        /// True when redacted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    /// A tool call.
    #[serde(rename = "toolCall")]
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments object.
        arguments: Value,
        /// Google's signature.
        #[serde(
            rename = "thoughtSignature",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        thought_signature: Option<String>,
    },
}

/// Token counts and cost of one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cached input read.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
    /// The sum of the four.
    pub total_tokens: u64,
    /// Dollars.
    pub cost: Cost,
    /// Anthropic's one-hour cache writes (pi 1.5 reports them for anthropic-messages answers).
    #[serde(
        rename = "cacheWrite1h",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_write_1h: Option<u64>,
    /// Reasoning tokens (pi 1.5 reports them for OpenAI answers; counted in `output`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
}

impl Usage {
    /// The usage as pi 0.73 reported it: without `cost.totalFromProvider`, `cacheWrite1h` and
    /// `reasoning`.
    pub fn without_1_5_keys(&self) -> Usage {
        Usage {
            cache_write_1h: None,
            reasoning: None,
            cost: Cost {
                total_from_provider: None,
                ..self.cost
            },
            ..*self
        }
    }

    /// Adds `other`'s tokens and cost (for work made of several requests).
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total_tokens += other.total_tokens;
        self.cost.input += other.cost.input;
        self.cost.output += other.cost.output;
        self.cost.cache_read += other.cost.cache_read;
        self.cost.cache_write += other.cost.cache_write;
        self.cost.total += other.cost.total;
        self.cost.total_from_provider = self
            .cost
            .total_from_provider
            .or(other.cost.total_from_provider);
        self.cache_write_1h = add_optional(self.cache_write_1h, other.cache_write_1h);
        self.reasoning = add_optional(self.reasoning, other.reasoning);
    }
}

fn add_optional(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

/// Dollars spent on one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// On input.
    #[serde(serialize_with = "js_number")]
    pub input: f64,
    /// On output.
    #[serde(serialize_with = "js_number")]
    pub output: f64,
    /// On cache reads.
    #[serde(serialize_with = "js_number")]
    pub cache_read: f64,
    /// On cache writes.
    #[serde(serialize_with = "js_number")]
    pub cache_write: f64,
    /// In all.
    #[serde(serialize_with = "js_number")]
    pub total: f64,
    /// True when the provider stated the cost itself (pith prices tokens from the model's
    /// prices: false once a provider reported usage, absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

pub use crate::js::{js_number, js_value};

/// Why a model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Finished.
    Stop,
    /// Hit the output limit.
    Length,
    /// Asked for tools.
    ToolUse,
    /// Failed.
    Error,
    /// Aborted.
    Aborted,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call it answers.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// What the model sees.
    pub content: Vec<Content>,
    /// Details for hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// True on failure.
    pub is_error: bool,
    /// How long the call ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// When it finished.
    pub timestamp: i64,
    /// The calls the tool made while it ran (a `codemode` script's; pi's `nestedCalls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_calls: Option<Value>,
}

/// A `bash` RPC command's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    /// The command.
    pub command: String,
    /// Its output.
    pub output: String,
    /// Its exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// True when aborted.
    pub cancelled: bool,
    /// True when the output was truncated.
    pub truncated: bool,
    /// Where the full output is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// When it ran.
    pub timestamp: i64,
    /// True to keep it out of the model's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
}

/// A message an extension added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    /// Its type.
    pub custom_type: String,
    /// Its content (a string or blocks).
    pub content: Value,
    /// Whether UIs show it.
    pub display: bool,
    /// Extension details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// When it was added.
    pub timestamp: i64,
}

/// A compaction summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    /// The summary.
    pub summary: String,
    /// Context tokens before compaction.
    pub tokens_before: u64,
    /// When.
    pub timestamp: i64,
}

/// A branch summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    /// The summary.
    pub summary: String,
    /// The entry the branch left from.
    pub from_id: String,
    /// When.
    pub timestamp: i64,
}

impl AgentMessage {
    /// A user message with text and images, stamped now.
    pub fn user(text: &str, images: Vec<Content>) -> AgentMessage {
        let mut content = vec![Content::text(text)];
        content.extend(images);
        AgentMessage::User(UserMessage {
            content: UserContent::Blocks(content),
            timestamp: now_ms(),
        })
    }

    /// The text a queue shows for the message (user and custom messages; empty otherwise).
    pub fn text(&self) -> String {
        match self {
            AgentMessage::User(user) => user.content.text(),
            AgentMessage::Custom(custom) => match &custom.content {
                Value::String(text) => text.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    /// The message as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_json_has_pi_key_order() {
        let mut message = AssistantMessage::empty("anthropic-messages", "fake", "fake-model");
        message.timestamp = 1;
        message.content.push(AssistantBlock::Text {
            text: "hi".into(),
            signature: None,
        });
        message.response_id = Some("r".into());
        let json = serde_json::to_string(&AgentMessage::Assistant(message)).unwrap();
        assert_eq!(
            json,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"anthropic-messages","provider":"fake","model":"fake-model","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"responseId":"r"}"#
        );
    }

    #[test]
    fn messages_round_trip() {
        let text = r#"{"role":"toolResult","toolCallId":"t","toolName":"bash","content":[{"type":"text","text":"hi\n"}],"isError":false,"timestamp":5}"#;
        let message: AgentMessage = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&message).unwrap(), text);
    }
}
