//! Tests of pi's `schemaToType` features against pi 1.5.2's own output: every expected string
//! here was printed by running pi's `renderToolOutputType` (copied from its bundled
//! `chunk-4UNPP53I.js`) under node 22 on the same JSON text.

use super::render_output_type;

/// pi's `renderToolOutputType` of the schema in `text`.
fn output_type(text: &str) -> String {
    let schema = serde_json::from_str(text).expect("test schemas are JSON");
    render_output_type(Some(&schema))
}

/// An MCP-style schema with `$defs`: `$ref`s expand (escaped, URI-encoded, empty segments), recursion and what does not resolve are `unknown`.
#[test]
fn refs_expand_like_pis() {
    let text = r##"{
  "type": "object",
  "$defs": {
    "Address": {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["street"]},
    "Node": {"type": "object", "properties": {"value": {"type": "number"}, "next": {"$ref": "#/$defs/Node"}}},
    "a/b": {"type": "boolean"},
    "a~b": {"type": "integer"}
  },
  "properties": {
    "home": {"$ref": "#/$defs/Address"},
    "work": {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}], "description": "Work address"},
    "list": {"$ref": "#/$defs/Node"},
    "missing": {"$ref": "#/$defs/Nope"},
    "external": {"$ref": "https://example.com/schema"},
    "slash": {"$ref": "#/$defs/a~1b"},
    "tilde": {"$ref": "#/$defs/a~0b"},
    "pct": {"$ref": "#/%24defs/a~1b"},
    "badPct": {"$ref": "#/$defs/%E0%A4%A"},
    "viaArray": {"$ref": "#/properties/work/anyOf/0"},
    "emptySeg": {"$ref": "#/$defs//a~0b"},
    "sibling": {"$ref": "#/$defs/a~1b", "type": "string"},
    "nonString": {"$ref": 5, "type": "string"}
  },
  "required": ["home"]
}"##;
    let expected = concat!(
        "{\n",
        "  badPct?: unknown;\n",
        "  emptySeg?: number;\n",
        "  external?: unknown;\n",
        "  home: {\n",
        "    street: string;\n",
        "    // @pattern ^[0-9]{5}$\n",
        "    zip?: string;\n",
        "  };\n",
        "  list?: { next?: unknown; value?: number; };\n",
        "  missing?: unknown;\n",
        "  nonString?: string;\n",
        "  pct?: boolean;\n",
        "  sibling?: boolean;\n",
        "  slash?: boolean;\n",
        "  tilde?: number;\n",
        "  viaArray?: unknown;\n",
        "  // Work address\n",
        "  work?: {\n",
        "    street: string;\n",
        "    // @pattern ^[0-9]{5}$\n",
        "    zip?: string;\n",
        "  } | null;\n",
        "}",
    );
    assert_eq!(output_type(text), expected);
}

/// `#` names the whole schema; inside its own expansion it is `unknown`.
#[test]
fn root_ref_expands_once() {
    let text = r##"{"type": "object", "properties": {"child": {"$ref": "#"}, "name": {"type": "string"}}}"##;
    let expected = "{ child?: { child?: unknown; name?: string; }; name?: string; }";
    assert_eq!(output_type(text), expected);
}

/// At most 32 `$ref`s expand in one rendering; `#/__proto__` (JavaScript's `Object.prototype`) is `unknown` but counts.
#[test]
fn ref_expansions_stop_at_32() {
    let text = r##"{"type": "object", "$defs": {"S": {"type": "string"}}, "properties": {"p00": {"$ref": "#/__proto__"}, "p01": {"$ref": "#/$defs/S"}, "p02": {"$ref": "#/$defs/S"}, "p03": {"$ref": "#/$defs/S"}, "p04": {"$ref": "#/$defs/S"}, "p05": {"$ref": "#/$defs/S"}, "p06": {"$ref": "#/$defs/S"}, "p07": {"$ref": "#/$defs/S"}, "p08": {"$ref": "#/$defs/S"}, "p09": {"$ref": "#/$defs/S"}, "p10": {"$ref": "#/$defs/S"}, "p11": {"$ref": "#/$defs/S"}, "p12": {"$ref": "#/$defs/S"}, "p13": {"$ref": "#/$defs/S"}, "p14": {"$ref": "#/$defs/S"}, "p15": {"$ref": "#/$defs/S"}, "p16": {"$ref": "#/$defs/S"}, "p17": {"$ref": "#/$defs/S"}, "p18": {"$ref": "#/$defs/S"}, "p19": {"$ref": "#/$defs/S"}, "p20": {"$ref": "#/$defs/S"}, "p21": {"$ref": "#/$defs/S"}, "p22": {"$ref": "#/$defs/S"}, "p23": {"$ref": "#/$defs/S"}, "p24": {"$ref": "#/$defs/S"}, "p25": {"$ref": "#/$defs/S"}, "p26": {"$ref": "#/$defs/S"}, "p27": {"$ref": "#/$defs/S"}, "p28": {"$ref": "#/$defs/S"}, "p29": {"$ref": "#/$defs/S"}, "p30": {"$ref": "#/$defs/S"}, "p31": {"$ref": "#/$defs/S"}, "p32": {"$ref": "#/$defs/S"}, "p33": {"$ref": "#/$defs/S"}}}"##;
    let expected = "{ p00?: unknown; p01?: string; p02?: string; p03?: string; p04?: string; p05?: string; p06?: string; p07?: string; p08?: string; p09?: string; p10?: string; p11?: string; p12?: string; p13?: string; p14?: string; p15?: string; p16?: string; p17?: string; p18?: string; p19?: string; p20?: string; p21?: string; p22?: string; p23?: string; p24?: string; p25?: string; p26?: string; p27?: string; p28?: string; p29?: string; p30?: string; p31?: string; p32?: unknown; p33?: unknown; }";
    assert_eq!(output_type(text), expected);
}

/// Descriptions and constraint tags as comments: bounds (draft-4 too), nullable branches, long tags left out, line terminators escaped.
#[test]
fn constraint_tags_are_pis() {
    let text = r#"{"type": "object", "properties": {
  "count": {"type": "integer", "minimum": 0, "maximum": 100, "default": 10, "description": "How many"},
  "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.01},
  "old": {"type": "number", "minimum": 5, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": true},
  "oldFalse": {"type": "number", "minimum": 5, "exclusiveMinimum": false},
  "name": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+\n$", "format": "email", "deprecated": true},
  "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5, "uniqueItems": true},
  "nullable": {"anyOf": [{"type": "integer", "minimum": 3, "maximum": 20, "multipleOf": 2}, {"type": "null"}], "minimum": 1, "maximum": 10, "multipleOf": 2, "uniqueItems": false},
  "twoBranches": {"oneOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "uri"}]},
  "long": {"type": "string", "pattern": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "format": "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", "description": "Line one\r\nLine two\u2028  line three  \n\n"},
  "def": {"type": "object", "default": {"b": 1, "a": [1.5, "x\u2028"], "10": true, "2": null, "4294967295": 0, "01": 1}},
  "nul": {"type": "string", "default": null},
  "types": {"type": ["integer", "null"], "minimum": -0.0, "maximum": 1e21, "multipleOf": 1e-7},
  "strMin": {"type": "number", "minimum": "3", "multipleOf": "2"},
  "bigMax": {"type": "number", "maximum": 12345678901234567890},
  "dup": {"multipleOf": 3, "anyOf": [{"multipleOf": 3.0}, {"type": "null"}], "pattern": "p", "format": "f"},
  "dup2": {"pattern": "p", "anyOf": [{"pattern": "q", "format": 5}, {"type": "null"}]},
  "arrayBranch": {"anyOf": [[1], {"type": "null"}], "minimum": 1},
  "noNull": {"anyOf": [null, {"type": "null"}], "minimum": 2},
  "justDesc": {"type": "string", "description": "   "}
}}"#;
    let expected = concat!(
        "{\n",
        "  // @minimum 1\n",
        "  arrayBranch?: unknown;\n",
        "  // @maximum 12345678901234567000\n",
        "  bigMax?: number;\n",
        "  // How many\n",
        "  // @integer @minimum 0 @maximum 100 @default 10\n",
        "  count?: number;\n",
        "  // @default {\"2\":null,\"10\":true,\"b\":1,\"a\":[1.5,\"x\\u2028\"],\"4294967295\":0,\"01\":1}\n",
        "  def?: { [key: string]: unknown; };\n",
        "  // @multipleOf 3 @pattern p @format f\n",
        "  dup?: unknown;\n",
        "  // @pattern p @pattern q @format 5\n",
        "  dup2?: unknown;\n",
        "  justDesc?: string;\n",
        "  // Line one\n",
        "  // Line two\n",
        "  // line three\n",
        "  long?: string;\n",
        "  // @minLength 1 @maxLength 64 @pattern ^[a-z]+\\u000a$ @format email @deprecated\n",
        "  name?: string;\n",
        "  // @minimum 2\n",
        "  noNull?: unknown;\n",
        "  nul?: string;\n",
        "  // @integer @minimum 3 @maximum 10 @multipleOf 2\n",
        "  nullable?: number | null;\n",
        "  // @exclusiveMinimum 5 @exclusiveMaximum 9\n",
        "  old?: number;\n",
        "  // @minimum 5\n",
        "  oldFalse?: number;\n",
        "  // @exclusiveMinimum 0 @exclusiveMaximum 1 @multipleOf 0.01\n",
        "  ratio?: number;\n",
        "  // @multipleOf 2\n",
        "  strMin?: number;\n",
        "  // @minItems 1 @maxItems 5 @uniqueItems\n",
        "  tags?: Array<string>;\n",
        "  twoBranches?: string;\n",
        "  // @integer @minimum 0 @maximum 1e+21 @multipleOf 1e-7\n",
        "  types?: number | null;\n",
        "}",
    );
    assert_eq!(output_type(text), expected);
}

/// `items` schemas, tuples (`prefixItems`, `items` arrays), and arrays of nothing in particular.
#[test]
fn arrays_and_tuples_are_pis() {
    let text = r#"{"type": "object", "properties": {
  "a": {"type": "array"},
  "b": {"type": "array", "items": {"type": "number"}},
  "c": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}], "items": false},
  "c2": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
  "d": {"items": [{"type": "boolean"}, {"const": "x"}]},
  "e": {"type": "array", "items": []},
  "f": {"prefixItems": []},
  "g": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}},
  "h": {"type": "array", "items": null},
  "i": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string", "description": "K"}}}}
}, "required": ["a", "b", "c", "c2", "d", "e", "f", "g", "h", "i"]}"#;
    let expected = concat!(
        "{ a: unknown[]; b: Array<number>; c: Array<never>; c2: [string, number]; d: [boolean, \"x\"]; e: unknown[]; f: unknown[]; g: Array<string | number>; h: Array<unknown>; i: Array<{\n",
        "  // K\n",
        "  k?: string;\n",
        "}>; }",
    );
    assert_eq!(output_type(text), expected);
}

/// `const` and `enum` values as `JSON.stringify` prints them, unions, intersections, `type` lists.
#[test]
fn enums_consts_and_unions_are_pis() {
    let text = r##"{"type": "object", "properties": {
  "mode": {"enum": ["a", "b", "a", 1, null, true, {"x": 1}]},
  "empty": {"enum": []},
  "c": {"const": 1.0},
  "big": {"const": 12345678901234567890},
  "tiny": {"const": 1e-7},
  "small": {"const": 0.000001},
  "huge": {"const": 1e21},
  "neg0": {"const": -0.0},
  "frac": {"const": 0.1},
  "obj": {"const": {"z": 1, "1": 2, "a": [true, -2.5e-8]}},
  "str": {"const": "q\"\\\n\u0001\u001f\u007f\u2028/"},
  "nullConst": {"const": null},
  "any": {"anyOf": [{"type": "string"}, {}]},
  "one": {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "string"}]},
  "anyNotArray": {"anyOf": {"type": "string"}, "oneOf": [{"type": "boolean"}]},
  "all": {"allOf": [{"anyOf": [{"type": "string"}, {"type": "number"}]}, {"type": "object", "properties": {"k": {"type": "string"}}}, {}]},
  "allUnknown": {"allOf": [{}, true]},
  "allEmpty": {"allOf": []},
  "nullable": {"type": ["string", "null"]},
  "multi": {"type": ["string", "integer", "bogus"]},
  "nested": {"type": [["string"], "number", null, 7]},
  "never": false,
  "anything": true,
  "weird": {"type": "date"},
  "nulltype": {"type": null},
  "enumFirst": {"enum": ["x"], "const": "y"},
  "constFirst": {"const": "y", "$ref": "#/nope"}
}}"##;
    let expected = concat!(
        "{\n",
        "  all?: (string | number) & { k?: string; };\n",
        "  allEmpty?: unknown;\n",
        "  allUnknown?: unknown;\n",
        "  any?: unknown;\n",
        "  anyNotArray?: boolean;\n",
        "  anything?: unknown;\n",
        "  big?: 12345678901234567000;\n",
        "  c?: 1;\n",
        "  constFirst?: unknown;\n",
        "  empty?: never;\n",
        "  enumFirst?: \"y\";\n",
        "  frac?: 0.1;\n",
        "  huge?: 1e+21;\n",
        "  mode?: \"a\" | \"b\" | 1 | null | true | {\"x\":1};\n",
        "  // @integer\n",
        "  multi?: unknown;\n",
        "  neg0?: 0;\n",
        "  nested?: unknown;\n",
        "  never?: never;\n",
        "  nullConst?: null;\n",
        "  nullable?: string | null;\n",
        "  nulltype?: unknown;\n",
        "  obj?: {\"1\":2,\"z\":1,\"a\":[true,-2.5e-8]};\n",
        "  one?: string | number;\n",
        "  small?: 0.000001;\n",
        "  str?: \"q\\\"\\\\\\n\\u0001\\u001f\u{7f}\u{2028}/\";\n",
        "  tiny?: 1e-7;\n",
        "  weird?: unknown;\n",
        "}",
    );
    assert_eq!(output_type(text), expected);
}

/// Index signatures, empty and closed objects, quoted member names, members sorted by UTF-16 code unit.
#[test]
fn object_shapes_and_keys_are_pis() {
    let text = r#"{"type": "object", "properties": {
  "free": {"type": "object"},
  "closed": {"type": "object", "additionalProperties": false},
  "map": {"type": "object", "additionalProperties": {"type": "number"}},
  "mapTrue": {"type": "object", "additionalProperties": true},
  "mapNull": {"additionalProperties": null},
  "mixed": {"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": {"type": "object", "properties": {"x": {"type": "number", "description": "X coord"}}}},
  "implicit": {"required": ["q"]},
  "emptyProps": {"type": "object", "properties": {}},
  "propsArray": {"type": "object", "properties": [{"type": "string"}]},
  "my-key": {"type": "string"},
  "1abc": {"type": "string"},
  "": {"type": "string"},
  "$ok_1": {"type": "string"},
  "Zed": {"type": "boolean"},
  "\u00e9moji\ud83d\ude00": {"type": "string"},
  "\ud83d\ude00a": {"type": "string"},
  "\uff5e": {"type": "string"},
  "line\nkey": {"type": "string"}
}, "required": ["my-key", "missing", 5, "Zed"]}"#;
    let expected = concat!(
        "{ \"\"?: string; $ok_1?: string; \"1abc\"?: string; Zed: boolean; closed?: {}; emptyProps?: { [key: string]: unknown; }; free?: { [key: string]: unknown; }; implicit?: { [key: string]: unknown; }; \"line\\nkey\"?: string; map?: { [key: string]: number; }; mapNull?: { [key: string]: unknown; }; mapTrue?: { [key: string]: unknown; }; mixed?: { id?: string; [key: string]: {\n",
        "  // X coord\n",
        "  x?: number;\n",
        "}; }; \"my-key\": string; propsArray?: { [key: string]: unknown; }; \"\u{e9}moji\u{1f600}\"?: string; \"\u{1f600}a\"?: string; \"\u{ff5e}\"?: string; }",
    );
    assert_eq!(output_type(text), expected);
}

/// Multi-line members nest one indent deeper; what an index signature spans does not (as in pi).
#[test]
fn nested_comments_are_indented_like_pis() {
    let text = r#"{"type": "object", "description": "top", "properties": {
  "outer": {"type": "object", "description": "Outer thing", "properties": {"inner": {"type": "string", "description": "Inner\nsecond"}, "plain": {"type": "number"}}, "additionalProperties": {"type": "object", "properties": {"deep": {"type": "string", "description": "Deep"}}}},
  "other": {"type": "object", "properties": {"x": {"type": "object", "properties": {"y": {"type": "string", "description": "why"}}}}}
}, "additionalProperties": {"type": "object", "properties": {"z": {"type": "string", "description": "zz"}}}}"#;
    let expected = concat!(
        "{\n",
        "  other?: { x?: {\n",
        "    // why\n",
        "    y?: string;\n",
        "  }; };\n",
        "  // Outer thing\n",
        "  outer?: {\n",
        "    // Inner\n",
        "    // second\n",
        "    inner?: string;\n",
        "    plain?: number;\n",
        "    [key: string]: {\n",
        "    // Deep\n",
        "    deep?: string;\n",
        "  };\n",
        "  };\n",
        "  [key: string]: {\n",
        "  // zz\n",
        "  z?: string;\n",
        "};\n",
        "}",
    );
    assert_eq!(output_type(text), expected);
}
