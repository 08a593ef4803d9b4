//! The steps of a scenario captured from pi (`scenario.json`: `send`, `wait_for` with `count`
//! and `save`, `sleep`, `wait_idle`), replayed against pith as the capture's driver ran them
//! against pi.

use std::time::Duration;

use serde_json::Value;

use super::rpc::Pith;

/// True when `frame` contains everything in `pattern`.
pub fn matches(frame: &Value, pattern: &Value) -> bool {
    match (frame, pattern) {
        (Value::Object(f), Value::Object(p)) => p
            .iter()
            .all(|(k, v)| f.get(k).is_some_and(|fv| matches(fv, v))),
        _ => frame == pattern,
    }
}

/// Runs `scenario`'s steps against `pith`. `${name}` in a sent command is a value saved from an
/// earlier frame (`save`: name → dotted path) or one of `vars`.
pub async fn run_steps(pith: &mut Pith, scenario: &Value, vars: Vec<(String, String)>) {
    let mut saved = vars;
    for step in scenario["steps"].as_array().into_iter().flatten() {
        if let Some(command) = step.get("send") {
            let mut text = command.to_string();
            for (name, value) in &saved {
                text = text.replace(&format!("${{{name}}}"), value);
            }
            pith.send(serde_json::from_str(&text).unwrap()).await;
        } else if let Some(pattern) = step.get("wait_for") {
            let mut frame = Value::Null;
            for _ in 0..step.get("count").and_then(Value::as_u64).unwrap_or(1) {
                frame = pith.wait_for(|f| matches(f, pattern)).await;
            }
            for (name, path) in step["save"].as_object().into_iter().flatten() {
                let mut value = &frame;
                for key in path.as_str().unwrap_or("").split('.') {
                    value = match key.parse::<usize>() {
                        Ok(index) => &value[index],
                        Err(_) => &value[key],
                    };
                }
                let value = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_string);
                saved.push((name.clone(), value));
            }
        } else if let Some(seconds) = step.get("sleep").and_then(Value::as_f64) {
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        } else if let Some(seconds) = step.get("wait_idle").and_then(Value::as_f64) {
            tokio::time::sleep(Duration::from_secs_f64(seconds.min(0.3))).await;
        }
    }
}
