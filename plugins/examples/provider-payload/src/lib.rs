//! A port of pi's `provider-payload` example: every provider request's body is appended to
//! `<cwd>/.pi/provider-payload.log` (as indented JSON, then a blank line), and every response's
//! status and headers after it (`[200] {"content-type":…}`). The example's commented-out
//! replacement (`return { ...event.payload, temperature: 0 }`) is the config `temperature`:
//! when set, every request is sent with that temperature.

use std::io::Write;

use pith_sdk::extension::*;
use serde_json::Value;

struct ProviderPayload;

/// Appends `text` to the log (the folder is made when missing).
fn log(text: &str) -> Result<(), String> {
    let dir = std::path::Path::new(&session_read::cwd()).join(".pi");
    std::fs::create_dir_all(&dir).map_err(|err| format!("cannot make {}: {err}", dir.display()))?;
    let path = dir.join("provider-payload.log");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|err| format!("cannot write {}: {err}", path.display()))
}

impl Extension for ProviderPayload {
    fn new() -> Self {
        ProviderPayload
    }

    fn describe(&self) -> ExtensionInfo {
        ExtensionInfo::new("provider-payload")
            .on(&["before_provider_request", "after_provider_response"])
    }

    fn on_event(&mut self, event: Event) -> Result<EventResult, String> {
        match event {
            Event::BeforeProviderRequest(request) => {
                let mut payload: Value = serde_json::from_str(&request.payload)
                    .map_err(|err| format!("the payload is not JSON: {err}"))?;
                let pretty = serde_json::to_string_pretty(&payload).map_err(|e| e.to_string())?;
                log(&format!("{pretty}\n\n"))?;
                let temperature = pith_sdk::host::config("temperature").ok().flatten();
                match temperature.and_then(|t| t.parse::<f64>().ok()) {
                    Some(temperature) => {
                        payload["temperature"] = temperature.into();
                        Ok(EventResult::ReplacePayload(payload.to_string()))
                    }
                    None => Ok(EventResult::Continue),
                }
            }
            Event::AfterProviderResponse(response) => {
                let headers: serde_json::Map<String, Value> = response
                    .headers
                    .into_iter()
                    .map(|h| (h.name, Value::String(h.value)))
                    .collect();
                log(&format!(
                    "[{}] {}\n\n",
                    response.status,
                    Value::Object(headers)
                ))?;
                Ok(EventResult::Continue)
            }
            _ => Ok(EventResult::Continue),
        }
    }
}

pith_sdk::export_extension!(ProviderPayload);
