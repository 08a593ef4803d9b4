//! Tests of the declarations against pi 1.5.2's own output: every expected string here was
//! printed by running pi's `renderToolSample`, `renderToolOutputType`, `toCodemodeIdentifier`
//! and `resolveSchemaRef` (copied from its bundled `chunk-4UNPP53I.js`) under node 22 on the
//! same input. Input schemas are JSON text as pi would parse it; the built-in tools' schemas are
//! the JSON of their TypeBox schemas in pi's `dist/core/tools`.

use serde_json::{Value, json};

use super::*;

/// A schema from JSON text.
fn schema(text: &str) -> Value {
    serde_json::from_str(text).expect("test schemas are JSON")
}

/// pi's `renderToolOutputType` of the schema in `text`.
fn output_type(text: &str) -> String {
    render_output_type(Some(&schema(text)))
}

#[test]
fn identifiers_are_pis() {
    for (name, identifier) in [
        ("read", "read"),
        ("mcp__server__tool-name", "mcp__server__tool_name"),
        ("9lives", "_lives"),
        ("", "_"),
        ("h\u{e9}llo", "h_llo"),
        ("a.b c", "a_b_c"),
        ("$x", "$x"),
        ("\u{1f600}x", "_x"),
        ("_", "_"),
        ("tool_1", "tool_1"),
    ] {
        assert_eq!(to_identifier(name), identifier, "{name:?}");
    }
}

/// pi's `bashOutputSchema` and `readOutputSchema`, as JSON.
const BASH_OUTPUT_SCHEMA: &str = r#"{"type":"object","required":["output","truncated","exit_code","wall_time_seconds"],"properties":{"output":{"type":"string","description":"Combined stdout and stderr, possibly truncated"},"truncated":{"type":"boolean"},"full_output_path":{"type":"string","description":"Full output, when truncated"},"exit_code":{"type":"number"},"wall_time_seconds":{"type":"number"}}}"#;
const READ_OUTPUT_SCHEMA: &str = r#"{"anyOf":[{"type":"string"},{"type":"object","required":["type","data","mimeType","note"],"properties":{"type":{"type":"string","const":"image"},"data":{"type":"string"},"mimeType":{"type":"string"},"note":{"type":"string"}}}]}"#;

#[test]
fn output_schemas_are_pis() {
    // Key order too: it is what pi's `describeFields` lists.
    assert_eq!(
        bash_output_schema().to_string(),
        schema(BASH_OUTPUT_SCHEMA).to_string()
    );
    assert_eq!(
        read_output_schema().to_string(),
        schema(READ_OUTPUT_SCHEMA).to_string()
    );
}

#[test]
fn read_sample_is_pis() {
    let description = "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.";
    let input = schema(
        r#"{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}}}"#,
    );
    let expected = concat!(
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.\n",
        "\n",
        "codemode tool declaration:\n",
        "```ts\n",
        "declare const tools: { read(args: {\n",
        "  // Maximum number of lines to read\n",
        "  limit?: number;\n",
        "  // Line number to start reading from (1-indexed)\n",
        "  offset?: number;\n",
        "  // Path to the file to read (relative or absolute)\n",
        "  path: string;\n",
        "}): Promise<string | { data: string; mimeType: string; note: string; type: \"image\"; }>; };\n",
        "```",
    );
    assert_eq!(
        render_tool_sample(
            "read",
            description,
            Some(&input),
            Some(&read_output_schema())
        ),
        expected
    );
}

#[test]
fn bash_sample_is_pis() {
    let description = "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.";
    let input = schema(
        r#"{"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"Shell command to execute"},"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}}}"#,
    );
    let expected = concat!(
        "Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.\n",
        "\n",
        "codemode tool declaration:\n",
        "```ts\n",
        "declare const tools: { bash(args: {\n",
        "  // Shell command to execute\n",
        "  command: string;\n",
        "  // Timeout in seconds (optional, no default timeout)\n",
        "  timeout?: number;\n",
        "}): Promise<{\n",
        "  exit_code: number;\n",
        "  // Full output, when truncated\n",
        "  full_output_path?: string;\n",
        "  // Combined stdout and stderr, possibly truncated\n",
        "  output: string;\n",
        "  truncated: boolean;\n",
        "  wall_time_seconds: number;\n",
        "}>; };\n",
        "```",
    );
    assert_eq!(
        render_tool_sample(
            "bash",
            description,
            Some(&input),
            Some(&bash_output_schema())
        ),
        expected
    );
}

#[test]
fn edit_sample_is_pis() {
    let description = "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.";
    let input = schema(
        r#"{"type":"object","required":["path","edits"],"properties":{"path":{"type":"string","description":"Path to the file to edit (relative or absolute)"},"edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{"oldText":{"type":"string","description":"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."},"newText":{"type":"string","description":"Replacement text for this targeted edit."}}},"description":"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."}}}"#,
    );
    let expected = concat!(
        "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.\n",
        "\n",
        "codemode tool declaration:\n",
        "```ts\n",
        "declare const tools: { edit(args: {\n",
        "  // One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.\n",
        "  edits: Array<{\n",
        "    // Replacement text for this targeted edit.\n",
        "    newText: string;\n",
        "    // Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.\n",
        "    oldText: string;\n",
        "  }>;\n",
        "  // Path to the file to edit (relative or absolute)\n",
        "  path: string;\n",
        "}): Promise<unknown>; };\n",
        "```",
    );
    assert_eq!(
        render_tool_sample("edit", description, Some(&input), None),
        expected
    );
}

#[test]
fn write_sample_is_pis() {
    let description = "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.";
    let input = schema(
        r#"{"type":"object","required":["path","content"],"properties":{"path":{"type":"string","description":"Path to the file to write (relative or absolute)"},"content":{"type":"string","description":"Content to write to the file"}}}"#,
    );
    let expected = concat!(
        "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.\n",
        "\n",
        "codemode tool declaration:\n",
        "```ts\n",
        "declare const tools: { write(args: {\n",
        "  // Content to write to the file\n",
        "  content: string;\n",
        "  // Path to the file to write (relative or absolute)\n",
        "  path: string;\n",
        "}): Promise<string>; };\n",
        "```",
    );
    assert_eq!(
        render_tool_sample(
            "write",
            description,
            Some(&input),
            Some(&json!({"type": "string"}))
        ),
        expected
    );
}

#[test]
fn samples_name_identifiers_and_trim_descriptions() {
    let input =
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
    assert_eq!(
        render_tool_sample(
            "mcp__srv__get-item.v2",
            "  Gets an item.\n\n",
            Some(&input),
            None
        ),
        concat!(
            "Gets an item.\n",
            "\n",
            "codemode tool declaration:\n",
            "```ts\n",
            "declare const tools: { mcp__srv__get_item_v2(args: { id: string; }): Promise<unknown>; };\n",
            "```",
        )
    );
    assert_eq!(
        render_tool_sample("9lives", "", None, None),
        "\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { _lives(args: unknown): Promise<unknown>; };\n```"
    );
}

#[test]
fn output_types_are_pis() {
    assert_eq!(render_output_type(None), "unknown");
    for (text, expected) in [
        (r#"{"type":"string"}"#, "string"),
        (r#"true"#, "unknown"),
        (r#"false"#, "never"),
        (r#"5"#, "unknown"),
        (r#"null"#, "unknown"),
        (r#"{}"#, "unknown"),
        (r#"{"type":"object"}"#, "{ [key: string]: unknown; }"),
    ] {
        assert_eq!(output_type(text), expected, "{text}");
    }
    assert_eq!(
        render_output_type(Some(&bash_output_schema())),
        concat!(
            "{\n",
            "  exit_code: number;\n",
            "  // Full output, when truncated\n",
            "  full_output_path?: string;\n",
            "  // Combined stdout and stderr, possibly truncated\n",
            "  output: string;\n",
            "  truncated: boolean;\n",
            "  wall_time_seconds: number;\n",
            "}",
        )
    );
    assert_eq!(
        render_output_type(Some(&read_output_schema())),
        "string | { data: string; mimeType: string; note: string; type: \"image\"; }"
    );
}

/// pi's input type over 16000 characters (18393 here) is shown without tags.
/// (The expectation is built by a loop; that the loop gives pi's output was checked in node.)
#[test]
fn long_input_types_drop_their_tags() {
    let mut properties = serde_json::Map::new();
    let mut members = String::new();
    for k in 0..250 {
        properties.insert(
            format!("field_{k:03}"),
            json!({"type": "integer", "minimum": 0, "maximum": 1000000, "description": format!("d{k}")}),
        );
        members.push_str(&format!("  // d{k}\n  field_{k:03}?: number;\n"));
    }
    let input = json!({"type": "object", "properties": properties});
    assert!(render_output_type(Some(&input)).len() > DEFAULT_INPUT_SCHEMA_MAX_CHARS);
    let expected = format!(
        "Big.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ big(args: {{\n{members}}}): Promise<unknown>; }};\n```"
    );
    assert_eq!(
        render_tool_sample("big", "Big.", Some(&input), None),
        expected
    );
}

/// Still over 16000 characters without tags (25493 here): `unknown`.
#[test]
fn too_long_input_types_are_unknown() {
    let mut properties = serde_json::Map::new();
    for k in 0..400 {
        properties.insert(
            format!("field_{k:03}"),
            json!({"type": "string", "description": format!("A fairly long description number {k}")}),
        );
    }
    let input = json!({"type": "object", "properties": properties});
    assert_eq!(
        render_tool_sample("huge", "Huge.", Some(&input), None),
        "Huge.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { huge(args: unknown): Promise<unknown>; };\n```"
    );
}

#[test]
fn resolves_refs_like_pi() {
    let root = schema(
        r#"{"$defs": {"A": {"type": "string"}, "a/b": {"type": "number"}, "a~b": {"type": "boolean"}, "\u00e9": {"type": "null"}, "T": true, "F": false}, "list": [{"type": "string"}]}"#,
    );
    for (reference, expected) in [
        ("#", Some(root.clone())),
        ("#/", Some(root.clone())),
        ("#/$defs/A", Some(json!({"type":"string"}))),
        ("#/$defs/a~1b", Some(json!({"type":"number"}))),
        ("#/$defs/a~0b", Some(json!({"type":"boolean"}))),
        ("#/%24defs/A", Some(json!({"type":"string"}))),
        ("#/$defs/%E0%A4%A", None),
        ("#/$defs/%C3%A9", Some(json!({"type":"null"}))),
        ("#/$defs//A", Some(json!({"type":"string"}))),
        ("#/list/0", None),
        ("#/$defs/A/type", None),
        ("#/$defs/T", Some(json!(true))),
        ("#/$defs/F", Some(json!(false))),
        ("#/__proto__", None /* pi: Object.prototype */),
        ("#/constructor", None),
        ("$defs/A", None),
        ("http://x#/a", None),
    ] {
        assert_eq!(
            resolve_schema_ref(reference, &root).cloned(),
            expected,
            "{reference}"
        );
    }
}
