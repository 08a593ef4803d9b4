//! An example skill pack: one skill, its instructions compiled into the component.

use pith_sdk::skill::{SkillInfo, SkillPack};

struct Skills;

impl SkillPack for Skills {
    fn skills() -> Vec<SkillInfo> {
        vec![SkillInfo {
            name: "commit-message".into(),
            description: "Write a conventional commit message for the staged changes".into(),
            disable_model_invocation: false,
        }]
    }

    fn load(name: &str) -> Result<String, String> {
        match name {
            "commit-message" => Ok("Run `git diff --staged`, then write a one-line summary in the imperative mood, a blank line, and a short body explaining why.".into()),
            other => Err(format!("no skill named {other}")),
        }
    }
}

pith_sdk::export_skills!(Skills);
