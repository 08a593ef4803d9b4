//! pith's documentation, built into the binary: `pith docs` lists the topics and
//! `pith docs <topic>` prints one. The system prompt's `docs` section points the model here,
//! as pi's points it at its installed docs.

/// One topic of the documentation.
#[derive(Debug, Clone, Copy)]
pub struct Topic {
    /// The name `pith docs` takes.
    pub name: &'static str,
    /// What it covers.
    pub summary: &'static str,
    /// Its Markdown text.
    pub text: &'static str,
}

/// Every topic, the README first.
pub const TOPICS: &[Topic] = &[
    Topic {
        name: "readme",
        summary: "start here: install, modes, settings, models, sandbox, sessions",
        text: include_str!("../../README.md"),
    },
    Topic {
        name: "plugins",
        summary: "writing tools, providers, skills and extensions as WebAssembly components",
        text: include_str!("../../docs/plugins.md"),
    },
    Topic {
        name: "extension-api",
        summary: "pi's extension API item by item in pith's WIT, and porting an example",
        text: include_str!("../../docs/extension-api.md"),
    },
    Topic {
        name: "extension-examples",
        summary: "pi's 78 example extensions: which can be written for pith today, and what the rest need",
        text: include_str!("../../docs/extension-examples.md"),
    },
    Topic {
        name: "mcp",
        summary: "MCP servers: mcp.json, tool_search, the sandbox around servers",
        text: include_str!("../../docs/mcp.md"),
    },
    Topic {
        name: "acp",
        summary: "editors over the Agent Client Protocol",
        text: include_str!("../../docs/acp.md"),
    },
    Topic {
        name: "attach",
        summary: "attaching clients to a running session",
        text: include_str!("../../docs/attach.md"),
    },
    Topic {
        name: "hosting",
        summary: "many sessions in one process: open, park and resume by id; a fleet of hosts",
        text: include_str!("../../docs/hosting.md"),
    },
    Topic {
        name: "codemode",
        summary: "codemode: scripts that call the tools, in a sandboxed script engine",
        text: include_str!("../../docs/codemode.md"),
    },
    Topic {
        name: "architecture",
        summary: "how the runtime is put together",
        text: include_str!("../../docs/architecture.md"),
    },
];

/// What `pith docs [topic]` prints, or the error naming the topics when `topic` is unknown.
pub fn show(topic: Option<&str>) -> Result<String, String> {
    let names = || TOPICS.iter().map(|t| t.name).collect::<Vec<_>>().join(", ");
    match topic {
        None => {
            let mut out = String::from("pith documentation topics (pith docs <topic>):\n");
            for topic in TOPICS {
                out.push_str(&format!("  {:<13}{}\n", topic.name, topic.summary));
            }
            Ok(out)
        }
        Some(name) => TOPICS
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
            .map(|t| t.text.to_string())
            .ok_or_else(|| format!("no topic named {name:?}: the topics are {}", names())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_list_print_and_refuse_unknown_names() {
        let list = show(None).unwrap();
        assert!(TOPICS.iter().all(|t| list.contains(t.name)));
        assert!(show(Some("mcp")).unwrap().starts_with('#'));
        let err = show(Some("nope")).unwrap_err();
        assert!(err.contains("readme, plugins"), "{err}");
    }

    #[test]
    fn every_guide_in_docs_is_a_topic() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    TOPICS.iter().any(|topic| topic.text == text),
                    "{} is not built in: add it to TOPICS",
                    path.display()
                );
            }
        }
    }
}
