//! Tests of the `JSON.parse` port against node 22 (pi's runtime): every expected message here
//! is the `SyntaxError` message node 22 gave for the same text.

use super::json_parse::{Parsed, parse};

/// node 22's `JSON.parse` messages, positions (in UTF-16 code units), lines and columns.
#[test]
fn json_errors_are_node_22s() {
    for (text, message) in [
        (
            "{",
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
        (
            "{x}",
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
        ),
        (
            "{\"a\":1,}",
            "Expected double-quoted property name in JSON at position 7 (line 1 column 8)",
        ),
        ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
        (
            "[1 2]",
            "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
        ),
        (
            "{\"a\" 1}",
            "Expected ':' after property name in JSON at position 5 (line 1 column 6)",
        ),
        (
            "{\"a\":1} x",
            "Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)",
        ),
        ("tru", "Unexpected end of JSON input"),
        (
            "t1",
            "Unexpected number in JSON at position 1 (line 1 column 2)",
        ),
        ("nul", "Unexpected end of JSON input"),
        (
            "\"abc",
            "Unterminated string in JSON at position 4 (line 1 column 5)",
        ),
        (
            "\"a\nb\"",
            "Bad control character in string literal in JSON at position 2 (line 1 column 3)",
        ),
        (
            "\"\\x\"",
            "Bad escaped character in JSON at position 2 (line 1 column 3)",
        ),
        (
            "\"\\u12G4\"",
            "Bad Unicode escape in JSON at position 5 (line 1 column 6)",
        ),
        (
            "-",
            "No number after minus sign in JSON at position 1 (line 1 column 2)",
        ),
        (
            "1e",
            "Exponent part is missing a number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "1.",
            "Unterminated fractional number in JSON at position 2 (line 1 column 3)",
        ),
        (
            "01",
            "Unexpected number in JSON at position 1 (line 1 column 2)",
        ),
        ("abc", "Unexpected token 'a', \"abc\" is not valid JSON"),
        ("NaN", "\"NaN\" is not valid JSON"),
        ("Infinity", "\"Infinity\" is not valid JSON"),
        ("[object Object]", "\"[object Object]\" is not valid JSON"),
        (
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "Unexpected token 'x', \"xxxxxxxxxx\"... is not valid JSON",
        ),
        (
            "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":x}",
            "Unexpected token 'x', ...\"\"e\":5,\"f\":x}\" is not valid JSON",
        ),
        (
            "{\"a\":\n1,\nx}",
            "Expected double-quoted property name in JSON at position 9 (line 3 column 1)",
        ),
        (
            "{\"a\":\r\n1,\rx}",
            "Expected double-quoted property name in JSON at position 10 (line 3 column 1)",
        ),
        (
            "{\"a\":1 2}",
            "Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)",
        ),
        (
            "[1] 2",
            "Unexpected non-whitespace character after JSON at position 4 (line 1 column 5)",
        ),
        (
            "{\"a\":1}}",
            "Unexpected non-whitespace character after JSON at position 7 (line 1 column 8)",
        ),
        (
            "\u{e9}",
            "Unexpected token '\u{e9}', \"\u{e9}\" is not valid JSON",
        ),
        (
            "{\"a\":\u{e9}}",
            "Unexpected token '\u{e9}', \"{\"a\":\u{e9}}\" is not valid JSON",
        ),
        (
            "[1,2,3,4,5,6,7,8,9,10,11,12,\u{1f600}]",
            "Unexpected token '\u{fffd}', ...\",10,11,12,\u{1f600}]\" is not valid JSON",
        ),
        (
            "{\"a\":\"\\\u{1f600}\"}",
            "Unexpected token '\u{fffd}', \"{\"a\":\"\\\u{1f600}\"}\" is not valid JSON",
        ),
        ("\"\\", "Unexpected end of JSON input"),
        (
            "\"\\u12",
            "Bad Unicode escape in JSON at position 5 (line 1 column 6)",
        ),
        (
            "{\"a\":1",
            "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)",
        ),
        ("[", "Unexpected end of JSON input"),
        ("", "Unexpected end of JSON input"),
        (
            "{\"a\":{\"b\":[1,{\"c\":x}]}}",
            "Unexpected token 'x', ...\"\":[1,{\"c\":x}]}}\" is not valid JSON",
        ),
        (
            &*format!("{}{}", "[".repeat(5000), "]".repeat(4999)),
            "Expected ',' or ']' after array element in JSON at position 9999 (line 1 column 10000)",
        ),
    ] {
        assert_eq!(parse(text), Err(message.to_string()), "{text:?}");
    }
}

/// What pi's checks read of parsed JSON: objects' keys in `Object.keys` order, number values.
#[test]
fn json_values_are_read_like_javascript() {
    assert_eq!(
        parse("{\"b\":1,\"a\":\"x\",\"10\":2.5,\"2\":null,\"b\":3}"),
        Ok(Parsed::Object(vec![
            ("2".into(), None),
            ("10".into(), Some(2.5)),
            ("b".into(), Some(3.0)),
            ("a".into(), None)
        ]))
    );
    assert_eq!(
        parse("{\"x\":{\"y\":1},\"z\":-0.0,\"w\":1e400}"),
        Ok(Parsed::Object(vec![
            ("x".into(), None),
            ("z".into(), Some(-0.0)),
            ("w".into(), Some(f64::INFINITY))
        ]))
    );
    assert_eq!(parse("[1]"), Ok(Parsed::Other));
    assert_eq!(parse("\"s\""), Ok(Parsed::Other));
    assert_eq!(parse("{}"), Ok(Parsed::Object(vec![])));
    assert_eq!(
        parse("  {\"a\": [1, {\"b\": 2}]}  "),
        Ok(Parsed::Object(vec![("a".into(), None)]))
    );
}
