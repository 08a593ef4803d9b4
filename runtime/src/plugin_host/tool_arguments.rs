//! The argument forms pi's built-in tools take besides their schema's (`prepareArguments`),
//! applied to the first-party tools' calls (and before the agent loop validates a call):
//! models send `edit`'s edits as a JSON string or as one object, and the single
//! `{path, oldText, newText}` form `edit` took for years (which sessions still hold). They are
//! folded into the schema's form before validation, as pi folds them.

use serde_json::{Map, Value};

/// `arguments` of a call to `tool` in the form its schema takes.
pub fn prepare(tool: &str, arguments: &Value) -> Value {
    match (tool, arguments) {
        ("edit", Value::Object(fields)) => Value::Object(prepare_edit(fields.clone())),
        _ => arguments.clone(),
    }
}

/// One `{oldText, newText}` replacement.
fn is_single_edit(value: &Value) -> bool {
    value.get("oldText").is_some_and(Value::is_string)
        && value.get("newText").is_some_and(Value::is_string)
}

/// pi's `prepareEditArguments`.
fn prepare_edit(mut fields: Map<String, Value>) -> Map<String, Value> {
    match fields.get("edits") {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => {
                fields.insert("edits".into(), Value::Array(items));
            }
            Ok(single) if is_single_edit(&single) => {
                fields.insert("edits".into(), Value::Array(vec![single]));
            }
            _ => {}
        },
        Some(single) if is_single_edit(single) => {
            let single = single.clone();
            fields.insert("edits".into(), Value::Array(vec![single]));
        }
        _ => {}
    }
    let (Some(Value::String(old)), Some(Value::String(new))) =
        (fields.get("oldText"), fields.get("newText"))
    else {
        return fields;
    };
    let edit = serde_json::json!({"oldText": old, "newText": new});
    let mut edits = match fields.remove("edits") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    edits.push(edit);
    fields.remove("oldText");
    fields.remove("newText");
    fields.insert("edits".into(), Value::Array(edits));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edit_forms_fold_into_edits_as_pi_folds_them() {
        let expected = json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]});
        for given in [
            json!({"path": "a", "oldText": "x", "newText": "y"}),
            json!({"path": "a", "edits": "[{\"oldText\": \"x\", \"newText\": \"y\"}]"}),
            json!({"path": "a", "edits": "{\"oldText\": \"x\", \"newText\": \"y\"}"}),
            json!({"path": "a", "edits": {"oldText": "x", "newText": "y"}}),
        ] {
            assert_eq!(prepare("edit", &given), expected, "{given}");
        }
        let both = json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y"});
        assert_eq!(
            prepare("edit", &both)["edits"],
            json!([{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}])
        );
        let other = json!({"oldText": "x", "newText": "y"});
        assert_eq!(prepare("write", &other), other);
    }
}
