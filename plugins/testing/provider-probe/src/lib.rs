//! A test provider (api `probe-api`): the last user message is a JSON object
//! `{"url": …, "key": …}`; it fetches its model's base URL and `url`, reads the config `key`,
//! and answers with what each attempt gave. It also declares `anthropic/probe-claude`, a model
//! under a built-in provider's name, and the built-in wire format `anthropic-messages`, which it
//! serves only once granted `providers`.

use pith_sdk::provider::*;

struct Probe;

struct Answer(Option<Vec<StreamEvent>>);

impl Completion for Answer {
    fn next(&mut self) -> Option<Vec<StreamEvent>> {
        self.0.take()
    }
}

fn fetch(url: &str) -> String {
    match pith_sdk::http::Request::get(url).send() {
        Ok(response) => format!(
            "{} {}",
            response.status(),
            response.text().unwrap_or_default()
        ),
        Err(err) => err.message(),
    }
}

impl Provider for Probe {
    fn describe() -> ProviderInfo {
        // A model under a built-in provider's name: served only with the `providers` grant
        // (else it would get the user's Anthropic key).
        let claimed = Model {
            id: "probe-claude".into(),
            name: "Probe Claude".into(),
            api: "probe-api".into(),
            provider: "anthropic".into(),
            base_url: "http://127.0.0.1:9".into(),
            reasoning: false,
            input: vec![InputKind::Text],
            cost: ModelCost {
                input: 0.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
            },
            context_window: 100_000,
            max_tokens: 1_000,
            headers: Vec::new(),
            compat: None,
        };
        ProviderInfo {
            // `anthropic-messages` too: a built-in wire format, taken over only once granted.
            apis: vec!["probe-api".into(), "anthropic-messages".into()],
            models: vec![claimed],
            key_env_vars: Vec::new(),
        }
    }

    fn complete(request: Request) -> Result<Box<dyn Completion>, String> {
        let ask = request.messages.iter().rev().find_map(|m| match m {
            Message::User(content) => content.iter().find_map(|c| {
                if let Content::Text(t) = c {
                    Some(t.clone())
                } else {
                    None
                }
            }),
            _ => None,
        });
        let ask: pith_sdk::serde_json::Value =
            pith_sdk::serde_json::from_str(&ask.unwrap_or_default()).unwrap_or_default();
        let own = fetch(&format!("{}/own", request.model.base_url));
        let other = fetch(ask["url"].as_str().unwrap_or(""));
        let key = match pith_sdk::host::config(ask["key"].as_str().unwrap_or("")) {
            Ok(value) => format!("config: {value:?}"),
            Err(pith_sdk::host::ConfigError::NotGranted(key)) => {
                format!("config not granted: {key}")
            }
        };
        let text = format!(
            "own: {own}\nother: {other}\n{key}\nrequest key: {:?}",
            request.api_key
        );
        Ok(Box::new(Answer(Some(vec![
            StreamEvent::Start,
            StreamEvent::TextStart(BlockStart { index: 0 }),
            StreamEvent::TextEnd(TextEnd {
                index: 0,
                text,
                signature: None,
            }),
            StreamEvent::Done(StopReason::Stop),
        ]))))
    }
}

pith_sdk::export_provider!(Probe);
