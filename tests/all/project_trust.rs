//! pi's `project_trust` over the real binary: a project with configuration of its own and no
//! decision yet is decided by the user's extensions (the first yes or no), remembered when
//! they ask; `--approve`/`--no-approve` and a remembered decision are not asked about.

use crate::support;
use crate::support::rpc::{Options, Pith};
use serde_json::{Value, json};

/// A project with a prompt template of its own (`/proj`, listed only when it is trusted), the
/// probe among the user's plugins answering `trust`, and `args`.
async fn start(
    trust: &str,
    args: &[&str],
    agent_files: Vec<(String, String)>,
) -> (Pith, tempfile::TempDir) {
    let plugins = support::plugins_dir_with(&["testing/ext-probe"]);
    let mut options = Options::faux(json!([]));
    options.plugins_dir = Some(plugins.path().to_path_buf());
    options.work_files = vec![(
        ".pi/prompts/proj.md".into(),
        "The project's own template.".into(),
    )];
    let settings = json!({"plugins": {"ext-probe": {"grant": {"config": ["trust"]}, "config": {"trust": trust}}}});
    options.agent_files = vec![("settings.json".into(), settings.to_string())];
    options.agent_files.extend(agent_files);
    options.args.extend(args.iter().map(|a| a.to_string()));
    options.capture_stderr = true;
    (Pith::spawn(options).await, plugins)
}

/// True when the project's template is offered (the project is trusted).
async fn project_loaded(pith: &mut Pith) -> bool {
    let listed = pith.call("c", json!({"type": "get_commands"})).await;
    listed["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "proj")
}

/// The probe's stderr notices of being asked.
fn asked(pith: &Pith) -> usize {
    pith.stderr_lines()
        .iter()
        .filter(|l| l.starts_with("probe asked to trust "))
        .count()
}

/// Settings trusting undecided projects (`defaultProjectTrust: "always"`), the probe answering
/// `trust`.
fn always(trust: &str) -> Vec<(String, String)> {
    let settings = json!({"defaultProjectTrust": "always", "plugins": {"ext-probe": {"grant": {"config": ["trust"]}, "config": {"trust": trust}}}});
    vec![("settings.json".to_string(), settings.to_string())]
}

fn record(pith: &Pith) -> Value {
    let text = std::fs::read_to_string(pith.dir.path().join("agent/trusted-projects.json"))
        .unwrap_or_else(|_| "null".into());
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_decides_a_projects_trust_at_start_up() {
    let (mut pith, _plugins) = start("yes", &[], Vec::new()).await;
    assert!(project_loaded(&mut pith).await);
    assert_eq!(asked(&pith), 1);
    assert_eq!(record(&pith), Value::Null, "not remembered unless asked");

    // A no wins over `defaultProjectTrust: "always"`.
    let (mut pith, _plugins) = start("no", &[], always("no")).await;
    assert!(!project_loaded(&mut pith).await);
    assert_eq!(asked(&pith), 1);

    // Undecided: `defaultProjectTrust` decides ("always" here).
    let (mut pith, _plugins) = start("maybe", &[], always("maybe")).await;
    assert!(project_loaded(&mut pith).await);
    assert_eq!(asked(&pith), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_remembered_decision_is_written_and_a_given_one_is_not_asked_about() {
    let (mut pith, _plugins) = start("yes-remember", &[], Vec::new()).await;
    assert!(project_loaded(&mut pith).await);
    let remembered = record(&pith);
    let work = pith.work_dir().canonicalize().unwrap();
    assert_eq!(
        remembered["trusted"],
        json!([work.display().to_string()]),
        "{remembered}"
    );

    // A remembered decision decides (here a record trusting every folder): not asked.
    let everything = vec![(
        "trusted-projects.json".to_string(),
        json!({"trusted": ["/"]}).to_string(),
    )];
    let (mut pith, _plugins) = start("no", &[], everything).await;
    assert!(project_loaded(&mut pith).await);
    assert_eq!(asked(&pith), 0);

    // `--no-approve` decides: the extension is not asked, and nothing is written.
    let (mut pith, _plugins) = start("yes-remember", &["--no-approve"], Vec::new()).await;
    assert!(!project_loaded(&mut pith).await);
    assert_eq!(asked(&pith), 0);
    assert_eq!(record(&pith), Value::Null);
}
