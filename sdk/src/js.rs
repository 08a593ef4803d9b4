//! JavaScript's text forms, for ports of pi's TypeScript extensions that must write what pi
//! writes: `JSON.stringify` (object keys in JavaScript's order), `Number.prototype.toString`,
//! `String.prototype.trim`, a value in a template literal, and `toLocaleString()` in `en-US`.

use serde_json::Value;

/// JavaScript's `trim()`: its white space is Unicode's without U+0085, and with U+FEFF.
pub fn trim(text: &str) -> &str {
    text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// True for a key JavaScript orders first, as an array index (`"0"`, `"12"`, not `"01"`).
fn is_array_index(key: &str) -> bool {
    !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_digit())
        && (key == "0" || !key.starts_with('0'))
        && key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// An object's entries in JavaScript's order (`Object.entries`): array indices ascending, then
/// the other keys in insertion order.
pub fn entries(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut keys: Vec<&String> = map.keys().filter(|k| is_array_index(k)).collect();
    keys.sort_by_key(|k| k.parse::<u64>().unwrap_or(0));
    keys.extend(map.keys().filter(|k| !is_array_index(k)));
    keys.into_iter().map(|k| (k, &map[k])).collect()
}

/// A number as JavaScript writes it (`Number.prototype.toString`): `1` for 1.0, `1e+21`,
/// `1e-7`, `0.000001`.
pub fn number(number: &serde_json::Number) -> String {
    if number.is_i64() || number.is_u64() {
        return number.to_string();
    }
    let Some(x) = number.as_f64() else {
        return number.to_string();
    };
    if x == 0.0 {
        return "0".into();
    }
    // The shortest digits that read back as `x`, and the decimal exponent.
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let sign = if x < 0.0 { "-" } else { "" };
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e = if e < 0 {
            format!("-{}", -e)
        } else {
            format!("+{e}")
        };
        if k == 1 {
            format!("{digits}e{e}")
        } else {
            format!("{}.{}e{e}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// `JSON.stringify(value)`: compact, object keys in JavaScript's order (array indices first).
pub fn stringify(value: &Value) -> String {
    match value {
        Value::Null | Value::Bool(_) | Value::String(_) => value.to_string(),
        Value::Number(n) => number(n),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(stringify).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => {
            let fields: Vec<String> = entries(map)
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), stringify(v)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
    }
}

/// `${value}` of a JSON value in a template literal, for the fields pi interpolates.
pub fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => number(n),
        other => other.to_string(),
    }
}

/// A number as pi's `toLocaleString()` writes it in `en-US`: thousands grouped with commas,
/// at most three decimals.
pub fn locale_number(value: &Value) -> String {
    let Some(x) = value.as_f64() else {
        return "NaN".into();
    };
    let rounded = format!("{:.3}", x.abs());
    let (whole, fraction) = rounded.split_once('.').unwrap_or((&rounded, ""));
    let fraction = fraction.trim_end_matches('0');
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if x < 0.0 && (whole != "0" || !fraction.is_empty()) {
        "-"
    } else {
        ""
    };
    if fraction.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn javascripts_forms() {
        let value: Value = serde_json::from_str(
            r#"{"b": 1.0, "10": "x", "a": [1.5, 1e21, 0.0000001], "2": null}"#,
        )
        .unwrap();
        assert_eq!(
            stringify(&value),
            r#"{"2":null,"10":"x","b":1,"a":[1.5,1e+21,1e-7]}"#
        );
        assert_eq!(display(&json!("text")), "text");
        assert_eq!(locale_number(&json!(6100)), "6,100");
        assert_eq!(locale_number(&json!(-1234567.5)), "-1,234,567.5");
        assert_eq!(trim("\u{feff} text\n"), "text");
    }
}
