//! A tool call's arguments checked against its tool's JSON schema, with pi's coercions and
//! pi's words for what does not fit (1.5's, or 0.73's under that profile).

use serde_json::{Map, Value, json};

/// Checks `arguments` against a tool's JSON schema, coercing scalar types as pi's validator
/// does (`"5"` → 5, `5` → `"5"`, `"true"` → true). Returns the coerced arguments, or pi's
/// validation message.
pub fn validate(
    tool: &str,
    schema: &Value,
    arguments: &Value,
    wording: Wording,
) -> Result<Value, InvalidArguments> {
    let mut problems = Vec::new();
    let coerced = Checker { wording }.check(schema, arguments, "", &mut problems);
    if problems.is_empty() {
        return Ok(coerced);
    }
    Err(InvalidArguments {
        tool: tool.to_string(),
        problems,
        received: serde_json::to_string_pretty(arguments).unwrap_or_default(),
    })
}

/// A call's arguments that do not fit its tool's schema; the text (pi's) is the tool result
/// the model gets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Validation failed for tool \"{tool}\":\n{}\n\nReceived arguments:\n{received}",
    problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n")
)]
pub struct InvalidArguments {
    /// The tool.
    pub tool: String,
    /// What does not fit, one line each (`timeout: must be number`).
    pub problems: Vec<String>,
    /// The arguments as received, pretty-printed.
    pub received: String,
}

/// Whose words a validation problem is told in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// pi 1.5's validator: `edits.0.oldText: expected string, got integer`, `command: missing`.
    PiSchema,
    /// pi 0.73's (AJV): `edits/0/oldText: must be string`, `root: must have required property
    /// 'command'`.
    Ajv,
}

/// A JSON value's type as pi 1.5's validator names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks values against a schema, telling problems in one [`Wording`].
struct Checker {
    wording: Wording,
}

impl Checker {
    /// The path of `key` below `path`.
    fn child(&self, path: &str, key: &str) -> String {
        match (path.is_empty(), self.wording) {
            (true, _) => key.to_string(),
            (false, Wording::PiSchema) => format!("{path}.{key}"),
            (false, Wording::Ajv) => format!("{path}/{key}"),
        }
    }

    /// `value` at `at` is not of `kind`.
    fn wrong_type(&self, at: &str, kind: &str, value: &Value) -> String {
        match self.wording {
            Wording::PiSchema => format!("{at}: expected {kind}, got {}", type_name(value)),
            Wording::Ajv => format!("{at}: must be {kind}"),
        }
    }

    fn check(
        &self,
        schema: &Value,
        value: &Value,
        path: &str,
        problems: &mut Vec<String>,
    ) -> Value {
        let at = if path.is_empty() {
            "root".to_string()
        } else {
            path.to_string()
        };
        let Some(kind) = schema.get("type").and_then(Value::as_str) else {
            return value.clone();
        };
        match kind {
            "object" => {
                let Some(object) = value.as_object() else {
                    problems.push(self.wrong_type(&at, "object", value));
                    return value.clone();
                };
                let mut out: Map<String, Value> = object.clone();
                for required in schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if !object.contains_key(required) {
                        problems.push(match self.wording {
                            Wording::PiSchema => format!("{}: missing", self.child(path, required)),
                            Wording::Ajv => {
                                format!("{at}: must have required property '{required}'")
                            }
                        });
                    }
                }
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    for (key, property) in properties {
                        if let Some(item) = object.get(key) {
                            let child = self.child(path, key);
                            out.insert(key.clone(), self.check(property, item, &child, problems));
                        }
                    }
                }
                Value::Object(out)
            }
            "array" => match value.as_array() {
                Some(items) => {
                    let item_schema = schema.get("items").cloned().unwrap_or(Value::Null);
                    Value::Array(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, item)| {
                                self.check(
                                    &item_schema,
                                    item,
                                    &self.child(path, &i.to_string()),
                                    problems,
                                )
                            })
                            .collect(),
                    )
                }
                None => {
                    problems.push(self.wrong_type(&at, "array", value));
                    value.clone()
                }
            },
            "string" => match value {
                Value::String(_) => value.clone(),
                Value::Number(n) => Value::String(n.to_string()),
                Value::Bool(b) => Value::String(b.to_string()),
                _ => {
                    problems.push(self.wrong_type(&at, "string", value));
                    value.clone()
                }
            },
            "number" | "integer" => {
                let number = match value {
                    Value::Number(_) => Some(value.clone()),
                    Value::String(s) => s
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                        .map(|v| {
                            v.as_f64()
                                .filter(|f| f.fract() == 0.0)
                                .map_or(v.clone(), |f| json!(f as i64))
                        }),
                    Value::Bool(b) => Some(json!(i64::from(*b))),
                    _ => None,
                };
                match number {
                    Some(n)
                        if kind == "integer" && n.as_f64().is_some_and(|f| f.fract() != 0.0) =>
                    {
                        problems.push(self.wrong_type(&at, "integer", value));
                        value.clone()
                    }
                    Some(n) => n,
                    None => {
                        problems.push(self.wrong_type(&at, kind, value));
                        value.clone()
                    }
                }
            }
            "boolean" => match value {
                Value::Bool(_) => value.clone(),
                Value::String(s) if s == "true" => json!(true),
                Value::String(s) if s == "false" => json!(false),
                Value::Number(n) if n.as_f64() == Some(1.0) => json!(true),
                Value::Number(n) if n.as_f64() == Some(0.0) => json!(false),
                _ => {
                    problems.push(self.wrong_type(&at, "boolean", value));
                    value.clone()
                }
            },
            _ => value.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_coerces_and_reports() {
        let schema = json!({"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}});
        assert_eq!(
            validate(
                "bash",
                &schema,
                &json!({"command": "ls", "timeout": "5"}),
                Wording::Ajv
            )
            .unwrap(),
            json!({"command": "ls", "timeout": 5})
        );
        let err = validate("bash", &schema, &json!({"timeout": "x"}), Wording::Ajv)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "Validation failed for tool \"bash\":\n  - root: must have required property 'command'\n  - timeout: must be number\n\nReceived arguments:\n{\n  \"timeout\": \"x\"\n}"
        );
        // pi 1.5's words.
        let err = validate("bash", &schema, &json!({"timeout": "x"}), Wording::PiSchema)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "Validation failed for tool \"bash\":\n  - command: missing\n  - timeout: expected number, got string\n\nReceived arguments:\n{\n  \"timeout\": \"x\"\n}"
        );
    }
}
