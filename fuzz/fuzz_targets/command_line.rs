//! A command line that may not parse: repairing lone surrogates never breaks a line that
//! parsed, and the top-level id is found whenever the line parses as an object with an id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "../../runtime/src/rpc/recover.rs"]
#[allow(dead_code, missing_docs)]
mod recover;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = serde_json::from_str::<Value>(text);
    if let Some(repaired) = recover::repair_lone_surrogates(text) {
        if parsed.is_ok() {
            // A line that parsed has no lone surrogates: it is never rewritten.
            panic!("a valid line was rewritten: {text:?} -> {repaired:?}");
        }
        let _ = serde_json::from_str::<Value>(&repaired);
    }
    let found = recover::top_level_id(text);
    if let Ok(Value::Object(object)) = &parsed {
        if let Some(id @ (Value::String(_) | Value::Number(_))) = object.get("id") {
            let found = found.expect("the id of a valid command is found");
            if object.keys().filter(|k| *k == "id").count() == 1 && id.is_string() {
                assert_eq!(&found, id);
            }
        }
    }
});
