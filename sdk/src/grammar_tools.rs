//! Grammar-constrained tools, as pi's providers send them (its `constrainedSampling` of type
//! `grammar`): a tool whose one argument is a raw string (codemode's `code`) is declared to an
//! OpenAI model as a *custom* tool with a Lark (or regex) grammar, so the model writes the
//! string unescaped, and the calls it makes are turned back into the tool's JSON arguments.
//!
//! The runtime puts the constrained-sampling requests of a request's tools in the model's
//! `compat` JSON, under [`CONSTRAINED_SAMPLING_FIELD`] (tool name → pi's `constrainedSampling`
//! object); a provider offers them only when the model's `supportsOpenAIGrammarTools` is true,
//! as pi does. Other providers can ignore the field.

use std::collections::HashMap;

use serde_json::Value;

use crate::compat::Compat;
use crate::provider::Request;

/// The field of `compat` that carries the tools' constrained-sampling requests.
pub const CONSTRAINED_SAMPLING_FIELD: &str = "toolConstrainedSampling";

/// A tool offered with a grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarTool {
    /// The grammar's syntax: `lark` or `regex`.
    pub syntax: &'static str,
    /// The grammar.
    pub definition: String,
    /// The string argument the model's raw input fills.
    pub input_property: String,
}

/// The request's tools offered with a grammar, by name (pi's `resolveGrammarConstrainedSampling`
/// for each declared tool): none unless the model's `supportsOpenAIGrammarTools` is true. An
/// error names a tool whose request cannot be honoured (no grammar, or arguments that are not
/// one required string), with pi's text.
pub fn grammar_tools(request: &Request) -> Result<HashMap<String, GrammarTool>, String> {
    let compat = Compat::of(&request.model);
    let mut tools = HashMap::new();
    if compat.flag("supportsOpenAIGrammarTools") != Some(true) {
        return Ok(tools);
    }
    let Some(Value::Object(requests)) = compat.get(CONSTRAINED_SAMPLING_FIELD) else {
        return Ok(tools);
    };
    for tool in &request.tools {
        let Some(config) = requests.get(&tool.name) else {
            continue;
        };
        if config["type"] != "grammar" {
            continue;
        }
        let variant = |name: &str| {
            config["variants"][name]
                .as_str()
                .filter(|text| !text.trim().is_empty())
        };
        let (syntax, definition) = match (variant("openai_lark"), variant("openai_regex")) {
            (Some(lark), _) => ("lark", lark),
            (None, Some(regex)) => ("regex", regex),
            (None, None) => {
                return Err(format!(
                    "Tool \"{}\" cannot use grammar constrained sampling: no supported grammar variant was provided.",
                    tool.name
                ));
            }
        };
        let schema = crate::provider::tool_schema(tool);
        let input_property = input_property(&schema).map_err(|reason| {
            format!(
                "Tool \"{}\" cannot use grammar constrained sampling: {reason}.",
                tool.name
            )
        })?;
        tools.insert(
            tool.name.clone(),
            GrammarTool {
                syntax,
                definition: definition.to_string(),
                input_property,
            },
        );
    }
    Ok(tools)
}

/// The one required string property of an argument schema (pi's `inferGrammarInputProperty`).
fn input_property(schema: &Value) -> Result<String, String> {
    if schema["type"] != "object" {
        return Err("grammar constrained sampling requires an object parameter schema".into());
    }
    let property = match schema["required"].as_array().map(Vec::as_slice) {
        Some([Value::String(name)]) => name.clone(),
        _ => {
            return Err(
                "grammar constrained sampling requires exactly one required string property".into(),
            );
        }
    };
    let Some(declared) = schema["properties"].get(&property) else {
        return Err(format!(
            "grammar constrained sampling requires a properties entry for {property}"
        ));
    };
    if declared["type"] != "string" {
        return Err(format!(
            "grammar constrained sampling property {property} must have type string"
        ));
    }
    Ok(property)
}

/// The raw input of a replayed grammar tool call: the call's `property` argument (pi's
/// `getGrammarToolInput`).
pub fn replayed_input(tool_name: &str, arguments: &str, property: &str) -> Result<String, String> {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|args| args.get(property)?.as_str().map(str::to_string))
        .ok_or_else(|| {
            format!(
                "Grammar tool call \"{tool_name}\" requires argument \"{property}\" to be a string."
            )
        })
}

/// A grammar tool call's raw input as it streams, turned into the JSON arguments the tool
/// takes (`{"<property>":"<input>"}`), delta by delta (pi's `appendGrammarToolInputJsonDelta`
/// and `closeGrammarToolInputJson`).
#[derive(Debug, Clone)]
pub struct GrammarInput {
    property: String,
    input: String,
    started: bool,
    closed: bool,
}

impl GrammarInput {
    /// A call whose raw input fills `property`.
    pub fn new(property: &str) -> GrammarInput {
        GrammarInput {
            property: property.to_string(),
            input: String::new(),
            started: false,
            closed: false,
        }
    }

    /// The raw input received so far.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The JSON arguments' text for `delta` of raw input (`None` for an empty delta).
    pub fn append(&mut self, delta: &str) -> Result<Option<String>, String> {
        if self.closed {
            return Err(format!(
                "grammar tool input for property \"{}\" changed after it was closed",
                self.property
            ));
        }
        if delta.is_empty() {
            return Ok(None);
        }
        self.input.push_str(delta);
        Ok(Some(format!("{}{}", self.start(), escaped(delta))))
    }

    /// The JSON arguments' last text, when the input ends; `final_input`, when the API sends
    /// the whole input at the end, must extend what streamed. `None` once already closed.
    pub fn close(&mut self, final_input: Option<&str>) -> Result<Option<String>, String> {
        if self.closed {
            return match final_input {
                None => Ok(None),
                Some(whole) if whole == self.input => Ok(None),
                Some(_) => Err(format!(
                    "grammar tool input for property \"{}\" changed after it was closed",
                    self.property
                )),
            };
        }
        let rest = match final_input {
            Some(whole) => {
                let Some(rest) = whole.strip_prefix(self.input.as_str()) else {
                    return Err(format!(
                        "grammar tool input for property \"{}\" changed non-monotonically",
                        self.property
                    ));
                };
                rest.to_string()
            }
            None => String::new(),
        };
        self.input.push_str(&rest);
        self.closed = true;
        Ok(Some(format!("{}{}\"}}", self.start(), escaped(&rest))))
    }

    /// The opening of the JSON object, the first time.
    fn start(&mut self) -> String {
        if self.started {
            return String::new();
        }
        self.started = true;
        format!("{{{}:\"", Value::String(self.property.clone()))
    }
}

/// `text` as the inside of a JSON string.
fn escaped(text: &str) -> String {
    let quoted = Value::String(text.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_input_becomes_the_json_arguments() {
        let mut input = GrammarInput::new("code");
        let mut json = String::new();
        for piece in ["return \"a\"", "\n+ 1"] {
            json.push_str(&input.append(piece).unwrap().unwrap());
        }
        assert_eq!(input.append("").unwrap(), None);
        json.push_str(&input.close(Some("return \"a\"\n+ 1;")).unwrap().unwrap());
        let args: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(args, serde_json::json!({"code": "return \"a\"\n+ 1;"}));
        assert_eq!(input.close(Some("return \"a\"\n+ 1;")).unwrap(), None);
        assert!(input.close(Some("other")).is_err());
        assert!(input.append("more").is_err());
    }

    #[test]
    fn an_empty_input_is_an_empty_string() {
        let mut input = GrammarInput::new("code");
        assert_eq!(input.close(None).unwrap().unwrap(), "{\"code\":\"\"}");
        let mut input = GrammarInput::new("code");
        input.append("ab").unwrap();
        assert!(
            input
                .close(Some("xb"))
                .unwrap_err()
                .contains("non-monotonically")
        );
    }

    #[test]
    fn the_input_property_is_the_one_required_string() {
        let schema = serde_json::json!({"type": "object", "required": ["code"],
            "properties": {"code": {"type": "string"}}});
        assert_eq!(input_property(&schema).unwrap(), "code");
        let two = serde_json::json!({"type": "object", "required": ["a", "b"], "properties": {}});
        assert!(input_property(&two).unwrap_err().contains("exactly one"));
        let number = serde_json::json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "number"}}});
        assert!(
            input_property(&number)
                .unwrap_err()
                .contains("must have type string")
        );
        assert_eq!(
            replayed_input("codemode", "{\"code\":\"x\"}", "code").unwrap(),
            "x"
        );
        assert!(replayed_input("codemode", "{}", "code").is_err());
    }
}
