//! Numbers in JSON as JavaScript prints them, so that pith's JSON matches pi's byte for byte.

use serde_json::Value;

/// Serializes a number as JavaScript prints it: integral values without a fraction (`0`, not
/// `0.0`), so pith's JSON matches pi's byte for byte.
pub fn js_number<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

/// A JSON number for `value`, as JavaScript prints it.
pub fn js_value(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        Value::from(value as i64)
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}
