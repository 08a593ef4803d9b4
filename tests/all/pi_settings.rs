//! pi's `settings.json` keys over the real binary: `modelThinkingLevels` and
//! `defaultThinkingLevel` at start-up and on a model switch, `retry.maxAgentDelayMs`, a
//! trusted project's `.pi/settings.json` (pi's file, under pith's `.pith/settings.json`),
//! `defaultProjectTrust`, `extensions`, `skills`, `prompts`, `httpProxy`, `httpIdleTimeoutMs`
//! and `images.autoResize`.

use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// The fake server's models: two that reason, one that does not.
fn options(url: &str, settings: Value, model: &str) -> Options {
    let models = json!({"providers": {"fake": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "k",
    "models": [
        {"id": "plain", "input": ["text", "image"], "contextWindow": 200000, "maxTokens": 8192},
        {"id": "deep", "reasoning": true, "input": ["text", "image"], "contextWindow": 200000, "maxTokens": 8192},
        {"id": "other", "reasoning": true, "contextWindow": 200000, "maxTokens": 8192}
    ]}}});
    Options {
        args: vec![
            "--model".into(),
            format!("fake/{model}"),
            "--no-session".into(),
        ],
        agent_files: vec![
            ("models.json".into(), models.to_string()),
            ("settings.json".into(), settings.to_string()),
        ],
        ..Options::default()
    }
}

async fn thinking(pith: &mut Pith) -> Value {
    pith.call("s", json!({"type": "get_state"})).await["data"]["thinkingLevel"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_starts_with_its_own_thinking_level() {
    let server = FakeLlm::start(json!([])).await;
    let settings =
        json!({"defaultThinkingLevel": "low", "modelThinkingLevels": {"fake/deep": "high"}});
    let mut pith = Pith::spawn(options(&server.url, settings.clone(), "deep")).await;
    assert_eq!(thinking(&mut pith).await, "high");
    let set = |id: &str| json!({"type": "set_model", "provider": "fake", "modelId": id});
    pith.call("m1", set("plain")).await;
    assert_eq!(thinking(&mut pith).await, "off");
    pith.call("m2", set("other")).await;
    assert_eq!(thinking(&mut pith).await, "low", "defaultThinkingLevel");
    pith.call("m3", set("deep")).await;
    assert_eq!(thinking(&mut pith).await, "high", "modelThinkingLevels");
    // A level named on the command line wins.
    let mut named = options(&server.url, settings, "deep");
    named.args.extend(["--thinking".into(), "minimal".into()]);
    let mut pith = Pith::spawn(named).await;
    assert_eq!(thinking(&mut pith).await, "minimal");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_retry_delay_is_capped() {
    let server = FakeLlm::start(json!([
        {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}},
        {"text": "back"}
    ]))
    .await;
    let settings = json!({"retry": {"baseDelayMs": 60000, "maxAgentDelayMs": 5}});
    let mut pith = Pith::spawn(options(&server.url, settings, "plain")).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let retry = pith.wait_for(|f| f["type"] == "auto_retry_start").await;
    assert_eq!(retry["delayMs"], 5, "{retry}");
    pith.wait_for(|f| f["type"] == "agent_settled").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_project_s_pi_settings_apply_under_pith_s() {
    let server = FakeLlm::start(json!([])).await;
    let mut trusted = options(&server.url, json!({}), "deep");
    trusted.args.push("--approve".into());
    trusted.work_files = vec![
        (
            ".pi/settings.json".into(),
            json!({"defaultThinkingLevel": "minimal", "modelThinkingLevels": {"fake/other": "high"}})
                .to_string(),
        ),
        (
            ".pith/settings.json".into(),
            json!({"modelThinkingLevels": {"fake/other": "medium"}}).to_string(),
        ),
    ];
    let mut pith = Pith::spawn(trusted.clone()).await;
    assert_eq!(thinking(&mut pith).await, "minimal");
    pith.call(
        "m",
        json!({"type": "set_model", "provider": "fake", "modelId": "other"}),
    )
    .await;
    assert_eq!(thinking(&mut pith).await, "medium", "pith's file over pi's");
    // Not trusted: neither file.
    trusted.args.retain(|a| a != "--approve");
    let mut pith = Pith::spawn(trusted).await;
    assert_ne!(thinking(&mut pith).await, "minimal");
}

/// pi's `defaultProjectTrust`: `"always"` trusts a project nothing decided; the key counts
/// only in the agent directory (a project cannot trust itself).
#[tokio::test(flavor = "multi_thread")]
async fn default_project_trust_always_trusts_undecided_projects() {
    let server = FakeLlm::start(json!([])).await;
    let project = (
        ".pi/settings.json".to_string(),
        json!({"defaultThinkingLevel": "minimal", "defaultProjectTrust": "always"}).to_string(),
    );
    let mut always = options(
        &server.url,
        json!({"defaultProjectTrust": "always"}),
        "deep",
    );
    always.work_files = vec![project.clone()];
    let mut pith = Pith::spawn(always).await;
    assert_eq!(thinking(&mut pith).await, "minimal");
    let mut ask = options(&server.url, json!({}), "deep");
    ask.work_files = vec![project];
    let mut pith = Pith::spawn(ask).await;
    assert_ne!(thinking(&mut pith).await, "minimal");
}

/// pi's `extensions` setting loads plugins as `-e` does (not with `--no-extensions`); a pi
/// JavaScript extension listed there is named as one pith cannot load, and pith goes on.
#[tokio::test(flavor = "multi_thread")]
async fn the_extensions_setting_loads_plugins() {
    let server = FakeLlm::start(json!([])).await;
    let plugins = crate::support::plugins_dir_with(&["examples/switch-guard"]);
    let settings = json!({"extensions": [
        plugins.path().join("switch-guard.wasm"),
        "old-pi-extension.ts",
        "-builtin:mcp"
    ]});
    let commands = |listed: &Value| -> Vec<String> {
        listed["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };
    let mut pith = Pith::spawn(options(&server.url, settings.clone(), "plain")).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    assert!(commands(&listed).contains(&"saved".to_string()), "{listed}");
    let mut without = options(&server.url, settings, "plain");
    without.args.push("--no-extensions".into());
    let mut pith = Pith::spawn(without).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    assert!(
        !commands(&listed).contains(&"saved".to_string()),
        "{listed}"
    );
}

/// pi's `httpProxy`: model requests go through the proxy (here the fake server, which answers
/// for a host that does not exist).
#[tokio::test(flavor = "multi_thread")]
async fn model_requests_go_through_the_http_proxy() {
    let server = FakeLlm::start(json!([{"text": "through the proxy"}])).await;
    let mut options = options(
        "http://pith-proxy-test.invalid",
        json!({"httpProxy": server.url}),
        "plain",
    );
    options.args.push("--no-session".into());
    let mut pith = Pith::spawn(options).await;
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    assert_eq!(
        end["messages"][2]["content"][0]["text"], "through the proxy",
        "{end}"
    );
    let requests = server.requests();
    assert!(
        requests[0]["path"]
            .as_str()
            .unwrap()
            .starts_with("http://pith-proxy-test.invalid/"),
        "{}",
        requests[0]["path"]
    );
}

/// pi's `httpIdleTimeoutMs`: an answer that stalls longer fails (retries off here).
#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_answer_times_out_after_http_idle_timeout_ms() {
    let server = FakeLlm::start(json!([
        {"text": "slow answer", "chunks": 3, "delay_ms": 3000}
    ]))
    .await;
    let settings = json!({"httpIdleTimeoutMs": 300, "retry": {"enabled": false}});
    let mut pith = Pith::spawn(options(&server.url, settings, "plain")).await;
    let started = std::time::Instant::now();
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    let answer = &end["messages"][2];
    assert_eq!(answer["stopReason"], "error", "{end}");
    assert!(
        answer["errorMessage"]
            .as_str()
            .unwrap()
            .ends_with("no data for 300 ms (settings httpIdleTimeoutMs or http.idleTimeoutMs)"),
        "{answer}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// A PNG of `width`×`height`, base64.
fn png(width: u32, height: u32) -> String {
    use base64::Engine as _;
    // Bands of color: small once compressed (the fake server takes a large body for an
    // overflow).
    let image = image::RgbImage::from_fn(width, height, |x, _| {
        image::Rgb([(x / 500 * 40) as u8, 120, 90])
    });
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The size of the image in `data` (base64).
fn size_of(data: &Value) -> (u32, u32) {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.as_str().unwrap())
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    (image.width(), image.height())
}

/// pi's `images.autoResize` (on by default): a prompt's image past 2000 pixels reaches the
/// model at 2000 with pi's note after the text; one that does not decode is left out with
/// pi's note; with the setting off the image goes as it is.
#[tokio::test(flavor = "multi_thread")]
async fn large_images_are_resized_for_the_model() {
    let server = FakeLlm::start(json!([{"text": "seen"}, {"text": "seen"}])).await;
    let big = png(3000, 1500);
    let images = json!([
        {"type": "image", "data": big, "mimeType": "image/png"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    ]);
    let mut pith = Pith::spawn(options(&server.url, json!({}), "plain")).await;
    pith.call(
        "p",
        json!({"type": "prompt", "message": "look", "images": images}),
    )
    .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    let content = &end["messages"][1]["content"];
    assert_eq!(
        content[0]["text"],
        "look\n\n[Image: original 3000x1500, displayed at 2000x1000. Multiply coordinates by 1.50 to map to original image.]\n[Image omitted: could not be resized below the inline image size limit.]"
    );
    assert_eq!(content.as_array().unwrap().len(), 2, "{content}");
    assert_eq!(size_of(&content[1]["data"]), (2000, 1000));
    let sent = &server.requests()[0]["body"]["messages"][0]["content"];
    assert!(
        sent[1]["source"]["data"] == content[1]["data"],
        "the resized image is sent"
    );

    let off = options(
        &server.url,
        json!({"images": {"autoResize": false}}),
        "plain",
    );
    let mut pith = Pith::spawn(off).await;
    let one = json!([{"type": "image", "data": big, "mimeType": "image/png"}]);
    pith.call(
        "p",
        json!({"type": "prompt", "message": "look", "images": one}),
    )
    .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    assert!(
        end["messages"][1]["content"][1]["data"] == big.as_str(),
        "sent as it is"
    );
}

/// A tool's image past the limits is resized as it enters the conversation, pi's note after
/// it.
#[tokio::test(flavor = "multi_thread")]
async fn a_tool_s_large_image_is_resized_with_pi_s_note_after_it() {
    use base64::Engine as _;
    let server = FakeLlm::start(json!([
        {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "big.png"}}]},
        {"text": "seen"}
    ]))
    .await;
    let mut options = options(&server.url, json!({}), "plain");
    options.work_files = Vec::new();
    let mut pith = Pith::spawn(options).await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(png(1000, 4000))
        .unwrap();
    std::fs::write(pith.work_dir().join("big.png"), bytes).unwrap();
    pith.call("p", json!({"type": "prompt", "message": "read it"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    let result = end["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "toolResult")
        .unwrap();
    let content = &result["content"];
    assert_eq!(content[0]["text"], "Read image file [image/png]");
    assert_eq!(size_of(&content[1]["data"]), (500, 2000));
    assert_eq!(
        content[2]["text"],
        "[Image: original 1000x4000, displayed at 500x2000. Multiply coordinates by 2.00 to map to original image.]"
    );
}

/// pi's `skills` and `prompts` settings add paths as `--skill` and `--prompt-template` do,
/// relative to the settings file's folder.
#[tokio::test(flavor = "multi_thread")]
async fn the_skills_and_prompts_settings_add_resources() {
    let server = FakeLlm::start(json!([])).await;
    let settings = json!({"skills": ["kit/skills"], "prompts": ["kit/prompts/ship.md"]});
    let mut with = options(&server.url, settings, "plain");
    with.agent_files.extend([
        (
            "kit/skills/deploy/SKILL.md".to_string(),
            "---\nname: deploy\ndescription: Deploy the app\n---\nRun `make deploy`.\n".to_string(),
        ),
        (
            "kit/prompts/ship.md".to_string(),
            "---\ndescription: Ship it\n---\nShip $1\n".to_string(),
        ),
    ]);
    let mut pith = Pith::spawn(with).await;
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    let names: Vec<&str> = listed["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(
        names.contains(&"skill:deploy") && names.contains(&"ship"),
        "{listed}"
    );
}

/// pi's `retry.provider.timeoutMs`: a provider that never answers fails after it.
#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_never_answers_fails_after_retry_provider_timeout_ms() {
    let server = FakeLlm::start(json!([{"hang": true}])).await;
    let settings = json!({"retry": {"enabled": false, "provider": {"timeoutMs": 300}}});
    let mut pith = Pith::spawn(options(&server.url, settings, "plain")).await;
    let started = std::time::Instant::now();
    pith.call("p", json!({"type": "prompt", "message": "hi"}))
        .await;
    let end = pith.wait_for(|f| f["type"] == "agent_end").await;
    assert_eq!(end["messages"][2]["stopReason"], "error", "{end}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// The same settings through the reference pi 1.5.2 and through pith: the same thinking level
/// at start-up and after each model switch, and the same prompt reaching the model for a large
/// image and an unreadable one (the notes, the size it is resized to).
#[tokio::test(flavor = "multi_thread")]
async fn beside_pi_the_thinking_levels_and_resized_images_are_pis() {
    let home = tempfile::tempdir().unwrap();
    let settings =
        json!({"defaultThinkingLevel": "low", "modelThinkingLevels": {"fake/deep": "high"}});
    let images = json!([
        {"type": "image", "data": png(3000, 1500), "mimeType": "image/png"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    ]);
    let mut seen = Vec::new();
    for pi in [true, false] {
        let server = FakeLlm::start(json!([{"text": "seen"}])).await;
        let mut options = options(&server.url, settings.clone(), "deep");
        if pi {
            crate::pi_round_trip::run_as_pi(&mut options, home.path());
        }
        let mut agent = Pith::spawn(options).await;
        agent.allow_slow_frames(std::time::Duration::from_secs(60));
        let mut levels = vec![thinking(&mut agent).await];
        for id in ["plain", "other", "deep"] {
            let set = json!({"type": "set_model", "provider": "fake", "modelId": id});
            agent.call(id, set).await;
            levels.push(thinking(&mut agent).await);
        }
        agent
            .call(
                "p",
                json!({"type": "prompt", "message": "look", "images": images}),
            )
            .await;
        agent.wait_for(|f| f["type"] == "agent_settled").await;
        let requests = server.requests();
        let sent = requests[0]["body"]["messages"][0]["content"].clone();
        let blocks = sent.as_array().unwrap().len();
        seen.push((
            levels,
            sent[0]["text"].clone(),
            blocks,
            size_of(&sent[1]["source"]["data"]),
        ));
    }
    assert_eq!(seen[1], seen[0], "pith (right) beside pi (left)");
}
