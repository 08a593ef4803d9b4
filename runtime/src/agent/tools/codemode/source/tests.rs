//! Tests of the options line against pi 1.5.2's own behaviour: every expectation here was
//! printed by running pi's `parseCodemodeSource` (copied from its bundled `chunk-4UNPP53I.js`)
//! under node 22, pi's runtime, on the same input; the `JSON.parse` cases are node 22's own.

use super::{ScriptSource, parse_source};

/// A source pi accepts.
fn ok(
    code: &str,
    max_output_tokens: Option<u64>,
    timeout_ms: Option<u64>,
) -> Result<ScriptSource, String> {
    Ok(ScriptSource {
        code: code.to_string(),
        max_output_tokens,
        timeout_ms,
    })
}

/// No options line: the input is the code, as it is; white space alone is an error.
#[test]
fn sources_without_options_are_kept_whole() {
    for (input, expected) in [
        (
            "console.log(1)",
            ok("console.log(1)", None, None),
        ),
        (
            "",
            Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into()),
        ),
        (
            "  \n\t ",
            Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into()),
        ),
        (
            "\u{a0}\u{feff}\u{2028}",
            Err("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.".into()),
        ),
        (
            "\u{85}x",
            ok("\u{85}x", None, None),
        ),
        (
            "//@options: {}\nx",
            ok("//@options: {}\nx", None, None),
        ),
        (
            "\u{85}// @options: {\"timeout_ms\": 10}\nx",
            ok("\u{85}// @options: {\"timeout_ms\": 10}\nx", None, None),
        ),
        (
            "x\n",
            ok("x\n", None, None),
        ),
        (
            "return 1 // @options: {}",
            ok("return 1 // @options: {}", None, None),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// A first-line options line: its options, and the code after it (from its line break).
#[test]
fn options_lines_are_read() {
    for (input, expected) in [
        (
            "// @options: {\"max_output_tokens\": 1000}\nconsole.log(1)",
            ok("\nconsole.log(1)", Some(1000), None),
        ),
        (
            "// @options: {\"max_output_tokens\": 1000, \"timeout_ms\": 5000}\r\nreturn 1;\n",
            ok("\nreturn 1;\n", Some(1000), Some(5000)),
        ),
        (
            "  // @options: {\"timeout_ms\": 2147483647}\nx",
            ok("\nx", None, Some(2147483647)),
        ),
        (
            "// @options:{\"max_output_tokens\":0}\nx",
            ok("\nx", Some(0), None),
        ),
        (
            "// @options: {\"max_output_tokens\": 1e3, \"timeout_ms\": 2.0}\nx",
            ok("\nx", Some(1000), Some(2)),
        ),
        (
            "// @options: {\"max_output_tokens\": -0}\nx",
            ok("\nx", Some(0), None),
        ),
        ("// @options: {}\nx", ok("\nx", None, None)),
        (
            "// @options: {\"max_output_tokens\": 9007199254740991}\nx",
            ok("\nx", Some(9007199254740991), None),
        ),
        (
            "\u{a0}\u{feff}// @options: {\"timeout_ms\": 10}\nx",
            ok("\nx", None, Some(10)),
        ),
        (
            "// @options: {\"timeout_ms\": 10}\u{a0}\nx",
            ok("\nx", None, Some(10)),
        ),
        (
            "// @options: {\"timeout_ms\": 10}\r\r\nx",
            ok("\nx", None, Some(10)),
        ),
        (
            "// @options:  \t{\"timeout_ms\": 1}\t \r\n\ny",
            ok("\n\ny", None, Some(1)),
        ),
        (
            "// @options: {\"max_output_tokens\": 12}\nconst s = \"// @options: {}\";",
            ok("\nconst s = \"// @options: {}\";", Some(12), None),
        ),
        (
            "// @options: {\"max_output_tokens\": 5, \"max_output_tokens\": 7}\nx",
            ok("\nx", Some(7), None),
        ),
        (
            "// @options: {\"timeout_ms\": 1E+3}\nx",
            ok("\nx", None, Some(1000)),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// An options line anywhere but first is an error, whatever is on the first.
#[test]
fn options_lines_must_come_first() {
    for (input, expected) in [
        (
            "const a = 1;\n// @options: {\"max_output_tokens\": 10}\nx",
            Err(
                "The // @options: line must be the first line of the input; found one on line 2"
                    .into(),
            ),
        ),
        (
            "const a = 1;\n   // @options: {}",
            Err(
                "The // @options: line must be the first line of the input; found one on line 2"
                    .into(),
            ),
        ),
        (
            "// @options: {\"max_output_tokens\": 10}\n// @options: {}\nx",
            Err(
                "The // @options: line must be the first line of the input; found one on line 2"
                    .into(),
            ),
        ),
        (
            "x\r\n// @options: {}\r\n",
            Err(
                "The // @options: line must be the first line of the input; found one on line 2"
                    .into(),
            ),
        ),
        (
            "a\nb\n\t// @options: nonsense",
            Err(
                "The // @options: line must be the first line of the input; found one on line 3"
                    .into(),
            ),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// An options line with no JavaScript after it is an error (checked before its JSON).
#[test]
fn options_lines_need_code_after_them() {
    for (input, expected) in [
        (
            "// @options: {\"max_output_tokens\": 10}",
            Err(
                "The @options line must be followed by JavaScript source on subsequent lines"
                    .into(),
            ),
        ),
        (
            "// @options: {\"max_output_tokens\": 10}\n   \n\t",
            Err(
                "The @options line must be followed by JavaScript source on subsequent lines"
                    .into(),
            ),
        ),
        (
            "// @options: {\"timeout_ms\": 10}\n \u{feff}\u{2028}",
            Err(
                "The @options line must be followed by JavaScript source on subsequent lines"
                    .into(),
            ),
        ),
        (
            "// @options: not json\n",
            Err(
                "The @options line must be followed by JavaScript source on subsequent lines"
                    .into(),
            ),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// Options that are not JSON, or not an object: pi's message, with node 22's `JSON.parse` error.
#[test]
fn bad_options_json_is_reported_like_pi() {
    for (input, expected) in [
        (
            "// @options:\nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options:    \nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options: [1]\nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options: null\nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options: 5\nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options: \"str\"\nx",
            Err("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`".into()),
        ),
        (
            "// @options: {max_output_tokens: 10}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Expected property name or '}' in JSON at position 1 (line 1 column 2)".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 10,}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Expected double-quoted property name in JSON at position 25 (line 1 column 26)".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 10\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Expected ',' or '}' after property value in JSON at position 24 (line 1 column 25)".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 10} trailing\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected non-whitespace character after JSON at position 26 (line 1 column 27)".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 100000000, \"timeout_ms\": x}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected token 'x', ...\"eout_ms\": x}\" is not valid JSON".into()),
        ),
        (
            "// @options: undefined\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: \"undefined\" is not valid JSON".into()),
        ),
        (
            "// @options: {'a': 1}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Expected property name or '}' in JSON at position 1 (line 1 column 2)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 1000} // comment\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected non-whitespace character after JSON at position 21 (line 1 column 22)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 01}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected number in JSON at position 16 (line 1 column 17)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 1.}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unterminated fractional number in JSON at position 17 (line 1 column 18)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 1e}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Exponent part is missing a number in JSON at position 17 (line 1 column 18)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": -}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: No number after minus sign in JSON at position 16 (line 1 column 17)".into()),
        ),
        (
            "// @options: {\"a\\x\": 1}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Bad escaped character in JSON at position 4 (line 1 column 5)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": tru}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected token '}', \"{\"timeout_ms\": tru}\" is not valid JSON".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 5, \"max_output_tokens\" 5}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Expected ':' after property name in JSON at position 38 (line 1 column 39)".into()),
        ),
        (
            "// @options: {\"k\": \"\\u12G4\"}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Bad Unicode escape in JSON at position 11 (line 1 column 12)".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 5}\r{\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected non-whitespace character after JSON at position 18 (line 2 column 1)".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": \u{1f600}}\nx",
            Err("@options must be valid JSON with supported fields `max_output_tokens` and `timeout_ms`: Unexpected token '\u{fffd}', ...\"_tokens\": \u{1f600}}\" is not valid JSON".into()),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// Keys other than the two are errors, the first in `Object.keys` order named (array indices first).
#[test]
fn unknown_options_are_errors() {
    for (input, expected) in [
        (
            "// @options: {\"verbose\": true}\nx",
            Err(
                "@options only supports `max_output_tokens` and `timeout_ms`; got `verbose`".into(),
            ),
        ),
        (
            "// @options: {\"max_output_tokens\": 10, \"zeta\": 1, \"7\": 2}\nx",
            Err("@options only supports `max_output_tokens` and `timeout_ms`; got `7`".into()),
        ),
        (
            "// @options: {\"__proto__\": 1}\nx",
            Err(
                "@options only supports `max_output_tokens` and `timeout_ms`; got `__proto__`"
                    .into(),
            ),
        ),
        (
            "// @options: {\"max_output_tokens\": 10, \"a\\u00e9\": 1}\nx",
            Err(
                "@options only supports `max_output_tokens` and `timeout_ms`; got `a\u{e9}`".into(),
            ),
        ),
        (
            "// @options: {\"Timeout_ms\": 1}\nx",
            Err(
                "@options only supports `max_output_tokens` and `timeout_ms`; got `Timeout_ms`"
                    .into(),
            ),
        ),
        (
            "// @options: {\"b\": 1, \"a\": 2, \"10\": 3, \"2\": 4}\nx",
            Err("@options only supports `max_output_tokens` and `timeout_ms`; got `2`".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 0, \"x\": 1}\nx",
            Err("@options only supports `max_output_tokens` and `timeout_ms`; got `x`".into()),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}

/// Values of the wrong type or range: `max_output_tokens` before `timeout_ms`, the last of a repeated key counted.
#[test]
fn option_values_are_checked_like_pi() {
    for (input, expected) in [
        (
            "// @options: {\"max_output_tokens\": -1}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 1.5}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": \"10\"}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": null}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 9007199254740992}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 1e400}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": [1]}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 0}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 2147483648}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"timeout_ms\": -5}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"timeout_ms\": true}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 2.5}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"timeout_ms\": -0}\nx",
            Err("@options field `timeout_ms` must be a positive integer up to 2147483647".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": 5, \"max_output_tokens\": -5}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"max_output_tokens\": -5, \"timeout_ms\": 0}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
        (
            "// @options: {\"timeout_ms\": 0, \"max_output_tokens\": -5}\nx",
            Err("@options field `max_output_tokens` must be a non-negative safe integer".into()),
        ),
    ] {
        assert_eq!(parse_source(input), expected, "{input:?}");
    }
}
