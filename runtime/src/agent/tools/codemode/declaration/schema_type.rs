//! pi 1.5.2's `schemaToType`: a JSON schema as a TypeScript type, as codemode tool declarations
//! show it. Property descriptions and constraint tags (`@minimum 0`) become `//` comments; `$ref`s
//! are expanded (at most 32 a rendering, none inside itself). Where JavaScript shows through in
//! the text, it is kept: property names sort by UTF-16 code unit, values print as
//! `JSON.stringify` prints them (see `js_text`), lengths count UTF-16 code units.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::js_text::{
    is_line_terminator, js_number, js_stringify, js_trim, property_key, union, utf16_len,
};

/// pi's `INDENT`: the indentation of members in multi-line object types.
const INDENT: &str = "  ";
/// A line break followed by [`INDENT`] (nested multi-line members are indented once more).
const NEWLINE_INDENT: &str = "\n  ";
/// pi's `MAX_REF_EXPANSIONS`: how many `$ref`s one rendering expands at most.
const MAX_REF_EXPANSIONS: u32 = 32;
/// pi's `TAG_KEYWORDS`: the keywords shown as tags, in their order.
const TAG_KEYWORDS: [&str; 11] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];
/// pi's `LOWER_BOUNDS`: tags that show the largest of their values.
const LOWER_BOUNDS: [&str; 4] = ["minimum", "exclusiveMinimum", "minLength", "minItems"];
/// pi's `UPPER_BOUNDS`: tags that show the smallest of their values.
const UPPER_BOUNDS: [&str; 4] = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"];
/// pi's `MAX_TAG_CHARS`: longer tags (in UTF-16 code units) are left out.
const MAX_TAG_CHARS: usize = 80;
/// What a schema that says nothing renders as.
const UNKNOWN: &str = "unknown";

/// What a local `$ref` names.
pub(super) enum Resolved<'a> {
    /// A schema (an object or a boolean).
    Schema(&'a Value),
    /// JavaScript's `Object.prototype`: what `#/…/__proto__` names where the object has no own
    /// `__proto__` key (`key in current` sees the prototype's). It renders as `unknown`, but
    /// its expansion counts.
    ObjectPrototype,
}

/// One rendering's state (pi's `context`).
struct Context<'a> {
    /// The schema `$ref`s resolve against.
    root: &'a Value,
    /// The `$ref`s being expanded (a `$ref` inside its own expansion renders as `unknown`).
    resolving: HashSet<String>,
    /// How many `$ref`s this rendering expanded.
    expansions: u32,
    /// Whether constraint tags are shown.
    tags: bool,
}

/// pi's `schemaToType`: `schema` as a TypeScript type. With `max_chars`, a type longer than
/// that (in UTF-16 code units) is rendered again without constraint tags, and if that is
/// still too long the type is `unknown`.
pub(super) fn schema_to_type(schema: &Value, max_chars: Option<usize>) -> String {
    let render = |tags: bool| {
        let mut context = Context {
            root: schema,
            resolving: HashSet::new(),
            expansions: 0,
            tags,
        };
        to_type(schema, &mut context)
    };
    let tagged = render(true);
    let Some(max_chars) = max_chars else {
        return tagged;
    };
    if utf16_len(&tagged) <= max_chars {
        return tagged;
    }
    let untagged = render(false);
    if utf16_len(&untagged) <= max_chars {
        untagged
    } else {
        UNKNOWN.into()
    }
}

/// pi's `resolveSchemaRef`: what the local `$ref` `reference` (`#` or `#/…`, a JSON pointer
/// whose segments are also URI-decoded) names in `root`. Arrays are not walked into (`#/anyOf/0`
/// names nothing); what is named must be an object or a boolean.
pub(super) fn resolve<'a>(reference: &str, root: &'a Value) -> Option<Resolved<'a>> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    // `None`: `Object.prototype`.
    let mut current = Some(root);
    let pointer = reference.get(2..).unwrap_or("");
    for segment in pointer.split('/').filter(|segment| !segment.is_empty()) {
        let key = decode_uri_component(segment)?
            .replace("~1", "/")
            .replace("~0", "~");
        let Some(Value::Object(object)) = current else {
            // Not an object, or `Object.prototype`, whose keys lead to functions and `null`.
            return None;
        };
        current = match object.get(&key) {
            Some(value) => Some(value),
            None if key == "__proto__" => None,
            None => return None,
        };
    }
    match current {
        None => Some(Resolved::ObjectPrototype),
        Some(value) if value.is_boolean() || value.is_object() => Some(Resolved::Schema(value)),
        Some(_) => None,
    }
}

/// JavaScript's `decodeURIComponent`; `None` where it throws (a malformed `%` escape, or
/// escapes that are not UTF-8).
fn decode_uri_component(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut decoded = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'%' {
            let c = text.get(at..)?.chars().next()?;
            decoded.push(c);
            at += c.len_utf8();
            continue;
        }
        let lead = escaped_byte(bytes, at)?;
        at += 3;
        if lead < 0x80 {
            decoded.push(char::from(lead));
            continue;
        }
        let length = match lead {
            _ if lead & 0xE0 == 0xC0 => 2,
            _ if lead & 0xF0 == 0xE0 => 3,
            _ if lead & 0xF8 == 0xF0 => 4,
            _ => return None,
        };
        let mut sequence = vec![lead];
        for _ in 1..length {
            let continuation = escaped_byte(bytes, at)?;
            if continuation & 0xC0 != 0x80 {
                return None;
            }
            sequence.push(continuation);
            at += 3;
        }
        decoded.push_str(std::str::from_utf8(&sequence).ok()?);
    }
    Some(decoded)
}

/// The byte a `%XX` escape at `at` stands for.
fn escaped_byte(bytes: &[u8], at: usize) -> Option<u8> {
    if bytes.get(at) != Some(&b'%') {
        return None;
    }
    let high = char::from(*bytes.get(at + 1)?).to_digit(16)?;
    let low = char::from(*bytes.get(at + 2)?).to_digit(16)?;
    u8::try_from(high * 16 + low).ok()
}

/// pi's `toType`.
fn to_type(schema: &Value, context: &mut Context<'_>) -> String {
    let object = match schema {
        Value::Bool(true) => return UNKNOWN.into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(object) => object,
        _ => return UNKNOWN.into(),
    };
    if let Some(Value::String(reference)) = object.get("$ref") {
        if context.resolving.contains(reference) || context.expansions >= MAX_REF_EXPANSIONS {
            return UNKNOWN.into();
        }
        let root = context.root;
        let Some(target) = resolve(reference, root) else {
            return UNKNOWN.into();
        };
        context.expansions += 1;
        context.resolving.insert(reference.clone());
        let rendered = match target {
            Resolved::Schema(target) => to_type(target, context),
            Resolved::ObjectPrototype => UNKNOWN.into(),
        };
        context.resolving.remove(reference);
        return rendered;
    }
    if let Some(constant) = object.get("const") {
        return js_stringify(constant);
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        return union(values.iter().map(js_stringify).collect());
    }
    let variants = match (object.get("anyOf"), object.get("oneOf")) {
        (Some(Value::Array(variants)), _) | (_, Some(Value::Array(variants))) => Some(variants),
        _ => None,
    };
    if let Some(variants) = variants {
        return union(
            variants
                .iter()
                .map(|variant| to_type(variant, context))
                .collect(),
        );
    }
    if let Some(Value::Array(parts)) = object.get("allOf") {
        // Known parts, a union in parentheses.
        let parts: Vec<String> = parts
            .iter()
            .map(|part| to_type(part, context))
            .filter(|part| part != UNKNOWN)
            .map(|part| {
                if part.contains(" | ") {
                    format!("({part})")
                } else {
                    part
                }
            })
            .collect();
        return if parts.is_empty() {
            UNKNOWN.into()
        } else {
            parts.join(" & ")
        };
    }
    typed(object, object.get("type"), context)
}

/// The rest of pi's `toType`, by `type` (pi renders a `type` array as the union of the schema
/// with each of its entries as `type`).
fn typed(schema: &Map<String, Value>, kind: Option<&Value>, context: &mut Context<'_>) -> String {
    match kind {
        Some(Value::Array(kinds)) => union(
            kinds
                .iter()
                .map(|kind| typed(schema, Some(kind), context))
                .collect(),
        ),
        Some(Value::String(kind)) => match kind.as_str() {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => array_type(schema, context),
            "object" => object_type(schema, context),
            _ => UNKNOWN.into(),
        },
        None if ["properties", "additionalProperties", "required"]
            .iter()
            .any(|key| schema.contains_key(*key)) =>
        {
            object_type(schema, context)
        }
        None if schema.contains_key("items") || schema.contains_key("prefixItems") => {
            array_type(schema, context)
        }
        _ => UNKNOWN.into(),
    }
}

/// pi's `arrayType`: `Array<T>` for `items` that is a schema (even beside `prefixItems`), a
/// tuple for `prefixItems` or an `items` array, else `unknown[]`.
fn array_type(schema: &Map<String, Value>, context: &mut Context<'_>) -> String {
    if let Some(items) = schema.get("items")
        && !items.is_array()
    {
        return format!("Array<{}>", to_type(items, context));
    }
    let tuple: &[Value] = match (schema.get("prefixItems"), schema.get("items")) {
        (Some(Value::Array(tuple)), _) | (_, Some(Value::Array(tuple))) => tuple.as_slice(),
        _ => &[],
    };
    if tuple.is_empty() {
        return "unknown[]".into();
    }
    let items: Vec<String> = tuple.iter().map(|item| to_type(item, context)).collect();
    format!("[{}]", items.join(", "))
}

/// pi's `objectType`: members sorted by name, then the index signature; on one line unless a
/// member has a description or tags, which go above it as `//` lines.
fn object_type(schema: &Map<String, Value>, context: &mut Context<'_>) -> String {
    let no_properties = Map::new();
    let properties = match schema.get("properties") {
        Some(Value::Object(properties)) => properties,
        _ => &no_properties,
    };
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(required)) => required.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut entries: Vec<(&String, &Value)> = properties.iter().collect();
    entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    let mut members = Vec::with_capacity(entries.len() + 1);
    for (name, property) in &entries {
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let rendered = to_type(property, context);
        members.push(format!("{}{optional}: {rendered};", property_key(name)));
    }
    match schema.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => members.push(format!("[key: string]: {UNKNOWN};")),
        Some(additional) => {
            let rendered = to_type(additional, context);
            members.push(format!("[key: string]: {rendered};"));
        }
        None if entries.is_empty() => members.push(format!("[key: string]: {UNKNOWN};")),
        None => {}
    }
    if members.is_empty() {
        return "{}".into();
    }
    let show_tags = context.tags;
    let comments: Vec<Vec<String>> = entries
        .iter()
        .map(|(_, property)| {
            let mut lines: Vec<String> = description_of(property)
                .split(is_line_terminator)
                .map(js_trim)
                .filter(|line| !line.is_empty())
                .map(str::to_string)
                .collect();
            if show_tags {
                let tags = constraint_tags(property);
                if !tags.is_empty() {
                    lines.push(tags);
                }
            }
            lines
        })
        .collect();
    if comments.iter().all(Vec::is_empty) {
        return format!("{{ {} }}", members.join(" "));
    }
    let mut lines = vec!["{".to_string()];
    for (comment, member) in comments.iter().zip(&members) {
        for line in comment {
            lines.push(format!("{INDENT}// {line}"));
        }
        lines.push(format!("{INDENT}{}", member.replace('\n', NEWLINE_INDENT)));
    }
    // The index signature is indented, but what it spans is not (as in pi).
    for member in &members[entries.len()..] {
        lines.push(format!("{INDENT}{member}"));
    }
    lines.push("}".into());
    lines.join("\n")
}

/// pi's `descriptionOf`: a property's trimmed `description`, or nothing.
fn description_of(property: &Value) -> &str {
    match property.get("description") {
        Some(Value::String(description)) => js_trim(description),
        _ => "",
    }
}

/// What a schema says for `keyword` once draft-4 bounds are read as later drafts' (pi maps
/// `exclusiveMinimum: true` beside `minimum: n` to `exclusiveMinimum: n`, likewise maxima).
fn keyword_value<'a>(schema: &'a Map<String, Value>, keyword: &str) -> Option<&'a Value> {
    let draft4 = |flag: &str| schema.get(flag) == Some(&Value::Bool(true));
    match keyword {
        "minimum" if draft4("exclusiveMinimum") => None,
        "exclusiveMinimum" if draft4("exclusiveMinimum") => schema.get("minimum"),
        "maximum" if draft4("exclusiveMaximum") => None,
        "exclusiveMaximum" if draft4("exclusiveMaximum") => schema.get("maximum"),
        _ => schema.get(keyword),
    }
}

/// Whether a schema's `type` is or includes `integer`.
fn is_integer(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "integer",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind.as_str() == Some("integer")),
        _ => false,
    }
}

/// Whether two tag values are one in a JavaScript `Set` (numbers by value, strings by text).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::String(a), Value::String(b)) => a == b,
        _ => false,
    }
}

/// pi's `constraintTags`: a property's constraints as `@keyword value` tags on one line. A
/// nullable property (`anyOf`/`oneOf` with a single non-`null` object branch) also shows its
/// branch's constraints; of bounds, the tightest shows.
fn constraint_tags(schema: &Value) -> String {
    let Value::Object(property) = schema else {
        return String::new();
    };
    let variants: &[Value] = match (property.get("anyOf"), property.get("oneOf")) {
        (Some(Value::Array(variants)), _) | (_, Some(Value::Array(variants))) => {
            variants.as_slice()
        }
        _ => &[],
    };
    let non_null: Vec<&Value> = variants
        .iter()
        .filter(|variant| variant.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    let mut schemas = vec![property];
    if non_null.len() == 1
        && let Some(Value::Object(branch)) = non_null.first().copied()
    {
        schemas.push(branch);
    }
    let mut tags = Vec::new();
    if schemas.iter().any(|schema| is_integer(schema)) {
        tags.push("@integer".to_string());
    }
    for keyword in TAG_KEYWORDS {
        let values: Vec<&Value> = schemas
            .iter()
            .filter_map(|schema| keyword_value(schema, keyword))
            .collect();
        let lower = LOWER_BOUNDS.contains(&keyword);
        if lower || UPPER_BOUNDS.contains(&keyword) {
            let mut numbers = values.iter().filter_map(|value| value.as_f64());
            let Some(first) = numbers.next() else {
                continue;
            };
            let bound = if lower {
                numbers.fold(first, f64::max)
            } else {
                numbers.fold(first, f64::min)
            };
            tags.push(format!("@{keyword} {}", js_number(bound)));
            continue;
        }
        let mut seen: Vec<&Value> = Vec::new();
        for value in values {
            if seen.iter().any(|earlier| same_value(earlier, value)) {
                continue;
            }
            seen.push(value);
            match value {
                Value::Number(n) => {
                    tags.push(format!(
                        "@{keyword} {}",
                        js_number(n.as_f64().unwrap_or(0.0))
                    ));
                }
                Value::String(text) => tags.push(format!("@{keyword} {text}")),
                _ => {}
            }
        }
    }
    if schemas
        .iter()
        .any(|schema| schema.get("uniqueItems") == Some(&Value::Bool(true)))
    {
        tags.push("@uniqueItems".into());
    }
    match property.get("default") {
        None | Some(Value::Null) => {}
        Some(default) => tags.push(format!("@default {}", js_stringify(default))),
    }
    if property.get("deprecated") == Some(&Value::Bool(true)) {
        tags.push("@deprecated".into());
    }
    let tags: Vec<String> = tags
        .into_iter()
        .filter(|tag| utf16_len(tag) <= MAX_TAG_CHARS)
        .map(|tag| escape_line_terminators(&tag))
        .collect();
    tags.join(" ")
}

/// Line terminators in a tag as `\u000a`-style escapes.
fn escape_line_terminators(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if is_line_terminator(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    escaped
}
