//! The session's tool set as a host sees and changes it (`get_tools`, `set_active_tools`) over
//! the real pipes.

use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn a_host_lists_the_tools_and_chooses_the_active_ones() {
    let mut pith = Pith::spawn(Options::faux(json!([{"text": "one"}, {"text": "two"}]))).await;
    let tools = |frame: &Value| frame["data"]["tools"].as_array().unwrap().clone();
    let find = |tools: &[Value], name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {tools:?}"))
    };
    let listed = tools(&pith.call("t1", json!({"type": "get_tools"})).await);
    let read = find(&listed, "read");
    let keys = crate::support::keys(&read);
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "parameters",
            "kind",
            "plugin",
            "active"
        ]
    );
    assert_eq!(
        (&read["kind"], &read["plugin"], &read["active"]),
        (&json!("plugin"), &json!("read"), &json!(true))
    );
    assert_eq!(read["parameters"]["required"], json!(["path"]));
    assert_eq!(find(&listed, "grep")["active"], false, "not a default tool");

    let first = pith
        .call("p1", json!({"type": "prompt", "message": "one"}))
        .await;
    assert_eq!(first["success"], true);
    pith.until_agent_end().await;

    let set = pith
        .call(
            "s1",
            json!({"type": "set_active_tools", "names": ["read", "grep"]}),
        )
        .await;
    assert_eq!(set["data"], json!({"activeTools": ["read", "grep"]}));
    let listed = tools(&pith.call("t2", json!({"type": "get_tools"})).await);
    assert_eq!(find(&listed, "grep")["active"], true);
    assert_eq!(find(&listed, "bash")["active"], false);

    // Bad input changes nothing and says why.
    let unknown = pith
        .call(
            "s2",
            json!({"type": "set_active_tools", "names": ["read", "nope"]}),
        )
        .await;
    assert_eq!(unknown["success"], false);
    let error = unknown["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "Unknown tools: nope (the tools there are: read, bash, powershell, edit, write"
        ),
        "{error}"
    );
    let missing = pith.call("s3", json!({"type": "set_active_tools"})).await;
    assert_eq!(missing["success"], false, "{missing}");
    let listed = tools(&pith.call("t3", json!({"type": "get_tools"})).await);
    assert_eq!(find(&listed, "grep")["active"], true);

    // The next run records the change as pi 1.5's system-message update.
    pith.call("p2", json!({"type": "prompt", "message": "two"}))
        .await;
    let end = pith.until_agent_end().await;
    let system = &end["messages"][0];
    assert_eq!(system["role"], "system", "{end}");
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .map(|l| {
                l.iter()
                    .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(names(&system["toolsAdded"]), ["grep"]);
    assert_eq!(
        system["toolsRemoved"],
        json!([{"name": "bash"}, {"name": "edit"}, {"name": "write"}])
    );
}
