//! An example prompt-template pack: `/review <path>`.

use pith_sdk::prompt_template::{PromptTemplates, TemplateInfo};

struct Templates;

impl PromptTemplates for Templates {
    fn templates() -> Vec<TemplateInfo> {
        vec![TemplateInfo {
            name: "review".into(),
            description: "Review a file for bugs and unclear code".into(),
        }]
    }

    fn expand(name: &str, args: &[String]) -> Result<String, String> {
        match name {
            "review" => Ok(format!(
                "Review {} for bugs, unclear names and missing tests. List findings by severity.",
                args.join(" ")
            )),
            other => Err(format!("no template named {other}")),
        }
    }
}

pith_sdk::export_prompt_templates!(Templates);
