//! `export_html`: the conversation as one self-contained HTML page (no network, no scripts):
//! user and assistant messages, reasoning folded, tool calls with their arguments and results,
//! images inline, and the model and totals at the top.

use super::message::{AgentMessage, AssistantBlock};
use super::model::Model;
use super::session_file::SessionFile;
use crate::content::Content;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

fn content_html(content: &[Content]) -> String {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text } => format!("<pre>{}</pre>", escape(text)),
            Content::Image { data, mime_type } => format!(
                "<img alt=\"image\" src=\"data:{};base64,{}\">",
                escape(mime_type),
                escape(data)
            ),
        })
        .collect()
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fafafa}\
header{border-bottom:1px solid #ddd;margin-bottom:1.5rem}h1{font-size:1.4rem;margin:0 0 .3rem}\
.meta{color:#666;font-size:.85rem}.msg{margin:1rem 0;padding:.7rem 1rem;border-radius:8px;background:#fff;border:1px solid #e5e5e5}\
.user{border-left:4px solid #2b6cb0}.assistant{border-left:4px solid #2f855a}.tool{border-left:4px solid #b7791f;font-size:.9rem}\
.error{border-left-color:#c53030;background:#fff5f5}.role{font-weight:600;font-size:.8rem;text-transform:uppercase;color:#555}\
pre{white-space:pre-wrap;word-wrap:break-word;margin:.3rem 0;font:13px/1.45 ui-monospace,monospace}\
details{color:#555}img{max-width:100%}code{font:13px ui-monospace,monospace}";

/// Renders the page.
pub fn render(
    store: &SessionFile,
    name: Option<&str>,
    messages: &[AgentMessage],
    model: Option<&Model>,
) -> String {
    let (mut input, mut output, mut cost) = (0u64, 0u64, 0f64);
    let mut body = String::new();
    for message in messages {
        match message {
            AgentMessage::System(system) => {
                let tools: Vec<&str> = system.tools_added.iter().map(|t| t.name.as_str()).collect();
                body.push_str(&format!(
                    "<details class=\"msg\"><summary class=\"role\">System prompt · tools: {}</summary><pre>{}</pre></details>\n",
                    escape(&tools.join(", ")),
                    escape(&system.sections.prompt())
                ));
            }
            AgentMessage::User(user) => {
                body.push_str(&format!(
                    "<div class=\"msg user\"><div class=\"role\">User</div>{}</div>\n",
                    content_html(&user.content.blocks())
                ));
            }
            AgentMessage::Assistant(a) => {
                input += a.usage.input + a.usage.cache_read + a.usage.cache_write;
                output += a.usage.output;
                cost += a.usage.cost.total;
                let error = a.error_message.is_some();
                body.push_str(&format!(
                    "<div class=\"msg assistant{}\"><div class=\"role\">Assistant · {}</div>",
                    if error { " error" } else { "" },
                    escape(&a.model)
                ));
                for block in &a.content {
                    match block {
                        AssistantBlock::Text { text, .. } => {
                            body.push_str(&format!("<pre>{}</pre>", escape(text)))
                        }
                        AssistantBlock::Thinking { thinking, .. } => body.push_str(&format!(
                            "<details><summary>Thinking</summary><pre>{}</pre></details>",
                            escape(thinking)
                        )),
                        AssistantBlock::ToolCall {
                            name, arguments, ..
                        } => body.push_str(&format!(
                            "<div class=\"call\">→ <code>{}</code><pre>{}</pre></div>",
                            escape(name),
                            escape(&serde_json::to_string_pretty(arguments).unwrap_or_default())
                        )),
                    }
                }
                if let Some(message) = &a.error_message {
                    body.push_str(&format!("<pre>{}</pre>", escape(message)));
                }
                body.push_str("</div>\n");
            }
            AgentMessage::ToolResult(result) => {
                body.push_str(&format!(
                    "<div class=\"msg tool{}\"><div class=\"role\">Result · {}</div>{}</div>\n",
                    if result.is_error { " error" } else { "" },
                    escape(&result.tool_name),
                    content_html(&result.content)
                ));
            }
            AgentMessage::BashExecution(bash) => {
                body.push_str(&format!(
                    "<div class=\"msg tool\"><div class=\"role\">$ {}</div><pre>{}</pre></div>\n",
                    escape(&bash.command),
                    escape(&bash.output)
                ));
            }
            AgentMessage::CompactionSummary(summary) => {
                body.push_str(&format!("<div class=\"msg\"><div class=\"role\">Summary of earlier conversation</div><pre>{}</pre></div>\n", escape(&summary.summary)));
            }
            AgentMessage::BranchSummary(summary) => {
                body.push_str(&format!("<div class=\"msg\"><div class=\"role\">Branch summary</div><pre>{}</pre></div>\n", escape(&summary.summary)));
            }
            AgentMessage::Custom(custom) if custom.display => {
                let text = custom
                    .content
                    .as_str()
                    .map_or_else(|| custom.content.to_string(), str::to_string);
                body.push_str(&format!(
                    "<div class=\"msg\"><div class=\"role\">{}</div><pre>{}</pre></div>\n",
                    escape(&custom.custom_type),
                    escape(&text)
                ));
            }
            AgentMessage::Custom(_) => {}
        }
    }
    let title = name.map_or_else(|| format!("Session {}", store.id()), str::to_string);
    let model = model.map_or_else(
        || "no model".to_string(),
        |m| format!("{}/{}", m.provider, m.id),
    );
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head><body>\n<header><h1>{title}</h1><div class=\"meta\">{model} · {} messages · {input} tokens in, {output} out · ${cost:.4}</div></header>\n{body}</body></html>\n",
        messages.len(),
        title = escape(&title),
        model = escape(&model),
    )
}
