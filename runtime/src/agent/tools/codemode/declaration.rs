//! pi 1.5.2's TypeScript declarations of tools for codemode scripts (`renderToolSample`):
//! identifiers, and JSON schemas as TypeScript types.

use serde_json::{Value, json};

/// pi's `toCodemodeIdentifier`: characters not valid in a JavaScript identifier become `_`.
pub fn to_identifier(name: &str) -> String {
    let mut identifier = String::new();
    for c in name.chars() {
        let valid = if identifier.is_empty() {
            c.is_ascii_alphabetic() || c == '_' || c == '$'
        } else {
            c.is_ascii_alphanumeric() || c == '_' || c == '$'
        };
        identifier.push(if valid { c } else { '_' });
    }
    if identifier.is_empty() {
        "_".into()
    } else {
        identifier
    }
}

/// pi's `resolveSchemaRef`: the subschema a local `$ref` (`#/…`) names.
pub fn resolve_schema_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    let mut current = root;
    for segment in reference
        .get(2..)
        .unwrap_or("")
        .split('/')
        .filter(|s| !s.is_empty())
    {
        let key = segment.replace("~1", "/").replace("~0", "~");
        current = current.as_object()?.get(&key)?;
    }
    (current.is_object() || current.is_boolean()).then_some(current)
}

fn property_key(name: &str) -> String {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if valid {
        name.to_string()
    } else {
        Value::String(name.to_string()).to_string()
    }
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for t in types {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if unique.iter().any(|t| t == "unknown") {
        "unknown".into()
    } else if unique.is_empty() {
        "never".into()
    } else {
        unique.join(" | ")
    }
}

fn to_type(schema: &Value, root: &Value, depth: u32) -> String {
    match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(_) => {}
        _ => return "unknown".into(),
    }
    if depth > 32 {
        return "unknown".into();
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return match resolve_schema_ref(reference, root) {
            Some(target) => to_type(target, root, depth + 1),
            None => "unknown".into(),
        };
    }
    if let Some(constant) = schema.get("const") {
        return constant.to_string();
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return union(values.iter().map(Value::to_string).collect());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            return union(
                variants
                    .iter()
                    .map(|v| to_type(v, root, depth + 1))
                    .collect(),
            );
        }
    }
    let single = |kind: &str| -> String {
        match kind {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => match schema.get("items") {
                Some(items) => {
                    let inner = to_type(items, root, depth + 1);
                    if inner.contains(' ') {
                        format!("Array<{inner}>")
                    } else {
                        format!("{inner}[]")
                    }
                }
                None => "unknown[]".into(),
            },
            "object" => {
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                    return "Record<string, unknown>".into();
                };
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if properties.is_empty() {
                    return "{}".into();
                }
                let fields: Vec<String> = properties
                    .iter()
                    .map(|(name, property)| {
                        let optional = if required.contains(&name.as_str()) {
                            ""
                        } else {
                            "?"
                        };
                        format!(
                            "{}{optional}: {};",
                            property_key(name),
                            to_type(property, root, depth + 1)
                        )
                    })
                    .collect();
                format!("{{ {} }}", fields.join(" "))
            }
            _ => "unknown".into(),
        }
    };
    match schema.get("type") {
        Some(Value::String(kind)) => single(kind),
        Some(Value::Array(kinds)) => {
            union(kinds.iter().filter_map(Value::as_str).map(single).collect())
        }
        _ if schema.get("properties").is_some() => single("object"),
        _ => "unknown".into(),
    }
}

/// pi's `renderToolOutputType`.
pub fn render_output_type(schema: Option<&Value>) -> String {
    schema.map_or_else(|| "unknown".into(), |s| to_type(s, s, 0))
}

/// pi's `renderToolSample`: the description, then the tool's TypeScript declaration.
pub fn render_tool_sample(
    name: &str,
    description: &str,
    input_schema: Option<&Value>,
    output_schema: Option<&Value>,
) -> String {
    let input = input_schema.map_or_else(|| "unknown".into(), |s| to_type(s, s, 0));
    let signature = format!(
        "{}(args: {input}): Promise<{}>;",
        to_identifier(name),
        render_output_type(output_schema)
    );
    format!(
        "{}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {signature} }};\n```",
        description.trim()
    )
}

/// What `bash` resolves to in scripts (pi 1.5.2's output schema of the shell tools).
pub fn bash_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "output": {"type": "string"},
            "truncated": {"type": "boolean"},
            "full_output_path": {"type": "string"},
            "exit_code": {"type": "number"},
            "wall_time_seconds": {"type": "number"},
        },
        "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
    })
}

/// What `read` resolves to in scripts: its text, or an image block.
pub fn read_output_schema() -> Value {
    json!({
        "anyOf": [
            {"type": "string"},
            {"type": "object", "properties": {
                "type": {"const": "image"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"},
                "note": {"type": "string"},
            }, "required": ["type", "data", "mimeType"]},
        ],
    })
}
