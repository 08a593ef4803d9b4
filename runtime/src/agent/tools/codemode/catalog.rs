//! What `codemode` scripts may call and how the tool presents them, as pi 1.5.2's
//! `prepareCodemodeLoadout` and `createCodemodeDescription`: the callable tools (the tools
//! offered to the model but `codemode`, and every MCP tool with `codemode` or `deferred`
//! exposure), their namespaces (MCP servers), and the `codemode` definition itself.

use serde_json::{Value, json};

use super::declaration::{self, to_identifier};
use crate::agent::tools::{CODEMODE, CodemodeDefinition, SessionTool};
use crate::mcp::config::Exposure;
use crate::mcp::{McpTool, McpToolKind};

/// pi's `codemode.mode`: how tools that are declared and callable are presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Declared tools stay declared, their descriptions say how scripts call them.
    #[default]
    On,
    /// Callable tools are listed in `codemode`'s description and their declarations hidden.
    Only,
}

/// pi's `codemode` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodemodeSettings {
    /// `codemode.mode`.
    pub mode: Mode,
    /// `codemode.inlineBudget`: estimated tokens the listed declarations may take.
    pub inline_budget: usize,
    /// `autoEnableCodemode` (beside `mcpServers`): an MCP server with `codemode` exposure turns
    /// the tool on.
    pub auto_enable: bool,
}

impl Default for CodemodeSettings {
    fn default() -> Self {
        CodemodeSettings {
            mode: Mode::On,
            inline_budget: 3000,
            auto_enable: true,
        }
    }
}

impl CodemodeSettings {
    /// Reads `codemode.mode`, `codemode.inlineBudget` and `autoEnableCodemode` (bad values
    /// keep pi's defaults, as pi's reader does).
    pub fn from_settings(settings: &crate::settings::Settings) -> CodemodeSettings {
        let mut read = CodemodeSettings::default();
        if let Some(codemode) = settings.get("codemode") {
            if codemode.get("mode").and_then(Value::as_str) == Some("only") {
                read.mode = Mode::Only;
            }
            if let Some(budget) = codemode.get("inlineBudget").and_then(Value::as_f64)
                && budget.is_finite()
                && budget >= 0.0
            {
                read.inline_budget = budget as usize;
            }
        }
        if settings.get("autoEnableCodemode").and_then(Value::as_bool) == Some(false) {
            read.auto_enable = false;
        }
        read
    }
}

/// A tool's namespace: the MCP server it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    /// `mcp__<server>` (`-` as `_`, as the tools' names have it).
    pub name: String,
    /// The server's name, also accepted.
    pub alias: String,
    /// Its configured description, else the first line of its instructions.
    pub description: Option<String>,
    /// Its instructions.
    pub instructions: Option<String>,
}

impl Namespace {
    /// True when `query` names it: its name or alias, as written or as the same identifier.
    pub fn is_named(&self, query: &str) -> bool {
        let wanted = to_identifier(query);
        [&self.name, &self.alias]
            .iter()
            .any(|name| name.as_str() == query || to_identifier(name) == wanted)
    }
}

/// A tool a script may call.
#[derive(Debug, Clone)]
pub struct Callable {
    /// The tool.
    pub tool: SessionTool,
    /// `direct` (declared to the model), `codemode` or `deferred`.
    pub exposure: Exposure,
    /// Its MCP server, if any.
    pub namespace: Option<Namespace>,
    /// Its prompt guidelines.
    pub guidelines: Vec<String>,
}

impl Callable {
    /// Its name.
    pub fn name(&self) -> &str {
        self.tool.name()
    }

    /// What a call resolves to, as a schema: bash's and read's structured results, an MCP
    /// tool's `CallToolResult`; none for the tools that resolve to their text.
    pub fn output_schema(&self) -> Option<Value> {
        match &self.tool {
            SessionTool::Mcp(tool) if matches!(tool.kind, McpToolKind::Server(..)) => {
                Some(call_tool_result_schema())
            }
            tool if matches!(tool.name(), "bash" | "powershell") => {
                Some(declaration::bash_output_schema())
            }
            tool if tool.name() == "read" => Some(declaration::read_output_schema()),
            _ => None,
        }
    }

    /// Its description followed by its guidelines (what a script sees of it).
    pub fn described(&self) -> String {
        let bullets: Vec<String> = self
            .guidelines
            .iter()
            .map(|g| g.trim())
            .filter(|g| !g.is_empty())
            .map(|g| format!("- {g}"))
            .collect();
        let description = self.tool.description();
        if bullets.is_empty() {
            description.to_string()
        } else {
            format!("{}\n\n{}", description.trim(), bullets.join("\n"))
        }
    }

    /// Its description and TypeScript declaration (`describeTool`, `ALL_TOOLS`).
    pub fn sample(&self) -> String {
        let text_output = json!({"type": "string"});
        let output = self.output_schema();
        declaration::render_tool_sample(
            self.name(),
            &self.described(),
            Some(self.tool.parameters()),
            Some(output.as_ref().unwrap_or(&text_output)),
        )
    }
}

/// The schema of an MCP `CallToolResult`, what MCP tools resolve to in scripts (pi's).
pub(super) fn call_tool_result_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["text", "image", "audio", "resource_link", "resource"]},
                    "text": {"type": "string"},
                    "data": {"type": "string"},
                    "mimeType": {"type": "string"},
                },
                "required": ["type"],
                "additionalProperties": true,
            }},
            "structuredContent": {},
            "isError": {"type": "boolean"},
        },
        "required": ["content"],
        "additionalProperties": true,
    })
}

/// The namespace of an MCP tool.
fn namespace_of(tool: &McpTool) -> Option<Namespace> {
    let McpToolKind::Server(server, _) = &tool.kind else {
        return None;
    };
    let instructions = server.instructions().filter(|i| !i.trim().is_empty());
    let description = server
        .config
        .description
        .clone()
        .filter(|d| !d.trim().is_empty())
        .or_else(|| {
            instructions
                .as_deref()
                .and_then(|i| i.lines().find(|l| !l.trim().is_empty()))
                .map(|l| l.trim().to_string())
        });
    Some(Namespace {
        name: crate::mcp::names::namespace(server.name()),
        alias: server.name().to_string(),
        description,
        instructions,
    })
}

/// The tools scripts may call: the `declared` tools (offered to the model; `codemode` itself
/// left out) and every MCP tool of `mcp_tools` with `codemode` or `deferred` exposure not
/// declared already. `guidelines` gives a tool's prompt guidelines.
pub fn callable(
    declared: &[SessionTool],
    mcp_tools: Vec<McpTool>,
    guidelines: &dyn Fn(&SessionTool) -> Vec<String>,
) -> Vec<Callable> {
    let mut callable: Vec<Callable> = declared
        .iter()
        .filter(|tool| tool.name() != CODEMODE)
        .filter(
            |tool| !matches!(tool, SessionTool::Mcp(t) if matches!(t.kind, McpToolKind::Search)),
        )
        .map(|tool| Callable {
            tool: tool.clone(),
            exposure: Exposure::Direct,
            namespace: match tool {
                SessionTool::Mcp(mcp) => namespace_of(mcp),
                _ => None,
            },
            guidelines: guidelines(tool),
        })
        .collect();
    for tool in mcp_tools {
        if matches!(tool.kind, McpToolKind::Search)
            || matches!(tool.exposure, Exposure::Direct | Exposure::Hidden)
            || callable.iter().any(|c| c.name() == tool.name)
        {
            continue;
        }
        callable.push(Callable {
            exposure: tool.exposure,
            namespace: namespace_of(&tool),
            guidelines: Vec::new(),
            tool: SessionTool::Mcp(tool),
        });
    }
    callable
}

/// pi's description's first part.
const DESCRIPTION_INTRO: &str = "Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as an async function body in a QuickJS sandbox: top-level `await` and `return` work. No Node, file system, network, or timers.
- `await tools.<name>({ ...args })` resolves to a string, or an object if the tool's declaration says so, and rejects with an Error on failure. A tool whose declaration returns an object resolves on failure too when it returned that object; check its fields. Calls still running when the script ends are cancelled.
- Optional first line: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`";

/// pi's globals, one line each (without `models`, which pith does not have).
const DESCRIPTION_GLOBALS: &str = "Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)`, and top-level `return` add output; `exit()` ends the script. With several text items, each starts with a `==> text N/M <==` line, and `console` lines follow the other output in one `<console_output>` block. `image()` also saves the image to a temp file and the result names its path.
- `store(key, value)` and `load(key)` keep JSON values across codemode calls.
- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find unlisted tools, such as MCP tools.";

/// The prompt snippet and guideline of `codemode` (pi's).
pub const PROMPT_SNIPPET: &str = "Run JavaScript that calls other tools";
/// `codemode`'s prompt guideline (pi's).
pub const PROMPT_GUIDELINE: &str = "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls.";

/// One listed tool's section: `### \`id\`` (and the raw name when it differs) and its sample.
fn section(tool: &Callable) -> String {
    let id = to_identifier(tool.name());
    let heading = if id == tool.name() {
        format!("### `{id}`")
    } else {
        format!("### `{id}` (`{}`)", tool.name())
    };
    format!("{heading}\n{}", tool.sample().trim())
}

/// pi's `createCodemodeDescription` over the `listed` tools: deferred tools are never listed;
/// sections are grouped by namespace (tools without one first) and picked to fit `budget`
/// estimated tokens, each group placing its cheapest remaining tool per round.
pub fn description(listed: &[&Callable], budget: usize) -> String {
    struct Group<'a> {
        namespace: Option<&'a Namespace>,
        entries: Vec<(String, String, usize)>,
    }
    let declarations: Vec<&&Callable> = listed
        .iter()
        .filter(|tool| tool.exposure != Exposure::Deferred && tool.exposure != Exposure::Codemode)
        .collect();
    let mut sections = vec![
        DESCRIPTION_INTRO.to_string(),
        DESCRIPTION_GLOBALS.to_string(),
    ];
    if declarations.is_empty() {
        return sections.join("\n\n");
    }
    let mut groups: Vec<Group> = vec![Group {
        namespace: None,
        entries: Vec::new(),
    }];
    for tool in &declarations {
        let text = section(tool);
        let cost = text.chars().count().div_ceil(4);
        let index = match &tool.namespace {
            None => 0,
            Some(namespace) => match groups
                .iter()
                .position(|g| g.namespace.is_some_and(|n| n.name == namespace.name))
            {
                Some(index) => index,
                None => {
                    groups.push(Group {
                        namespace: Some(namespace),
                        entries: Vec::new(),
                    });
                    groups.len() - 1
                }
            },
        };
        groups[index]
            .entries
            .push((tool.name().to_string(), text, cost));
    }
    groups[1..].sort_by(|a, b| {
        let name = |g: &Group| g.namespace.map(|n| n.name.clone()).unwrap_or_default();
        name(a).cmp(&name(b))
    });
    // pi's selectCatalog.
    let mut shown: Vec<String> = Vec::new();
    let mut queues: Vec<Vec<(String, usize)>> = groups
        .iter()
        .map(|g| {
            let mut queue: Vec<(String, usize)> =
                g.entries.iter().map(|(n, _, c)| (n.clone(), *c)).collect();
            queue.sort_by_key(|(_, cost)| *cost);
            queue
        })
        .filter(|q| !q.is_empty())
        .collect();
    let mut remaining = budget;
    while !queues.is_empty() {
        queues.retain_mut(|queue| {
            let (name, cost) = &queue[0];
            if *cost > remaining {
                return false;
            }
            remaining -= cost;
            shown.push(name.clone());
            queue.remove(0);
            !queue.is_empty()
        });
    }
    let mut tool_sections = vec!["Nested tools:".to_string()];
    for group in &groups {
        let visible: Vec<&(String, String, usize)> = group
            .entries
            .iter()
            .filter(|(name, ..)| shown.contains(name))
            .collect();
        if let Some(namespace) = group.namespace {
            let listing = if visible.len() == group.entries.len() {
                ""
            } else if visible.is_empty() {
                " (tools not listed)"
            } else {
                " (some tools not listed)"
            };
            let about = namespace
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| format!("\n{d}"))
                .unwrap_or_default();
            tool_sections.push(format!("## {}{listing}{about}", namespace.name));
        }
        for (_, text, _) in visible {
            tool_sections.push(text.clone());
        }
    }
    sections.push(tool_sections.join("\n\n"));
    sections.join("\n\n")
}

/// A declared tool's description with how scripts call it (mode `on`).
pub fn described_for_scripts(tool: &Callable) -> String {
    let output = tool.output_schema();
    let resolves = match &output {
        None => "a string".to_string(),
        Some(schema) => describe_output_line(tool.name(), schema),
    };
    format!(
        "{}\n\nCodemode: `tools.{}(args)` resolves to {resolves}.",
        tool.tool.description().trim(),
        to_identifier(tool.name())
    )
}

/// The `codemode` definition for `callable` tools under `settings`.
pub fn definition(callable: &[Callable], settings: &CodemodeSettings) -> CodemodeDefinition {
    let listed: Vec<&Callable> = match settings.mode {
        Mode::Only => callable.iter().collect(),
        Mode::On => callable
            .iter()
            .filter(|tool| tool.exposure != Exposure::Direct)
            .collect(),
    };
    CodemodeDefinition {
        description: description(&listed, settings.inline_budget),
        parameters: json!({
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
            "required": ["code"],
        }),
    }
}

/// A tool's prompt guidelines (plugin and extension tools declare them).
pub fn guidelines_of(tool: &SessionTool) -> Vec<String> {
    match tool {
        SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => {
            spec.prompt_guidelines.clone()
        }
        _ => Vec::new(),
    }
}

/// `tool` with another description.
fn redescribed(tool: &SessionTool, description: String) -> SessionTool {
    let mut tool = tool.clone();
    match &mut tool {
        SessionTool::Plugin(spec, _) | SessionTool::Extension(spec, _) => {
            spec.description = description
        }
        SessionTool::Host(definition) => definition.description = description,
        SessionTool::Mcp(mcp) => mcp.description = description,
        SessionTool::Codemode(definition) => definition.description = description,
    }
    tool
}

/// The offered `tools` with `codemode` on (pi's loadout): in mode `on` the declared tools
/// scripts may call say how; in mode `only` their declarations are left out and `codemode`
/// lists them. `mcp_tools` are every MCP tool (the undeclared ones are callable too).
pub fn offer(
    tools: Vec<SessionTool>,
    mcp_tools: Vec<McpTool>,
    settings: &CodemodeSettings,
) -> Vec<SessionTool> {
    let callable = callable(&tools, mcp_tools, &guidelines_of);
    let definition = definition(&callable, settings);
    let mut offered: Vec<SessionTool> = tools
        .iter()
        .filter_map(|tool| {
            let script_callable = callable
                .iter()
                .find(|c| c.name() == tool.name() && c.exposure == Exposure::Direct);
            match (script_callable, settings.mode) {
                (Some(_), Mode::Only) => None,
                (Some(callable), Mode::On) => {
                    Some(redescribed(tool, described_for_scripts(callable)))
                }
                (None, _) => Some(tool.clone()),
            }
        })
        .collect();
    offered.push(SessionTool::Codemode(definition));
    offered
}

/// pi's `describeOutput`: what a call resolves to in one line.
fn describe_output_line(name: &str, schema: &Value) -> String {
    let rendered = declaration::render_output_type(Some(schema));
    if rendered == "string" {
        return "a string".into();
    }
    if let Some(fields) =
        describe_fields(schema, schema, 1).or_else(|| describe_union_fields(schema, schema))
    {
        return format!("`{fields}`");
    }
    if !rendered.contains('\n') {
        return format!("`{rendered}`");
    }
    format!(
        "a value; `await describeTool({})` shows its type",
        Value::String(name.to_string())
    )
}

/// pi's `followRef`: the subschema a local `$ref` chain names.
fn follow_ref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..32 {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match declaration::resolve_schema_ref(reference, root) {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

/// pi's `describeFields`: `{ a, b?, c: { d } }`.
fn describe_fields(schema: &Value, root: &Value, depth: u32) -> Option<String> {
    let resolved = follow_ref(schema, root);
    if resolved.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let properties = resolved.get("properties")?.as_object()?;
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, field)| {
            let constant = follow_ref(field, root).get("const");
            let nested = match constant {
                Some(value) => Some(value.to_string()),
                None if depth > 0 => describe_fields(field, root, depth - 1),
                None => None,
            };
            format!(
                "{name}{}{}",
                if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                },
                nested.map(|n| format!(": {n}")).unwrap_or_default()
            )
        })
        .collect();
    Some(format!("{{ {} }}", fields.join(", ")))
}

/// pi's `describeUnionFields`.
fn describe_union_fields(schema: &Value, root: &Value) -> Option<String> {
    let resolved = follow_ref(schema, root);
    let variants = resolved
        .get("anyOf")
        .or_else(|| resolved.get("oneOf"))?
        .as_array()?;
    if variants.is_empty() {
        return None;
    }
    let described: Option<Vec<String>> = variants
        .iter()
        .map(|variant| describe_fields(variant, root, 0))
        .collect();
    described.map(|d| d.join(" | "))
}
