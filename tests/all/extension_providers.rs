//! Providers registered by extensions (pi's `registerProvider`/`unregisterProvider`), over the
//! real binary: at load (the custom-provider port, in `extension_ports`) and at run time from a
//! command, where the new models can be chosen and asked at once, a bad registration is refused
//! with its cause, and a removed provider's models are gone.

use crate::extensions::notified;
use crate::support;
use crate::support::fake_llm::FakeLlm;
use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// The `provider/id` of the models `get_available_models` lists under `provider`.
async fn listed(pith: &mut Pith, provider: &str) -> Vec<Value> {
    let models = pith
        .call("m", json!({"type": "get_available_models"}))
        .await;
    models["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == provider)
        .map(|m| json!([m["id"], m["api"], m["contextWindow"]]))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_registers_a_provider_from_a_command_and_removes_it() {
    let llm = FakeLlm::start(json!({"turns": [{"text": "From the registered provider."}]})).await;
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.env = vec![("PROBE_PROVIDER_KEY".into(), "probe-secret".into())];
    // Without the user's grant, nothing is registered, and the refusal names the fix.
    let mut pith = Pith::spawn(options.clone()).await;
    let register = format!("/provider register probe-net {}/v1", llm.url);
    pith.call("r", json!({"type": "prompt", "message": register}))
        .await;
    let refused = notified(&mut pith, "answer: ").await;
    assert!(
        refused.contains("may not register providers") && refused.contains("providers = true"),
        "{refused}"
    );
    assert!(listed(&mut pith, "probe-net").await.is_empty());

    let grant = json!({"plugins": {"ext-probe": {"grant": {"providers": true}}}});
    options.agent_files = vec![("settings.json".into(), grant.to_string())];
    let mut pith = Pith::spawn(options).await;
    assert!(listed(&mut pith, "probe-net").await.is_empty());

    let register = format!("/provider register probe-net {}/v1", llm.url);
    pith.call("r", json!({"type": "prompt", "message": register}))
        .await;
    assert_eq!(notified(&mut pith, "answer: ").await, "answer: Ok(())");
    assert_eq!(
        listed(&mut pith, "probe-net").await,
        vec![json!(["probe-model", "openai-completions", 32_000])]
    );
    // Chosen and asked at once, with the key its `$NAME` names.
    let set = pith
        .call(
            "s",
            json!({"type": "set_model", "provider": "probe-net", "modelId": "probe-model"}),
        )
        .await;
    assert_eq!(set["success"], true, "{set}");
    pith.call("p", json!({"type": "prompt", "message": "hello"}))
        .await;
    let end = pith.until_agent_end().await;
    let answer = end["messages"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!(answer["provider"], "probe-net");
    assert_eq!(
        answer["content"][0]["text"],
        "From the registered provider."
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["body"]["model"], "probe-model");
    let authorization = requests[0]["headers"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.clone());
    assert_eq!(authorization, Some(json!("Bearer probe-secret")));

    // A registration that cannot work is refused with its cause; nothing changes.
    pith.call(
        "b",
        json!({"type": "prompt", "message": "/provider register broken -"}),
    )
    .await;
    let refused = notified(&mut pith, "answer: ").await;
    assert!(
        refused.contains("Err(") && refused.contains("no base URL"),
        "{refused}"
    );
    assert!(listed(&mut pith, "broken").await.is_empty());

    // Removed: its models are gone; the session's model stays until another is chosen.
    pith.call(
        "u",
        json!({"type": "prompt", "message": "/provider unregister probe-net"}),
    )
    .await;
    // (The probe's commands run in order: once `/count` answers, the removal is done.)
    pith.call("c", json!({"type": "prompt", "message": "/count"}))
        .await;
    notified(&mut pith, "agent_end seen").await;
    assert!(listed(&mut pith, "probe-net").await.is_empty());
    let state = pith.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["provider"], "probe-net");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_registers_a_virtual_model_at_run_time_routes_it_and_removes_it() {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([{"text": "routed answer"}]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    let mut pith = Pith::spawn(options).await;
    let command = |text: &str| json!({"type": "prompt", "message": text});
    pith.call("r", command("/virtual register probe-router auto"))
        .await;
    assert_eq!(notified(&mut pith, "answer:").await, "answer: Ok(())");
    assert_eq!(
        listed(&mut pith, "probe-router").await,
        [json!(["auto", "pi-virtual", 0])]
    );

    // Chosen like any model; its request goes where the extension routes it.
    let set = pith
        .call(
            "s",
            json!({"type": "set_model", "provider": "probe-router", "modelId": "auto"}),
        )
        .await;
    assert_eq!(set["success"], true, "{set}");
    pith.call("p", command("hello")).await;
    let end = pith.until_agent_end().await;
    let answer = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&answer["provider"], &answer["model"]),
        (&json!("faux"), &json!("faux-model")),
        "{answer}"
    );
    assert_eq!(answer["content"][0]["text"], "routed answer");

    // Removed: no longer offered, and a request with it says so.
    pith.call("u", command("/virtual unregister probe-router auto"))
        .await;
    assert!(listed(&mut pith, "probe-router").await.is_empty());
    pith.call("q", command("again")).await;
    let end = pith.until_agent_end().await;
    let failed = end["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        failed["errorMessage"], "Virtual model probe-router/auto is not registered.",
        "{failed}"
    );
}
