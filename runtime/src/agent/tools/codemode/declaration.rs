//! pi 1.5.2's TypeScript declarations of tools for codemode scripts (`renderToolSample`,
//! `renderToolSignature`, `renderToolOutputType`, `toCodemodeIdentifier`, `resolveSchemaRef`),
//! and the output schemas of pi's `bash` and `read`, which scripts' calls resolve to.
//!
//! - `schema_type`: pi's `schemaToType`, a JSON schema as a TypeScript type.
//! - `js_text`: the JavaScript printing and trimming that shows in those types.

mod js_text;
mod schema_type;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod type_tests;

use serde_json::{Value, json};

use schema_type::{Resolved, resolve, schema_to_type};

/// pi's `DEFAULT_INPUT_SCHEMA_MAX_CHARS`: an input type longer than this (in UTF-16 code
/// units) is shown without constraint tags, and if still longer, as `unknown`.
pub const DEFAULT_INPUT_SCHEMA_MAX_CHARS: usize = 16_000;

/// pi's `toCodemodeIdentifier`: `name` as a JavaScript identifier (the key of `tools`):
/// characters other than ASCII letters, digits, `_` and `$` (and a leading digit) become `_`;
/// an empty name is `_`.
pub fn to_identifier(name: &str) -> String {
    let mut identifier = String::with_capacity(name.len());
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

/// pi's `resolveSchemaRef`: the schema (an object or a boolean) the local `$ref` `reference`
/// (`#` or `#/…`, a JSON pointer whose segments are also URI-decoded) names in `root`. Arrays
/// are not walked into. Where pi's JavaScript finds `Object.prototype` (`#/__proto__`), this
/// gives `None`.
pub fn resolve_schema_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    match resolve(reference, root)? {
        Resolved::Schema(schema) => Some(schema),
        Resolved::ObjectPrototype => None,
    }
}

/// pi's `renderToolOutputType`: what a call resolves to, as a TypeScript type (`unknown`
/// without a schema); never shortened.
pub fn render_output_type(schema: Option<&Value>) -> String {
    match schema {
        Some(schema) => schema_to_type(schema, None),
        None => "unknown".into(),
    }
}

/// pi's `renderToolSignature` (default options): `name(args: Input): Promise<Output>;`, the
/// input type held to [`DEFAULT_INPUT_SCHEMA_MAX_CHARS`].
pub fn render_tool_signature(
    name: &str,
    input_schema: Option<&Value>,
    output_schema: Option<&Value>,
) -> String {
    let input = match input_schema {
        Some(schema) => schema_to_type(schema, Some(DEFAULT_INPUT_SCHEMA_MAX_CHARS)),
        None => "unknown".into(),
    };
    format!(
        "{}(args: {input}): Promise<{}>;",
        to_identifier(name),
        render_output_type(output_schema)
    )
}

/// pi's `renderToolSample` (default options): the trimmed description, then the tool's
/// declaration in a `ts` block.
pub fn render_tool_sample(
    name: &str,
    description: &str,
    input_schema: Option<&Value>,
    output_schema: Option<&Value>,
) -> String {
    let signature = render_tool_signature(name, input_schema, output_schema);
    format!(
        "{}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {signature} }};\n```",
        js_text::js_trim(description)
    )
}

/// What pi's `bash` resolves to in scripts: its `outputSchema`, `bashOutputSchema` in pi
/// 1.5.2's `dist/core/tools/bash.js` (bundled in `chunk-VEJDBY3O.js`), a TypeBox
/// `Type.Object` whose JSON is this.
pub fn bash_output_schema() -> Value {
    json!({
        "type": "object",
        "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
        "properties": {
            "output": {
                "type": "string",
                "description": "Combined stdout and stderr, possibly truncated"
            },
            "truncated": {"type": "boolean"},
            "full_output_path": {"type": "string", "description": "Full output, when truncated"},
            "exit_code": {"type": "number"},
            "wall_time_seconds": {"type": "number"}
        }
    })
}

/// What pi's `read` resolves to in scripts: its `outputSchema`, `readOutputSchema` in pi
/// 1.5.2's `dist/core/tools/read.js` (bundled in `chunk-VEJDBY3O.js`), a TypeBox `Type.Union`
/// of the text and an image block (all four of its fields required), whose JSON is this.
pub fn read_output_schema() -> Value {
    json!({
        "anyOf": [
            {"type": "string"},
            {
                "type": "object",
                "required": ["type", "data", "mimeType", "note"],
                "properties": {
                    "type": {"type": "string", "const": "image"},
                    "data": {"type": "string"},
                    "mimeType": {"type": "string"},
                    "note": {"type": "string"}
                }
            }
        ]
    })
}
